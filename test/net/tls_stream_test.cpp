// TLS streams over both event engines: a megabyte echoed with a concurrent
// reader and writer, close_notify versus truncation, a peer closing or
// resetting, small writes to a late reader, a close_notify behind a pending
// io_uring send, two streams' first gathered writes, handshake and read
// timeouts, sendfile, and unix-domain and io_uring base streams. The
// handshake's verification, ALPN, SNI and interoperability are in
// tls_handshake_test.cpp.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include <photon/common/utility.h>
#include <photon/net/basic_socket.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>

#include "tls_fixture.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

TEST_P(Tls, EchoesAMegabyteOverTls13WithConcurrentReaderAndWriter) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    std::string out = pattern(1 << 20), in(out.size(), 0);
    // The reader starts first and parks in the handshake / read while the
    // writer coroutine sends: the two directions must not block each other.
    auto writer = spawn([&] { EXPECT_EQ((ssize_t)out.size(), s->write(out.data(), out.size())); });
    EXPECT_EQ((ssize_t)in.size(), s->read(&in[0], in.size()));
    writer.join();
    EXPECT_TRUE(in == out);
    EXPECT_STREQ("TLSv1.3", tls_stream_get_version(s.get()));
    EXPECT_EQ(s->getpeername(), ep);
    EXPECT_GE(s->get_underlay_fd(), 0);
    ASSERT_EQ(0, s->shutdown(ShutdownHow::Write));  // close_notify: the echo ends cleanly
    char c;
    EXPECT_EQ(0, s->read(&c, 1));
}

// ---- closing, truncation and timeouts -------------------------------------

class TlsRaw : public Tls {
protected:
    // A plain TCP listener; the test makes the server side by hand.
    void listen_plain() {
        plain.reset(new_tcp_socket_server());
        ASSERT_EQ(0, plain->bind_v4localhost(0));
        ASSERT_EQ(0, plain->listen());
        ep = plain->getsockname();
    }
    void TearDown() override {
        plain.reset();
        Tls::TearDown();
    }
    std::unique_ptr<ISocketServer> plain;
};

TEST_P(TlsRaw, CloseNotifyReadsAsEofAndTruncationAsEconnreset) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    for (bool clean : {true, false}) {
        std::unique_ptr<ISocketStream> raw, tls;
        auto peer = spawn([&] {
            raw.reset(plain->accept());
            tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
            if (!tls) return;
            tls->write("abc", 3);
            if (clean)
                tls->close();  // close_notify, then nothing
            else
                ::shutdown(raw->get_underlay_fd(), SHUT_RDWR);  // FIN, no close_notify
        });
        std::unique_ptr<ISocketStream> s(connect(cctx));
        ASSERT_NE(nullptr, s);
        char buf[10];
        EXPECT_EQ(3, s->read(buf, sizeof(buf)));  // short: the stream ended
        EXPECT_EQ(0, memcmp(buf, "abc", 3));
        peer.join();
        ASSERT_NE(nullptr, tls);
        if (clean) {
            EXPECT_EQ(0, s->read(buf, sizeof(buf)));
        } else {
            EXPECT_EQ(-1, s->read(buf, sizeof(buf)));
            EXPECT_EQ(ECONNRESET, errno);
        }
        tls.reset();
    }
}

TEST_P(TlsRaw, PeerClosingDuringHandshakeFailsFast) {
    listen_plain();
    TLSContext* cctx = keep(client_ctx());
    auto peer = spawn([&] { delete plain->accept(); });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    auto t0 = Clock::now();
    EXPECT_EQ(-1, tls_stream_handshake(s.get()));
    EXPECT_TRUE(errno == ECONNRESET || errno == EPIPE) << strerror(errno);
    EXPECT_LT(us_since(t0), kLongUs);
    peer.join();
}

