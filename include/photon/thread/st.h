/* State Threads (https://state-threads.sourceforge.net) emulated on photon,
 * as PhotonLibOS's photon/thread/st.h declares it: a C API whose threads are
 * photon coroutines and whose I/O parks the calling coroutine.
 *
 * Call st_init() first on each OS thread that runs ST code (it makes the
 * thread a vCPU with an event engine; photon::fini() ends it). Every call
 * acts on the calling vCPU; st_cond_signal/broadcast and
 * st_thread_interrupt may target another vCPU's coroutines. Calls that wait
 * (sleep, join, cond wait, mutex lock, netfd I/O) park the calling coroutine
 * and fail with EINTR when it is interrupted. Failures return -1 or NULL
 * with errno; timeouts give ETIMEDOUT (as Photon's; State Threads used ETIME).
 * Timeouts are in microseconds, ST_UTIME_NO_TIMEOUT for none.
 */
// Differences from PhotonLibOS: doc/compat.md#threadsth
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#ifndef __STATE_THREADS__
#define __STATE_THREADS__
#include <time.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sockaddr;
struct iovec;
struct msghdr;
struct pollfd;

typedef void* st_thread_t;
typedef void* st_cond_t;
typedef void* st_mutex_t;
typedef void* st_netfd_t;
typedef unsigned long long st_utime_t;

#ifndef ST_UTIME_NO_TIMEOUT
#define ST_UTIME_NO_TIMEOUT ((st_utime_t)-1LL)
#endif
#ifndef ST_UTIME_NO_WAIT
#define ST_UTIME_NO_WAIT 0
#endif

/* Event systems: ST_EVENTSYS_IOURING gives io_uring, the others epoll. */
#define ST_EVENTSYS_DEFAULT 0
#define ST_EVENTSYS_SELECT 1
#define ST_EVENTSYS_POLL 2
#define ST_EVENTSYS_ALT 3
#define ST_EVENTSYS_IOURING 4

/* Chooses the event system for later st_init() calls; -1 EINVAL if unknown. */
int st_set_eventsys(int eventsys);
int st_get_eventsys(void);
/* Makes the calling OS thread a vCPU with an event engine; 0 if it already
 * is one. -1 with errno if the engine cannot be had. */
int st_init(void);
/* The hard limit on open fds (INT_MAX if unlimited); -1 with errno. */
int st_getfdlimit(void);
/* "io_uring" or "epoll": this vCPU's engine, else the one st_init would
 * ask for. */
const char* st_get_eventsys_name(void);

/* A coroutine running start(arg); joinable ones must be st_thread_join()ed.
 * stack_size 0: photon's default. NULL with EINVAL / ENOMEM / ENOSYS. */
st_thread_t st_thread_create(void* (*start)(void* arg), void* arg, int joinable, int stack_size);
void st_thread_exit(void* retval);
/* Waits for a joinable st_thread_create() coroutine and frees it; 0, or -1
 * with EINVAL (not such a coroutine, or joined already) or EDEADLK (itself). */
int st_thread_join(st_thread_t thread, void** retvalp);
st_thread_t st_thread_self(void);
/* Makes the coroutine's current or next wait fail with EINTR. */
void st_thread_interrupt(st_thread_t thread);
/* 0 after the time (-1 secs / ST_UTIME_NO_TIMEOUT: until interrupted), or
 * -1 with EINTR. */
int st_sleep(int secs);
int st_usleep(st_utime_t usecs);
/* Accepted and ignored (stacks are photon's); returns the previous setting. */
int st_randomize_stacks(int on);
/* Coroutine-local keys; the destructor runs when a coroutine ends with a
 * non-NULL value. -1 with EAGAIN when st_key_getlimit() keys exist. */
int st_key_create(int* keyp, void (*destructor)(void*));
int st_key_getlimit(void);
/* -1 with EINVAL for a key st_key_create() did not return. */
int st_thread_setspecific(int key, void* value);
void* st_thread_getspecific(int key);

/* Condition variables without a mutex (coroutines switch only when they
 * wait): timedwait returns 0 when signalled, -1 with ETIMEDOUT or EINTR. */
st_cond_t st_cond_new(void);
int st_cond_destroy(st_cond_t cvar);
int st_cond_wait(st_cond_t cvar);
int st_cond_timedwait(st_cond_t cvar, st_utime_t timeout);
int st_cond_signal(st_cond_t cvar);
int st_cond_broadcast(st_cond_t cvar);

