// The FUSE session's metrics (photon_fuse_*) over a real mount: requests by operation, the
// bytes that reads and writes moved, errno replies by kind and the request times. direct_io
// and attr_timeout=0 make every read, write and fstat reach the server. Needs /dev/fuse and
// the right to mount; skipped otherwise (the FuseMount fixture).
#include <photon/common/metric-meter/prometheus.h>

#include "../util/metrics.h"
#include "fuse_test_util.h"

using namespace photon;
using namespace photon_test;

namespace {

TEST_F(FuseMount, MetricsCountOperationsBytesAndErrnoReplies) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    ASSERT_EQ(0, ::mkdir(src("dir").c_str(), 0755));
    MOUNT({"-o", "direct_io,attr_timeout=0"});
    const std::string l =
        "{fuse=\"" + last_label(scrape(), "photon_fuse_requests_total", "fuse") + "\"";
    auto value = [&](const std::string& body, const std::string& name, const std::string& more) {
        return sample_value(body, name + l + more + "} ");
    };
    auto op = [&](const std::string& body, const char* o) {
        return value(body, "photon_fuse_requests_total", std::string(",op=\"") + o + "\"");
    };
    std::string before = scrape();
    ASSERT_EQ(0, op(before, "read"));
    ASSERT_EQ(0, value(before, "photon_fuse_written_bytes_total", ""));

    const std::string data = std::string(100000, 'x') + "end";
    int fd = ::open(mnt("file").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ((ssize_t)data.size(), ::write(fd, data.data(), data.size()));
    ::close(fd);
    fd = ::open(mnt("file").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    struct stat st;
    ASSERT_EQ(0, ::fstat(fd, &st));
    std::string got(data.size() + 10, '\0');
    size_t n = 0;
    for (ssize_t r; (r = ::read(fd, &got[n], got.size() - n)) > 0;) n += (size_t)r;
    ::close(fd);
    ASSERT_EQ(data, got.substr(0, n));
    for (int i = 0; i < 3; i++) {
        errno = 0;
        EXPECT_EQ(-1, ::stat(mnt("absent").c_str(), &st));
        EXPECT_EQ(ENOENT, errno);
    }
    if (DIR* d = ::opendir(mnt("dir").c_str())) {
        while (::readdir(d)) {
        }
        ::closedir(d);
    }
    // Releases are sent after close() returns, and a request is timed after its reply: wait
    // (bounded) for both releases and for the times of the calls above.
    std::string after;
    auto timed = [&](const std::string& b) {
        return value(b, "photon_fuse_request_seconds_count", "");
    };
    photon_test::wait_for_off_vcpu(
        [&] {
            after = scrape();
            return op(after, "release") >= 2 &&
                   timed(after) >= op(after, "read") + op(after, "write") + op(after, "lookup");
        },
        5000);

    EXPECT_EQ((long long)data.size(), value(after, "photon_fuse_written_bytes_total", "")) << after;
    EXPECT_EQ((long long)data.size(), value(after, "photon_fuse_read_bytes_total", "")) << after;
    EXPECT_GE(op(after, "create"), 1);
    EXPECT_GE(op(after, "open"), 1);
    EXPECT_GE(op(after, "write"), 1);
    EXPECT_GE(op(after, "read"), 1);
    EXPECT_GE(op(after, "getattr"), 1);
    EXPECT_GE(op(after, "lookup"), 3);  // the absent name, each time (negative_timeout=0)
    EXPECT_GE(op(after, "opendir"), 1);
    EXPECT_GE(op(after, "readdir"), 1);
    EXPECT_GE(op(after, "release"), 2);
    EXPECT_GE(value(after, "photon_fuse_errors_total", ",errno=\"enoent\""), 3);
    EXPECT_EQ(0, value(after, "photon_fuse_errors_total", ",errno=\"enomem\""));
    // Every request the server timed is a request it counted.
    long long total = 0;
    for (const char* o :
         {"lookup", "getattr", "setattr", "open", "create", "read", "write", "flush", "release",
          "opendir", "readdir", "releasedir", "statfs", "forget", "other"})
        total += op(after, o);
    EXPECT_GE(timed(after), op(after, "read") + op(after, "write") + op(after, "lookup"));
    EXPECT_LE(timed(after), total);
}

}  // namespace