// Records leave straight from OpenSSL's buffer while the socket has room;
// what a full socket refuses is queued and sent after. Many small gathered
// writes to a reader that starts late must arrive whole and in order.
TEST_P(TlsRaw, SmallWritesToALateReaderArriveWholeAndInOrder) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    constexpr int kRecords = 6000;
    constexpr size_t kHead = 15, kBody = 300, kRecord = kHead + kBody;
    std::string body = pattern(kBody);
    std::unique_ptr<ISocketStream> raw, tls;
    ssize_t written = 0;
    auto peer = spawn([&] {
        raw.reset(plain->accept());
        int small = 8192;  // full after a few records
        raw->setsockopt(SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
        tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
        if (!tls) return;
        for (int i = 0; i < kRecords; i++) {
            char head[kHead + 1];
            snprintf(head, sizeof(head), "%015d", i);
            struct iovec iov[2] = {{head, kHead}, {&body[0], kBody}};
            if (tls->writev(iov, 2) != (ssize_t)kRecord) break;
            written += kRecord;
        }
    });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    // The server has written and parked: its socket is full.
    ASSERT_TRUE(wait_for(
        [&] { return written > 0 && photon::thread_stat(peer.th) == photon::SLEEPING; }, 10000));
    std::string got(kRecords * kRecord, 0);
    ASSERT_EQ((ssize_t)got.size(), s->read(&got[0], got.size()));
    peer.join();
    EXPECT_EQ((ssize_t)got.size(), written);
    for (int i = 0; i < kRecords; i++) {
        char head[kHead + 1];
        snprintf(head, sizeof(head), "%015d", i);
        size_t at = (size_t)i * kRecord;
        ASSERT_EQ(0, memcmp(&got[at], head, kHead)) << "record " << i;
        ASSERT_EQ(0, memcmp(&got[at + kHead], body.data(), kBody)) << "record " << i;
    }
    tls.reset();
}

// A write of several records goes out in one send from a buffer of the OS thread's; what
// a full socket refuses is queued on its own stream before the writer parks. Two streams
// of one vCPU writing 100 KiB at a time to late readers each deliver their own bytes,
// whole and in order.
TEST_P(TlsRaw, LargeWritesOfTwoStreamsToLateReadersArriveWholeAndInOrder) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    constexpr int kWrites = 12;
    constexpr size_t kWrite = 100 * 1024;  // seven records
    auto payload = [&](int stream, int i) {
        std::string p = pattern(kWrite + 7 * stream).substr(7 * stream);
        snprintf(&p[0], 16, "%d-%013d", stream, i);
        return p;
    };
    std::unique_ptr<ISocketStream> raw[2], tls[2];
    ssize_t written[2] = {0, 0};
    std::vector<task> peers;
    for (int k = 0; k < 2; k++)
        peers.push_back(spawn([&, k] {
            raw[k].reset(plain->accept());
            int small = 8192;  // full after part of the first write
            raw[k]->setsockopt(SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
            tls[k].reset(new_tls_stream(sctx, raw[k].get(), SecurityRole::Server));
            if (!tls[k]) return;
            for (int i = 0; i < kWrites; i++) {
                std::string p = payload(k, i);
                if (tls[k]->write(p.data(), p.size()) != (ssize_t)p.size()) break;
                written[k] += p.size();
            }
        }));
    std::unique_ptr<ISocketStream> c[2];
    for (auto& one : c) {
        one.reset(connect(cctx));
        ASSERT_NE(nullptr, one);
        ASSERT_EQ(0, tls_stream_handshake(one.get()));
    }
    // Both servers have written part of a write and parked: their sockets are full.
    ASSERT_TRUE(wait_for(
        [&] {
            for (auto& p : peers)
                if (photon::thread_stat(p.th) != photon::SLEEPING) return false;
            return true;
        },
        10000));
    for (auto& one : c) {
        std::string got(kWrites * kWrite, 0);
        ASSERT_EQ((ssize_t)got.size(), one->read(&got[0], got.size()));
        int k = got[0] - '0';
        ASSERT_TRUE(k == 0 || k == 1) << got.substr(0, 16);
        for (int i = 0; i < kWrites; i++)
            ASSERT_TRUE(got.compare((size_t)i * kWrite, kWrite, payload(k, i)) == 0)
                << "stream " << k << ", write " << i;
    }
    for (auto& p : peers) p.join();
    EXPECT_EQ((ssize_t)(kWrites * kWrite), written[0]);
    EXPECT_EQ((ssize_t)(kWrites * kWrite), written[1]);
    for (auto& t : tls) t.reset();
}

