// Coroutine-local storage keys, pthread_key-style: each coroutine sees its own
// value per key; destructors run when a coroutine ends (not for the main
// coroutine of a vCPU, whose values live until photon::fini). Keys may be
// created and deleted on any thread; values are set and read by the
// coroutine itself. None of these calls yields.
//
// As Photon's (and pthread's), the int results are 0 or an error number;
// errno is set to it as well. A value set under a deleted key is never seen
// through a later key that reuses its slot.
//
// Differences from PhotonLibOS: doc/compat.md#threadthread-keyh
#pragma once

#include <cstdint>
#include <cstdlib>

#include <photon/thread/thread.h>

namespace photon {

constexpr size_t THREAD_KEYS_MAX = 1024;

struct thread_local_storage;

using thread_key_t = uint64_t;

// 0, or EAGAIN when all THREAD_KEYS_MAX keys are taken. A key is a slot
// index below THREAD_KEYS_MAX, the lowest free one (0 first), as Photon's.
int thread_key_create(thread_key_t* key, void (*dtor)(void*));
// The calling coroutine's value (nullptr if unset, the key was deleted, or
// off a vCPU).
void* thread_getspecific(thread_key_t key);
// 0, or EINVAL (deleted or unknown key), ENOMEM, ENOSYS (off a vCPU).
int thread_setspecific(thread_key_t key, const void* value);
// 0, or EINVAL. Values are not destroyed (as pthread_key_delete).
int thread_key_delete(thread_key_t key);

// Runs the destructors of the values in `*tls`, a coroutine's storage, as at
// its end, and frees it (*tls becomes nullptr). nullptr: the calling
// coroutine's own. ThreadPool workers call it between tasks.
void deallocate_tls(void** tls = nullptr);

}  // namespace photon