/* Sleeping mutexes: lock fails with EDEADLK for the owner and EINTR when
 * interrupted, trylock with EBUSY, unlock with EPERM for a non-owner. */
st_mutex_t st_mutex_new(void);
int st_mutex_destroy(st_mutex_t lock);
int st_mutex_lock(st_mutex_t lock);
int st_mutex_trylock(st_mutex_t lock);
int st_mutex_unlock(st_mutex_t lock);

/* Wall-clock seconds; st_utime() microseconds of photon's monotonic clock,
 * or of the function set with st_set_utime_function (NULL: back to it). */
time_t st_time(void);
st_utime_t st_utime(void);
int st_set_utime_function(st_utime_t (*func)(void));
/* Accepted and ignored; returns the previous setting. */
int st_timecache_set(int on);

/* fd objects. open/open_socket make the fd non-blocking (NULL with errno,
 * e.g. EBADF); close closes the fd and frees the object, free only frees it
 * (both run the specific data's destructor). The I/O calls park until the fd
 * is ready or the timeout, which covers the whole call. */
st_netfd_t st_netfd_open(int osfd);
st_netfd_t st_netfd_open_socket(int osfd);
void st_netfd_free(st_netfd_t fd);
int st_netfd_close(st_netfd_t fd);
int st_netfd_fileno(st_netfd_t fd);
void st_netfd_setspecific(st_netfd_t fd, void* value, void (*destructor)(void*));
void* st_netfd_getspecific(st_netfd_t fd);
/* A no-op on Linux; returns 0. */
int st_netfd_serialize_accept(st_netfd_t fd);
/* Waits until fd has one of `how` (POLLIN, POLLOUT, POLLPRI): 0, or -1 with
 * ETIMEDOUT, EINTR, EBADF (fd closed) or EINVAL. */
int st_netfd_poll(st_netfd_t fd, int how, st_utime_t timeout);
st_netfd_t st_accept(st_netfd_t fd, struct sockaddr* addr, int* addrlen, st_utime_t timeout);
int st_connect(st_netfd_t fd, const struct sockaddr* addr, int addrlen, st_utime_t timeout);
/* One read: bytes read (0 at EOF) or -1. */
ssize_t st_read(st_netfd_t fd, void* buf, size_t nbyte, st_utime_t timeout);
/* Reads until nbyte or EOF: bytes read, or -1. */
ssize_t st_read_fully(st_netfd_t fd, void* buf, size_t nbyte, st_utime_t timeout);
/* As read_fully; *resid: bytes still unread. 0, or -1 with errno. */
int st_read_resid(st_netfd_t fd, void* buf, size_t* resid, st_utime_t timeout);
ssize_t st_readv(st_netfd_t fd, const struct iovec* iov, int iov_size, st_utime_t timeout);
/* Reads until the vector is full or EOF, advancing *iov / *iov_size (and the
 * first remaining entry) past what was read. 0, or -1 with errno. */
int st_readv_resid(st_netfd_t fd, struct iovec** iov, int* iov_size, st_utime_t timeout);
/* Writes everything: nbyte (the vector's total), or -1. */
ssize_t st_write(st_netfd_t fd, const void* buf, size_t nbyte, st_utime_t timeout);
int st_write_resid(st_netfd_t fd, const void* buf, size_t* resid, st_utime_t timeout);
ssize_t st_writev(st_netfd_t fd, const struct iovec* iov, int iov_size, st_utime_t timeout);
int st_writev_resid(st_netfd_t fd, struct iovec** iov, int* iov_size, st_utime_t timeout);
/* One datagram / message each; sends never raise SIGPIPE. */
int st_recvfrom(st_netfd_t fd, void* buf, int len, struct sockaddr* from, int* fromlen,
                st_utime_t timeout);
int st_sendto(st_netfd_t fd, const void* msg, int len, struct sockaddr* to, int tolen,
              st_utime_t timeout);
int st_recvmsg(st_netfd_t fd, struct msghdr* msg, int flags, st_utime_t timeout);
int st_sendmsg(st_netfd_t fd, const struct msghdr* msg, int flags, st_utime_t timeout);
/* open(2) with O_NONBLOCK added, as an fd object; NULL with errno. */
st_netfd_t st_open(const char* path, int oflags, mode_t mode);
/* poll(2) parking only the coroutine: the number of fds with revents, 0 on
 * timeout, -1 with errno. npds 0 returns 0 at once (as Photon's). */
int st_poll(struct pollfd* pds, int npds, st_utime_t timeout);

#ifdef __cplusplus
}
#endif

#endif