// A record sent straight from OpenSSL's buffer meets the peer's reset: the
// write says ECONNRESET, which the kernel reports once, not a later EPIPE.
TEST_P(TlsRaw, AWriteAfterThePeerResetSaysEconnreset) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    std::unique_ptr<ISocketStream> raw, tls;
    auto peer = spawn([&] {
        raw.reset(plain->accept());
        tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
    });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    peer.join();
    ASSERT_NE(nullptr, tls);
    struct linger lg = {1, 0};  // close with RST
    ASSERT_EQ(0, ::setsockopt(s->get_underlay_fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
    s.reset();
    ASSERT_TRUE(wait_for([&] {  // the reset reached the server's socket
        pollfd p = {raw->get_underlay_fd(), POLLIN, 0};
        return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
    }));
    EXPECT_EQ(-1, tls->write("x", 1));
    EXPECT_EQ(ECONNRESET, errno) << strerror(errno);
    tls.reset();
}

// A failed write ends the sending side only: an answer the peer sent before
// it reset the connection (an HTTP server's early 413 to an upload) can
// still be read. Found by test/hostile (early_413 over TLS).
TEST_P(TlsRaw, AnAnswerSentBeforeAResetIsReadAfterAFailedWrite) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    std::unique_ptr<ISocketStream> raw, tls;
    auto peer = spawn([&] {
        raw.reset(plain->accept());
        tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
        if (!tls) return;
        tls->write("413", 3);
        struct linger lg = {1, 0};  // close with RST
        ::setsockopt(raw->get_underlay_fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        tls.reset();  // close_notify (the base is not the stream's)
        raw.reset();  // RST
    });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    peer.join();
    thread_usleep(20 * 1000);  // the reset reaches our socket
    std::string upload(256 * 1024, 'u');
    EXPECT_EQ(-1, s->write(upload.data(), upload.size()));
    EXPECT_TRUE(errno == ECONNRESET || errno == EPIPE) << strerror(errno);
    EXPECT_EQ(-1, s->write("x", 1));  // the sending side stays failed
    char buf[16];
    ASSERT_EQ(3, s->read(buf, sizeof(buf))) << strerror(errno);
    EXPECT_EQ(0, memcmp(buf, "413", 3));
}

// The reader side of CloseNotifyQueuesBehindAPendingIouringSend, on its own
// thread and vCPU: a TLS server on 127.0.0.1 that reads nothing until the
// writer's socket is full, then reads everything up to close_notify.
struct StallingTlsReader {
    TLSContext* sctx;
    const std::string& out;  // what the writer sends
    std::atomic<uint16_t> port{0};
    std::atomic<bool> accepted{false}, done{false};
    std::atomic<bool> writer_stalled{false}, emptied{false};  // see the test
    size_t got = 0;
    ssize_t end = -2;
    bool intact = false;

    StallingTlsReader(TLSContext* sctx, const std::string& out) : sctx(sctx), out(out) {}

    void run() {
        if (photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE) == 0) {
            std::unique_ptr<ISocketServer> srv(new_tcp_socket_server());
            if (srv->bind_v4localhost(0) == 0 && srv->listen() == 0) {
                port = srv->getsockname().port;
                std::unique_ptr<ISocketStream> raw(srv->accept());
                accepted = true;
                std::unique_ptr<ISocketStream> tls(
                    raw ? new_tls_stream(sctx, raw.get(), SecurityRole::Server) : nullptr);
                if (tls) read_all(raw.get(), tls.get());
            }
            photon::fini();
        }
        done = true;
    }

    void read_all(ISocketStream* raw, ISocketStream* tls) {
        const size_t kTotal = out.size();
        tls->timeout(kLongUs);
        // Reads nothing until the writer's socket is full.
        wait_for([&] { return writer_stalled.load(); }, 10000);
        int fd = raw->get_underlay_fd(), left = -1;
        std::string in(kTotal, 0);
        while (got < kTotal && (end = tls->recv(&in[got], kTotal - got)) > 0) {
            got += end;
            if (ioctl(fd, FIONREAD, &left) == 0 && left == 0) emptied = true;
        }
        char c;
        if (got == kTotal) end = tls->recv(&c, 1);
        intact = memcmp(in.data(), out.data(), got) == 0;
    }

    // A failed test must not leave the reader in accept.
    void unblock_accept() {
        if (accepted || !port) return;
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a = {};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::connect(fd, (sockaddr*)&a, sizeof(a));
        ::close(fd);
    }
};

