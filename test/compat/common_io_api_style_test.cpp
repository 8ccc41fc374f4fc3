// Code written the way PhotonLibOS users write it, against common/alog.h,
// alog-stdstring.h, callback.h, object.h, stream.h, timeout.h, utility.h and
// io/aio-wrapper.h, fd-events.h, iouring-wrapper.h, signal.h: Photon's
// includes, names and call shapes, compiled unchanged. The functions above
// the gtest include see only what the photon headers included.
#include <photon/photon.h>
#include <photon/common/alog.h>
#include <photon/common/alog-stdstring.h>
#include <photon/common/callback.h>
#include <photon/common/estring.h>
#include <photon/common/object.h>
#include <photon/common/stream.h>
#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/io/aio-wrapper.h>
#include <photon/io/fd-events.h>
#include <photon/io/iouring-wrapper.h>
#include <photon/io/signal.h>
#include <photon/thread/thread.h>

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <string>

namespace {

// An output that keeps the last line, as Photon's own alog test does.
class LastLine : public ILogOutput {
public:
    std::string line;
    int level = -100;
    void write(int l, const char* begin, const char* end) override {
        line.assign(begin, end);
        level = l;
    }
    int get_log_file_fd() override { return -1; }
    uint64_t set_throttle(uint64_t t = -1ULL) override { return t; }
    uint64_t get_throttle() override { return -1ULL; }
    void destruct() override {}
    int set_level_color(int level, unsigned char code) override { return 0; }
    // The message: what follows "func:" of the header, without the newline.
    std::string message() const {
        size_t at = 0;
        for (int i = 0; i < 4; i++) at = line.find('|', at) + 1;
        at = line.find(':', at) + 1;
        return line.substr(at, line.size() - at - 1);
    }
};

LastLine captured;

// Formatting as Photon programs spell it; returns the messages joined by '|'.
std::string alog_round() {
    auto saved = log_output;
    log_output = &captured;
    DEFER(log_output = saved);
    std::string all;
    LOG_INFO("copied ` bytes to `", DEC(1234567).comma(true), std::string("/data"));
    all += captured.message() + '|';
    ALogLogger other{&captured, ALOG_DEBUG};
    other << LOG_DEBUG(HEX(255).width(4), ' ', VALUE(all.size()));
    all += captured.message() + '|';
    LOG_WARN(ALogString("abc\0def", 5), ' ', ALogStringL("lit"), ' ', FP(2.5).width(6, 2));
    all += captured.message() + '|';
    estring es = "estr";
    estring_view ev = es;
    LOG_INFO(es, ' ', ev.substr(1), ' ', std::string_view("view"));
    all += captured.message();
    return all;
}

int fails_with_einval() {
    DECLARE_ERRNO_SETTER;
    DEFER(errno = EIO);  // a cleanup that clobbers errno
    LOG_ERROR_RETURN(EINVAL, -1, "bad argument ", 42);
}

// A stream over a string, as users subclass IStream.
class StringStream : public IStream {
public:
    explicit StringStream(std::string s) : data_(std::move(s)) {}
    int close() override { return 0; }
    ssize_t read(void* buf, size_t n) override {
        n = std::min(n, data_.size() - pos_);
        memcpy(buf, data_.data() + pos_, n);
        pos_ += n;
        return n;
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return iovcnt ? read(iov[0].iov_base, iov[0].iov_len) : 0;
    }
    ssize_t write(const void* buf, size_t n) override {
        data_.append((const char*)buf, n);
        return n;
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return iovcnt ? write(iov[0].iov_base, iov[0].iov_len) : 0;
    }

private:
    std::string data_;
    size_t pos_ = 0;
};

std::string stream_round() {
    StringStream s("hello");
    IStream::FuncIO f = s._and_write();
    (s.*f)((void*)" world", 6);
    auto all = s.readall();
    if (all.size <= 0) return "";
    return std::string((char*)all.ptr.get(), all.size);
}

struct Server : public Object {
    int port = 0;
    int init(int p) { return p > 0 ? (port = p, 0) : -1; }
    int on_accept(int fd) { return fd + port; }
};

int utility_round() {
    Server* s = NewObj<Server>()->init(80);
    if (!s) return -1;
    DEFER(delete s);
    Callback<int> cb(s, &Server::on_accept);
    int sum = 0;
    for (auto i : xrange(3)) sum += cb(i);  // 80 + 81 + 82
    FOR_LOOP(2) sum += i;                   // + 2 + 1
    ALIGNED_MEM4K(page, 100);
    if ((uint64_t)page != align_up((uint64_t)page, 4096)) return -2;
    int rc;
    if (version_compare("5.15.2", "5.4", rc) != 0 || rc <= 0) return -3;
    return sum;
}

int64_t closure_round() {
    int64_t last = 0;
    auto task = new auto([&last](int x) -> int64_t {
        last = x;
        return photon::DELETE_CLOSURE;
    });
    photon::Closure<int> c(task);
    return c(7) == photon::DELETE_CLOSURE ? last : -1;
}

// fd events as Photon code waits on them: the master engine and a cascading one.
int fd_events_round() {
    int fds[2];
    if (pipe2(fds, O_NONBLOCK) < 0) return -1;
    DEFER(close(fds[0]); close(fds[1]));
    auto ce = photon::new_default_cascading_engine();
    if (!ce) return -2;
    DEFER(delete ce);
    ce->add_interest({fds[0], photon::EVENT_READ, (void*)0x1});
    if (photon::wait_for_fd_readable(fds[0], 1000) != -1 || errno != ETIMEDOUT) return -3;
    if (::write(fds[1], "x", 1) != 1) return -4;
    if (photon::wait_for_fd_readable(fds[0], photon::Timeout(1000 * 1000)) != 0) return -5;
    void* data[2];
    return ce->wait_for_events(data, 2, 1000 * 1000) == 1 && data[0] == (void*)0x1 ? 0 : -6;
}

// File I/O through the engine adaptors, picked by template as Photon's localfs does.
template <typename IO>
std::string adaptor_round(int fd) {
    if (IO::pwrite(fd, "engine", 6, 0) != 6) return "";
    if (IO::fdatasync(fd) != 0) return "";
    char buf[8] = {};
    if (IO::pread(fd, buf, 6, 0) != 6) return "";
    return buf;
}

volatile int signals_seen = 0;
void on_usr1(int) { signals_seen = signals_seen + 1; }

}  // namespace

