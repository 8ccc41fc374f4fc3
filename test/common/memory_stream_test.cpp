// photon/common/memory-stream/memory-stream.h: whole-count blocking reads
// and writes through a small ring, close and interrupt semantics of the
// simplex and duplex streams (also across vCPUs), bad input, the fault
// stream's injection rate, and StringSocketStream.
#include <photon/common/memory-stream/memory-stream.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class MemoryStreamTest : public VcpuTest {};

const char kLetters[] = "abcdefghijklmnopqrstuvwxyz";
const size_t kLettersLen = sizeof(kLetters) - 1;

std::string read_n(IStream* s, size_t n) {
    std::string out(n, '\0');
    ssize_t r = s->read(&out[0], n);
    out.resize(r < 0 ? 0 : (size_t)r);
    return out;
}

TEST_F(MemoryStreamTest, ASimplexStreamReadsBackWhatIsWrittenThroughASmallBuffer) {
    std::unique_ptr<IStream> s(new_simplex_memory_stream(16));
    ASSERT_TRUE(s);
    auto writer = spawn([&] {
        for (int round = 0; round < 2; round++) {
            for (size_t i = 0; i < kLettersLen;) {
                size_t len = std::min<size_t>(1 + (i * 7 + round) % 8, kLettersLen - i);
                ASSERT_EQ((ssize_t)len, s->write(kLetters + i, len));
                i += len;
            }
        }
    });
    std::string got = read_n(s.get(), 13);
    got += read_n(s.get(), 26);
    got += read_n(s.get(), 13);
    writer.join();
    EXPECT_EQ(std::string(kLetters) + kLetters, got);
}

TEST_F(MemoryStreamTest, AReadWaitsForItsWholeCount) {
    std::unique_ptr<IStream> s(new_simplex_memory_stream(64));
    std::string got;
    auto reader = spawn([&] { got = read_n(s.get(), 10); });
    ASSERT_TRUE(until_sleeping(reader.th));
    ASSERT_EQ(4, s->write("0123", 4));
    run_others();
    EXPECT_EQ(photon::SLEEPING, photon::thread_stat(reader.th));
    ASSERT_EQ(6, s->write("456789", 6));
    reader.join();
    EXPECT_EQ("0123456789", got);
    EXPECT_EQ(0, s->read(nullptr, 0));
}

TEST_F(MemoryStreamTest, AWriteWaitsWhileTheBufferIsFull) {
    std::unique_ptr<IStream> s(new_simplex_memory_stream(4));
    ssize_t wrote = -2;
    auto writer = spawn([&] { wrote = s->write(kLetters, 10); });
    ASSERT_TRUE(until_sleeping(writer.th));
    EXPECT_EQ(-2, wrote);
    EXPECT_EQ("abcdefghij", read_n(s.get(), 10));
    writer.join();
    EXPECT_EQ(10, wrote);
}

TEST_F(MemoryStreamTest, VectoredCallsWrapAroundTheRing) {
    std::unique_ptr<IStream> s(new_simplex_memory_stream(7));
    char a[] = "hello, ", b[] = "", c[] = "vectored world";
    struct iovec out[] = {{a, strlen(a)}, {b, 0}, {c, strlen(c)}};
    ssize_t wrote = 0;
    auto writer = spawn([&] { wrote = s->writev(out, 3); });
    char x[5], y[16];
    struct iovec in[] = {{x, sizeof(x)}, {y, sizeof(y)}};
    ASSERT_EQ(21, s->readv(in, 2));
    writer.join();
    EXPECT_EQ(21, wrote);
    EXPECT_EQ("hello, vectored world", std::string(x, 5) + std::string(y, 16));
}

TEST_F(MemoryStreamTest, DuplexEndpointsTalkBothWays) {
    std::unique_ptr<DuplexMemoryStream> d(new_duplex_memory_stream(8));
    ASSERT_TRUE(d);
    auto a = d->endpoint_a, b = d->endpoint_b;
    ASSERT_EQ(4, a->write("ping", 4));
    ASSERT_EQ(4, b->write("pong", 4));
    EXPECT_EQ("ping", read_n(b, 4));
    EXPECT_EQ("pong", read_n(a, 4));
}