// A close_notify sent while a writer's records wait in an io_uring send must
// queue behind them, even when the socket has room again: the reader, on its
// own vCPU, drains it while this vCPU spins without entering its ring, so the
// queued send (deferred task work on the io_uring master) has not run yet.
TEST_P(Tls, CloseNotifyQueuesBehindAPendingIouringSend) {
    std::unique_ptr<ISocketClient> ur(new_iouring_tcp_client());
    if (!ur) GTEST_SKIP() << "no io_uring sockets: " << strerror(errno);
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    constexpr size_t kTotal = 4 << 20;
    std::string out = pattern(kTotal);
    StallingTlsReader rd(sctx, out);
    std::thread reader([&] { rd.run(); });
    DEFER({
        if (!reader.joinable()) return;
        rd.unblock_accept();
        reader.join();
    });
    ASSERT_TRUE(wait_for([&] { return rd.port != 0 || rd.done; }));
    ASSERT_NE(0, rd.port.load());
    client.reset(new_tls_client(cctx, ur.release(), true));
    client->timeout(kLongUs);
    std::unique_ptr<ISocketStream> s(client->connect(EndPoint(IPAddr("127.0.0.1"), rd.port)));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_set_hostname(s.get(), "localhost"));
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    int small = 16384;
    ASSERT_EQ(0, s->setsockopt(SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
    ssize_t written = -1;
    auto writer = spawn([&] { written = s->write(out.data(), out.size()); });
    // The writer parks with its records in a send request that the full
    // socket cannot take.
    int fd = s->get_underlay_fd();
    ASSERT_TRUE(wait_for(
        [&] {
            pollfd p = {fd, POLLOUT, 0};
            return ::poll(&p, 1, 0) == 0 && photon::thread_stat(writer.th) == photon::SLEEPING;
        },
        10000));
    rd.writer_stalled = true;
    // No syscall (none enters the ring) until the reader has emptied its
    // receive queue, so that the socket has room again; bounded for a
    // broken reader.
    auto until = Clock::now() + std::chrono::seconds(10);
    while (!rd.emptied && !rd.done && Clock::now() < until) {
    }
    EXPECT_EQ(0, s->shutdown(ShutdownHow::Write));
    writer.join();
    s.reset();
    reader.join();
    EXPECT_GT(written, 0);
    EXPECT_EQ((size_t)written, rd.got);  // every byte written arrived before close_notify
    EXPECT_EQ(0, rd.end);                // then close_notify, not a reset
    EXPECT_TRUE(rd.intact);
}

// The first write of a fresh client stream runs the handshake before it
// gathers a small writev: two such streams on one vCPU, whose handshakes
// interleave, each send their own bytes.
TEST_P(Tls, FirstGatheredWritesOfTwoStreamsKeepTheirOwnBytes) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    std::unique_ptr<ISocketClient> c2(new_tls_client(cctx, new_tcp_socket_client(), true));
    ASSERT_NE(nullptr, c2);
    c2->timeout(kLongUs);
    std::unique_ptr<ISocketStream> a(connect(cctx)), b(c2->connect(ep));
    ASSERT_NE(nullptr, a);
    ASSERT_NE(nullptr, b);
    ASSERT_EQ(0, tls_stream_set_hostname(b.get(), "localhost"));
    auto exchange = [](ISocketStream* s, char tag) {
        std::string head(8, tag), body(200, tag);
        struct iovec iov[2] = {{&head[0], head.size()}, {&body[0], body.size()}};
        if (s->writev(iov, 2) != 208) return std::string("write failed");
        std::string back(208, 0);
        if (s->read(&back[0], back.size()) != 208) return std::string("read failed");
        return back;
    };
    std::string got_a;
    auto other = spawn([&] { got_a = exchange(a.get(), 'a'); });
    std::string got_b = exchange(b.get(), 'b');
    other.join();
    EXPECT_EQ(std::string(208, 'a'), got_a);
    EXPECT_EQ(std::string(208, 'b'), got_b);
}