#include <gtest/gtest.h>

namespace {

class CommonIoStyle : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE));
    }
    void TearDown() override { EXPECT_EQ(0, photon::fini()); }
};

TEST_F(CommonIoStyle, AlogFormatsAsPhotonPrograms) {
    EXPECT_EQ(std::string("copied 1,234,567 bytes to /data|00FF [all.size()=32]|abc") + '\0' +
                  "d lit   2.50|estr str view",
              alog_round());
    EXPECT_EQ(ALOG_INFO, captured.level);
}

TEST_F(CommonIoStyle, ErrnoSetterAndLogReturn) {
    auto saved = log_output;
    log_output = log_output_null;
    EXPECT_EQ(-1, fails_with_einval());
    log_output = saved;
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(CommonIoStyle, StreamsCallbacksAndUtilities) {
    EXPECT_EQ("hello world", stream_round());
    EXPECT_EQ(80 + 81 + 82 + 2 + 1, utility_round());
    EXPECT_EQ(7, closure_round());
    photon::Timeout t(1000 * 1000);
    EXPECT_FALSE(t.expired());
    EXPECT_LE(t.timeout_ms(), 1000u);
}

TEST_F(CommonIoStyle, FdEventsOnTheMasterAndACascadingEngine) { EXPECT_EQ(0, fd_events_round()); }

TEST_F(CommonIoStyle, PosixaioAndIouringAdaptors) {
    char path[] = "/tmp/photon-compat-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    unlink(path);
    EXPECT_EQ("engine", adaptor_round<photon::posixaio>(fd));
    EXPECT_EQ(0, photon::posixaio_fsync(fd));
    auto probe = photon::new_iouring_master_engine();
    if (probe) {  // the epoll vCPU uses a sidecar ring
        delete probe;
        EXPECT_EQ("engine", adaptor_round<photon::iouring>(fd));
    }
    EXPECT_EQ(0, photon::posixaio::close(fd));
}

TEST_F(CommonIoStyle, SyncSignalRunsTheHandlerInACoroutine) {
    ASSERT_EQ(0, photon::sync_signal_init());
    photon::sync_signal(SIGUSR1, &on_usr1);
    // To this thread: helper threads started by earlier tests do not block it.
    ASSERT_EQ(0, raise(SIGUSR1));
    for (int i = 0; i < 1000 && signals_seen == 0; ++i) photon::thread_usleep(1000);
    EXPECT_EQ(1, signals_seen);
    photon::sync_signal(SIGUSR1, SIG_IGN);
    EXPECT_EQ(0, photon::sync_signal_fini());
}

}  // namespace