TEST_F(MemoryStreamTest, ClosingAnEndpointEndsThePeersStreamAfterTheBufferedBytes) {
    std::unique_ptr<DuplexMemoryStream> d(new_duplex_memory_stream(8));
    auto a = d->endpoint_a, b = d->endpoint_b;
    ASSERT_EQ(3, a->write("abc", 3));
    EXPECT_EQ(0, a->close());
    EXPECT_EQ(0, a->close());         // again: still 0, as Photon
    EXPECT_EQ("abc", read_n(b, 10));  // short: end of stream
    char c;
    EXPECT_EQ(0, b->read(&c, 1));
    errno = 0;
    EXPECT_EQ(-1, b->write("x", 1));
    EXPECT_EQ(EPIPE, errno);
    errno = 0;
    EXPECT_EQ(-1, a->read(&c, 1));
    EXPECT_EQ(EBADF, errno);
    errno = 0;
    EXPECT_EQ(-1, a->write("x", 1));
    EXPECT_EQ(EBADF, errno);
}

TEST_F(MemoryStreamTest, CloseWakesBlockedCallsOfThePeerAndOfItsOwn) {
    std::unique_ptr<DuplexMemoryStream> d(new_duplex_memory_stream(8));
    auto a = d->endpoint_a, b = d->endpoint_b;
    ssize_t peer_read = -2, own_read = -2;
    int own_errno = 0;
    char buf1[8], buf2[8];
    auto peer = spawn([&] { peer_read = b->read(buf1, sizeof(buf1)); });
    auto own = spawn([&] {
        own_read = a->read(buf2, sizeof(buf2));
        own_errno = errno;
    });
    ASSERT_TRUE(until_sleeping(peer.th));
    ASSERT_TRUE(until_sleeping(own.th));
    ASSERT_EQ(2, a->write("hi", 2));
    run_others();
    EXPECT_EQ(-2, peer_read);  // has 2 of its 8, waits for more
    a->close();
    peer.join();
    own.join();
    EXPECT_EQ(2, peer_read);
    EXPECT_EQ("hi", std::string(buf1, 2));
    EXPECT_EQ(-1, own_read);
    EXPECT_EQ(EBADF, own_errno);
}

TEST_F(MemoryStreamTest, ClosingTheDuplexClosesBothEndpoints) {
    std::unique_ptr<DuplexMemoryStream> d(new_duplex_memory_stream(8));
    EXPECT_EQ(0, d->close());
    errno = 0;
    EXPECT_EQ(-1, d->endpoint_a->write("x", 1));
    EXPECT_EQ(EBADF, errno);
    errno = 0;
    EXPECT_EQ(-1, d->endpoint_b->write("x", 1));
    EXPECT_EQ(EBADF, errno);
}

TEST_F(MemoryStreamTest, AnInterruptedReadReturnsWhatItHasOrTheErrno) {
    std::unique_ptr<IStream> s(new_simplex_memory_stream(8));
    ssize_t r = -2;
    int e = 0;
    char buf[8];
    auto reader = spawn([&] {
        r = s->read(buf, sizeof(buf));
        e = errno;
    });
    ASSERT_TRUE(until_sleeping(reader.th));
    photon::thread_interrupt(reader.th, EINTR);
    reader.join();
    EXPECT_EQ(-1, r);
    EXPECT_EQ(EINTR, e);

    reader = spawn([&] { r = s->read(buf, sizeof(buf)); });
    ASSERT_TRUE(until_sleeping(reader.th));
    ASSERT_EQ(3, s->write("xyz", 3));
    ASSERT_TRUE(until_sleeping(reader.th));
    photon::thread_interrupt(reader.th, ETIMEDOUT);
    reader.join();
    EXPECT_EQ(3, r);
    EXPECT_EQ("xyz", std::string(buf, 3));
}

TEST_F(MemoryStreamTest, BadArgumentsFailWithEinval) {
    errno = 0;
    EXPECT_EQ(nullptr, new_simplex_memory_stream(0));
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(nullptr, new_duplex_memory_stream(0));
    EXPECT_EQ(EINVAL, errno);
    std::unique_ptr<IStream> s(new_simplex_memory_stream(8));
    struct iovec v = {nullptr, 1};
    errno = 0;
    EXPECT_EQ(-1, s->readv(&v, -1));
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(-1, s->writev(nullptr, 2));
    EXPECT_EQ(EINVAL, errno);
    struct iovec huge[2] = {{nullptr, SIZE_MAX}, {nullptr, 2}};
    errno = 0;
    EXPECT_EQ(-1, s->writev(huge, 2));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, s->writev(nullptr, 0));
    s->close();
    errno = 0;
    EXPECT_EQ(-1, s->read(nullptr, 0));
    EXPECT_EQ(EBADF, errno);
}