TEST_P(TlsRaw, HandshakeAndReadTimeOutWithEtimedout) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    std::unique_ptr<ISocketStream> mute;  // accepts but never speaks TLS
    auto peer = spawn([&] { mute.reset(plain->accept()); });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    s->timeout(50 * 1000);
    auto t0 = Clock::now();
    EXPECT_EQ(-1, tls_stream_handshake(s.get()));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 40 * 1000u);  // 50 ms on photon's coarse clock
    peer.join();

    // A handshaken stream whose peer is silent: the read times out, and the
    // stream still works afterwards.
    std::unique_ptr<ISocketStream> raw, tls;
    bool release = false;
    auto slow = spawn([&] {
        raw.reset(plain->accept());
        tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
        while (!release) thread_usleep(1000);
        if (tls) tls->write("late", 4);
    });
    s.reset(connect(cctx));
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    s->timeout(50 * 1000);
    char buf[4];
    t0 = Clock::now();
    EXPECT_EQ(-1, s->read(buf, 4));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 40 * 1000u);  // 50 ms on photon's coarse clock
    release = true;
    s->timeout(kLongUs);
    EXPECT_EQ(4, s->read(buf, 4));
    EXPECT_EQ(0, memcmp(buf, "late", 4));
    slow.join();
    tls.reset();
}

TEST_P(Tls, SendfileEncryptsTheFileRange) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    std::string data = pattern(300 * 1000), file = pki().path("sendfile.bin");
    std::ofstream(file, std::ios::binary) << data;
    int fd = ::open(file.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    size_t n = data.size() - 1000;
    std::string in(n, 0);
    auto writer = spawn([&] { EXPECT_EQ((ssize_t)n, s->sendfile(fd, 1000, n)); });
    EXPECT_EQ((ssize_t)n, s->read(&in[0], n));
    writer.join();
    ::close(fd);
    EXPECT_TRUE(in == data.substr(1000));
}

TEST_P(Tls, LayersOverUnixDomainAndIouringStreams) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    std::string path = pki().path("tls.sock");
    server.reset(new_tls_server(sctx, new_uds_server(true), true));
    ASSERT_EQ(0, server->bind(path.c_str()));
    ASSERT_EQ(0, server->listen());
    server->set_handler({this, &Tls::handle});
    ASSERT_EQ(0, server->start_loop(false));
    client.reset(new_tls_client(cctx, new_uds_client(), true));
    std::unique_ptr<ISocketStream> s(client->connect(path.c_str()));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_set_hostname(s.get(), "localhost"));
    char buf[4];
    ASSERT_EQ(4, s->write("unix", 4));
    EXPECT_EQ(4, s->read(buf, 4));
    EXPECT_EQ(0, memcmp(buf, "unix", 4));
    s.reset();

    std::unique_ptr<ISocketClient> ur(new_iouring_tcp_client());
    if (!ur) GTEST_SKIP() << "no io_uring sockets: " << strerror(errno);
    server.reset();
    serve(sctx);
    client.reset(new_tls_client(cctx, ur.release(), true));
    s.reset(client->connect(ep));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_set_hostname(s.get(), "localhost"));
    ASSERT_EQ(4, s->write("ring", 4));
    EXPECT_EQ(4, s->read(buf, 4));
    EXPECT_EQ(0, memcmp(buf, "ring", 4));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Tls);
PHOTON_INSTANTIATE_ENGINE_TESTS(TlsRaw);

}  // namespace