TEST_F(MemoryStreamTest, BytesCrossVcpusIntactThroughASmallBuffer) {
    std::unique_ptr<DuplexMemoryStream> d(new_duplex_memory_stream(1000));
    const size_t total = 256 * 1024;
    std::string sent(total, '\0');
    for (size_t i = 0; i < total; i++) sent[i] = (char)(i * 131 + i / 977);
    bool writer_ok = false;
    std::thread other([&] {
        if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) return;
        size_t off = 0;
        for (size_t chunk = 1; off < total; chunk = chunk * 3 % 4093 + 1) {
            size_t n = std::min(chunk, total - off);
            if (d->endpoint_a->write(&sent[off], n) != (ssize_t)n) break;
            off += n;
        }
        writer_ok = off == total;
        d->endpoint_a->close();
        photon::fini();
    });
    std::string got;
    char buf[1500];
    for (;;) {
        ssize_t r = d->endpoint_b->read(buf, sizeof(buf));
        ASSERT_GE(r, 0);
        if (r == 0) break;
        got.append(buf, (size_t)r);
    }
    other.join();
    EXPECT_TRUE(writer_ok);
    EXPECT_TRUE(got == sent);
}

TEST_F(MemoryStreamTest, AFaultStreamFailsAboutOnePercentOfTheEnabledCalls) {
    auto sink = new_string_socket_stream();
    std::unique_ptr<IStream> f(new_fault_stream(sink, 2, true));  // owns sink
    ASSERT_TRUE(f);
    int failures = 0, successes = 0;
    for (int i = 0; i < 5000; i++) {
        errno = 0;
        if (f->write("x", 1) == 1) {
            successes++;
        } else {
            failures++;
            EXPECT_NE(0, errno);
        }
    }
    EXPECT_GE(failures, 1);    // P(none) = 0.99^5000, about 1e-22
    EXPECT_LE(failures, 250);  // 5x the expected 50
    EXPECT_EQ((size_t)successes, sink->output().size());
    // Reads are not enabled: they never fail.
    sink->set_input(std::string(3000, 'r'));
    char c;
    for (int i = 0; i < 3000; i++) ASSERT_EQ(1, f->read(&c, 1));

    errno = 0;
    EXPECT_EQ(nullptr, new_fault_stream(nullptr));
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(MemoryStreamTest, StringSocketStreamServesItsInputAndRecordsOutput) {
    std::unique_ptr<StringSocketStream> s(new_string_socket_stream());
    s->set_input("hello world, in small pieces");
    std::string got;
    char buf[64];
    for (ssize_t r; (r = s->recv(buf, sizeof(buf))) > 0;) {
        EXPECT_LE(r, 8);
        got.append(buf, (size_t)r);
    }
    EXPECT_EQ("hello world, in small pieces", got);
    EXPECT_TRUE(s->input().empty());

    std::string outside = "abcdef";
    s->set_input(outside, false);  // read in place
    EXPECT_EQ(3, s->read(buf, 3));
    EXPECT_EQ(3, s->read(buf + 3, 10));  // consumed: the rest only
    EXPECT_EQ("abcdef", std::string(buf, 6));
    EXPECT_EQ(0, s->read(buf, 10));

    struct iovec empty[2] = {{nullptr, 0}, {buf, 0}};
    EXPECT_EQ(0, s->recv(empty, 2));
    EXPECT_EQ(0, s->send(empty, 2));
    ASSERT_EQ(6, s->write("wrote ", 6));
    ssize_t sent = s->send("sent", 4);
    EXPECT_GE(sent, 1);
    EXPECT_EQ(std::string("wrote sent", 6 + sent), s->output());

    errno = 0;
    EXPECT_EQ(-1, s->sendfile(0, 0, 1));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(nullptr, s->get_underlay_object());

    EXPECT_EQ(0, s->close());
    errno = 0;
    EXPECT_EQ(-1, s->recv(buf, 1));
    EXPECT_EQ(ECANCELED, errno);
    EXPECT_EQ(-1, s->close());
}

}  // namespace
