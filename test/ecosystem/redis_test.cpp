// photon/ecosystem/redis.h against Debian's redis-server started here on a free 127.0.0.1 port:
// PhotonLibOS's RedisClient (strings, lists, hashes, RESP3 items), the pipelined client (100
// coroutines on one connection, RESP3 types, error replies, timeouts, reconnection after the
// server kills the connection or a raw server cuts a reply), and the pool.
#include <photon/ecosystem/redis.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include "../util/temp_dir.h"

using namespace photon;
using namespace photon::redis;

namespace {

uint16_t free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    bind(fd, (sockaddr*)&a, sizeof(a));
    getsockname(fd, (sockaddr*)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

class RedisTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (access("/usr/bin/redis-server", X_OK) != 0) return;
        dir_ = new photon_test::temp_dir("redis_test");
        for (int attempt = 0; attempt < 5 && !pid_; ++attempt) {
            port_ = free_port();
            pid_t pid = fork();
            if (pid == 0) {
                auto p = std::to_string(port_);
                execl("/usr/bin/redis-server", "redis-server", "--port", p.c_str(), "--bind",
                      "127.0.0.1", "--save", "", "--appendonly", "no", "--dir",
                      dir_->path().c_str(), "--enable-debug-command", "yes", "--loglevel",
                      "warning", (char*)nullptr);
                _exit(127);
            }
            // Wait (bounded) until it answers.
            for (int i = 0; i < 100; ++i) {
                int fd = socket(AF_INET, SOCK_STREAM, 0);
                sockaddr_in a{};
                a.sin_family = AF_INET;
                a.sin_port = htons(port_);
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                bool ok = connect(fd, (sockaddr*)&a, sizeof(a)) == 0;
                close(fd);
                if (ok) {
                    pid_ = pid;
                    break;
                }
                if (waitpid(pid, nullptr, WNOHANG) == pid) break;  // exited: port taken?
                usleep(50 * 1000);
            }
            if (!pid_) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
        }
    }
    static void TearDownTestSuite() {
        if (pid_) kill(pid_, SIGTERM), waitpid(pid_, nullptr, 0);
        pid_ = 0;
        delete dir_;
        dir_ = nullptr;
    }
    void SetUp() override {
        if (!pid_) GTEST_SKIP() << "redis-server not installed or did not start";
        ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE));
        opts_.port = port_;
        opts_.timeout_us = 5 * 1000 * 1000;
    }
    void TearDown() override {
        if (photon::CURRENT) photon::fini();
    }
    net::ISocketStream* connect_raw() {
        tcp_.reset(net::new_tcp_socket_client());
        return tcp_->connect(net::EndPoint(net::IPAddr("127.0.0.1"), port_));
    }
    static photon_test::temp_dir* dir_;
    static pid_t pid_;
    static uint16_t port_;
    client_options opts_;
    std::unique_ptr<net::ISocketClient> tcp_;
};
photon_test::temp_dir* RedisTest::dir_ = nullptr;
pid_t RedisTest::pid_ = 0;
uint16_t RedisTest::port_ = 0;

TEST_F(RedisTest, PhotonClientDoesStringsListsAndHashes) {
    auto s = connect_raw();
    ASSERT_NE(s, nullptr);
    RedisClient rc(s, true);
    auto r = rc.SET("k1", "v1");
    ASSERT_TRUE(r.is_type<simple_string>());
    EXPECT_EQ(r.get<simple_string>(), "OK");
    r = rc.GET("k1");
    ASSERT_TRUE(r.is_type<bulk_string>());
    EXPECT_EQ(r.get<bulk_string>(), "v1");
    rc.DEL("counter");
    for (int i = 1; i <= 3; ++i) {
        r = rc.INCR("counter");
        ASSERT_TRUE(r.is_type<integer>());
        EXPECT_EQ(r.get<integer>().val, i);
    }
    rc.DEL("list");
    r = rc.RPUSH("list", "a", "b", "c");
    EXPECT_EQ(r.get<integer>().val, 3);
    r = rc.LRANGE("list", "0", "-1");
    ASSERT_TRUE(r.is_type<array_header>());
    ASSERT_EQ(r.get<array_header>().val, 3);
    std::vector<std::string> items;
    for (int i = 0; i < 3; ++i) items.emplace_back(rc.parse_response_item().get<bulk_string>());
    EXPECT_EQ(items, (std::vector<std::string>{"a", "b", "c"}));
    r = rc.HSET("h", "f1", "x", "f2", "y");
    ASSERT_TRUE(r.is_type<integer>());
    r = rc.HGET("h", "f2");
    EXPECT_EQ(r.get<bulk_string>(), "y");
    r = rc.GET("no-such-key");
    EXPECT_TRUE(r.is_nil());
    r = rc.execute("NOSUCHCOMMAND");
    ASSERT_TRUE(r.is_failed());
    EXPECT_NE(r.get_error_message().find("unknown command"), std::string_view::npos);
    std::string big(100000, 'z');  // larger than the client's buffer
    r = rc.SET("big", big);
    EXPECT_TRUE(r.is_type<simple_string>());
    r = rc.execute("STRLEN", "big");
    EXPECT_EQ(r.get<integer>().val, 100000);
}

TEST_F(RedisTest, PhotonClientReadsResp3ItemsAndPushes) {
    auto s = connect_raw();
    ASSERT_NE(s, nullptr);
    RedisClient rc(s, true);
    auto r = rc.execute("HELLO", "3");
    ASSERT_TRUE(r.is_type<map_header>());
    for (int64_t i = 0; i < 2 * r.get<map_header>().val; ++i) rc.parse_response_item();
    r = rc.execute("ZADD", "z", "1.5", "m");
    r = rc.ZSCORE("z", "m");
    ASSERT_TRUE(r.is_type<double_string>());
    EXPECT_EQ(r.get<double_string>(), "1.5");
    r = rc.GET("no-such-key");
    EXPECT_TRUE(r.is_nil());
    rc.DEL("st");
    rc.SADD("st", "one");
    r = rc.SMEMBERS("st");
    ASSERT_TRUE(r.is_type<set_header>());
    EXPECT_EQ(r.get<set_header>().val, 1);
    EXPECT_EQ(rc.parse_response_item().get<bulk_string>(), "one");
    r = rc.execute("SUBSCRIBE", "chan");
    ASSERT_TRUE(r.is_type<push_header>());
    EXPECT_EQ(r.get<push_header>().val, 3);
    EXPECT_EQ(rc.parse_response_item().get<bulk_string>(), "subscribe");
}

TEST_F(RedisTest, PipelinedClientServesHundredCoroutinesInOrder) {
    std::unique_ptr<pipelined_client> c(new_pipelined_client(opts_));
    ASSERT_TRUE(c);
    const int N = 100, M = 50;
    int bad = 0, done = 0;
    std::vector<join_handle*> ths;
    for (int i = 0; i < N; ++i) {
        ths.push_back(thread_enable_join(thread_create11([&, i] {
            for (int j = 0; j < M; ++j) {
                auto key = "p" + std::to_string(i) + ":" + std::to_string(j);
                auto val = std::string(64, 'a' + (i + j) % 26);
                reply r;
                if (c->command({"SET", key, val}, &r) != 0 || !r.ok()) ++bad;
                if (c->command({"GET", key}, &r) != 0 || r.str != val) ++bad;
            }
            ++done;
        })));
    }
    for (auto th : ths) thread_join(th);
    EXPECT_EQ(done, N);
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(c->connects(), 1u);
    EXPECT_EQ(c->protocol(), 3);
}

TEST_F(RedisTest, BatchesFromManyCoroutinesGetTheirOwnRepliesInOrder) {
    std::unique_ptr<pipelined_client> c(new_pipelined_client(opts_));
    ASSERT_TRUE(c);
    const int N = 20, M = 30, K = 16;
    int bad = 0, done = 0;
    std::vector<join_handle*> ths;
    for (int i = 0; i < N; ++i) {
        ths.push_back(thread_enable_join(thread_create11([&, i] {
            command_batch b;
            std::vector<reply> out(K + 1);  // reused: the replies' memory circulates
            for (int j = 0; j < M; ++j) {
                b.clear();
                std::vector<std::string> keys, vals;
                for (int k = 0; k < K; ++k) {
                    keys.push_back("b" + std::to_string(i) + ":" + std::to_string(j * K + k));
                    vals.push_back(std::string(64 + k, 'a' + (i + j + k) % 26));
                }
                for (int k = 0; k < K; k += 2) b.add({"SET", keys[k], vals[k]});
                for (int k = 0; k < K; k += 2) b.add({"GET", keys[k]});
                b.add({"INCR", keys[0]});  // not an integer: an error reply in the batch
                if (b.size() != (size_t)K + 1 || c->commands(b, out.data()) != 0) {
                    ++bad;
                    continue;
                }
                for (int k = 0; k < K / 2; ++k) bad += !out[k].ok();
                for (int k = 0; k < K / 2; ++k) bad += out[K / 2 + k].str != vals[2 * k];
                bad += !out[K].is_error();
            }
            ++done;
        })));
    }
    // Single commands interleave with the batches on the same connection.
    reply r;
    for (int j = 0; j < 50; ++j)
        if (c->command({"ECHO", std::to_string(j)}, &r) != 0 || r.str != std::to_string(j)) ++bad;
    for (auto th : ths) thread_join(th);
    EXPECT_EQ(done, N);
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(c->connects(), 1u);
    command_batch empty;
    errno = 0;
    EXPECT_EQ(c->commands(empty, &r), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(empty.add(nullptr, 0), -1);
    EXPECT_EQ(empty.size(), 0u);
}

TEST_F(RedisTest, ABatchTimesOutWholeAndItsLateRepliesAreDropped) {
    std::unique_ptr<pipelined_client> c(new_pipelined_client(opts_));
    reply r;
    ASSERT_EQ(c->command({"PING"}, &r), 0);
    command_batch b;
    b.add({"ECHO", "first"});
    b.add({"DEBUG", "SLEEP", "0.5"});
    b.add({"ECHO", "third"});
    std::vector<reply> out(3);
    errno = 0;
    EXPECT_EQ(c->commands(b, out.data(), 100 * 1000), -1);
    EXPECT_EQ(errno, ETIMEDOUT);
    out.clear();  // the array is gone: the late replies must not be written into it
    b.clear();
    b.add({"ECHO", "after"});
    b.add({"ECHO", "again"});
    std::vector<reply> out2(2);
    ASSERT_EQ(c->commands(b, out2.data()), 0);
    EXPECT_EQ(out2[0].str, "after");
    EXPECT_EQ(out2[1].str, "again");
    EXPECT_EQ(c->connects(), 1u);
}

TEST_F(RedisTest, AKilledConnectionFailsTheBatchInFlight) {
    std::unique_ptr<pipelined_client> c(new_pipelined_client(opts_));
    reply r;
    ASSERT_EQ(c->command({"CLIENT", "ID"}, &r), 0);
    auto id = std::to_string(r.integer);
    int result = 0, err = 0;
    auto th = thread_enable_join(thread_create11([&] {
        command_batch b;
        b.add({"SET", "killed-batch", "1"});
        b.add({"BLPOP", "never-pushed", "0"});
        std::vector<reply> out(2);
        result = c->commands(b, out.data());
        err = errno;
    }));
    thread_yield();
    std::unique_ptr<pipelined_client> killer(new_pipelined_client(opts_));
    EXPECT_EQ(killer->call("CLIENT", "KILL", "ID", id).integer, 1);
    thread_join(th);
    EXPECT_EQ(result, -1);
    EXPECT_NE(err, 0);
    ASSERT_EQ(c->command({"GET", "killed-batch"}, &r), 0);  // the first command did run
    EXPECT_EQ(r.str, "1");
    EXPECT_EQ(c->connects(), 2u);
}

TEST_F(RedisTest, PipelinedClientDecodesResp3TypesAndErrorReplies) {
    std::unique_ptr<pipelined_client> c(new_pipelined_client(opts_));
    c->call("DEL", "h3", "s3", "z3");
    c->call("HSET", "h3", "a", "1", "b", "2");
    auto r = c->call("HGETALL", "h3");
    ASSERT_EQ(r.type, reply::MAP);
    ASSERT_EQ(r.elements.size(), 4u);
    c->call("SADD", "s3", "x", "y");
    r = c->call("SMEMBERS", "s3");
    EXPECT_EQ(r.type, reply::SET);
    EXPECT_EQ(r.elements.size(), 2u);
    c->call("ZADD", "z3", "2.25", "m");
    r = c->call("ZSCORE", "z3", "m");
    EXPECT_EQ(r.type, reply::DOUBLE);
    EXPECT_EQ(r.number, 2.25);
    r = c->call("GET", "missing");
    EXPECT_TRUE(r.is_nil());
    r = c->call("INCR", "h3");  // WRONGTYPE: an error value, the connection goes on
    EXPECT_TRUE(r.is_error());
    EXPECT_EQ(r.str.compare(0, 9, "WRONGTYPE"), 0);
    r = c->call("PING");
    EXPECT_EQ(r.str, "PONG");
    EXPECT_EQ(c->connects(), 1u);
    // RESP2 when not offered RESP3
    opts_.resp3 = false;
    std::unique_ptr<pipelined_client> c2(new_pipelined_client(opts_));
    r = c2->call("HGETALL", "h3");
    EXPECT_EQ(r.type, reply::ARRAY);
    EXPECT_EQ(c2->protocol(), 2);
}

TEST_F(RedisTest, ACallTimesOutAndTheConnectionGoesOn) {
    std::unique_ptr<pipelined_client> c(new_pipelined_client(opts_));
    reply r;
    ASSERT_EQ(c->command({"PING"}, &r), 0);
    errno = 0;
    EXPECT_EQ(c->command({"DEBUG", "SLEEP", "0.5"}, &r, 100 * 1000), -1);
    EXPECT_EQ(errno, ETIMEDOUT);
    ASSERT_EQ(c->command({"ECHO", "after"}, &r), 0);  // the sleep's reply is dropped first
    EXPECT_EQ(r.str, "after");
    EXPECT_EQ(c->connects(), 1u);
}

TEST_F(RedisTest, AKilledConnectionFailsCallsInFlightAndTheNextReconnects) {
    std::unique_ptr<pipelined_client> c(new_pipelined_client(opts_));
    reply r;
    ASSERT_EQ(c->command({"CLIENT", "SETNAME", "victim"}, &r), 0);
    ASSERT_EQ(c->command({"CLIENT", "ID"}, &r), 0);
    auto id = std::to_string(r.integer);
    int failed = 0;
    auto th = thread_enable_join(thread_create11([&] {
        reply r2;
        if (c->command({"BLPOP", "never-pushed", "0"}, &r2) < 0) ++failed;
    }));
    thread_yield();
    std::unique_ptr<pipelined_client> killer(new_pipelined_client(opts_));
    auto k = killer->call("CLIENT", "KILL", "ID", id);
    EXPECT_EQ(k.integer, 1);
    thread_join(th);
    EXPECT_EQ(failed, 1);
    ASSERT_EQ(c->command({"PING"}, &r), 0);
    EXPECT_EQ(r.str, "PONG");
    EXPECT_EQ(c->connects(), 2u);
}

TEST_F(RedisTest, AServerCuttingAReplyInHalfFailsTheCallNotTheProcess) {
    std::unique_ptr<net::ISocketServer> srv(net::new_tcp_socket_server());
    ASSERT_EQ(0, srv->bind_v4localhost(0));
    ASSERT_EQ(0, srv->listen());
    net::EndPoint ep;
    ASSERT_EQ(0, srv->getsockname(ep));
    auto port = ep.port;
    auto th = thread_enable_join(thread_create11([&] {
        for (int conn = 0; conn < 2; ++conn) {
            std::unique_ptr<net::ISocketStream> s(srv->accept());
            if (!s) return;
            char buf[4096];
            s->recv(buf, sizeof(buf));         // HELLO 3
            s->write("-ERR unknown\r\n", 14);  // RESP2 then
            s->recv(buf, sizeof(buf));         // GET
            s->write("$10\r\nhalf", 9);        // half a reply, then close
        }
    }));
    client_options o = opts_;
    o.port = port;
    std::unique_ptr<pipelined_client> c(new_pipelined_client(o));
    reply r;
    errno = 0;
    EXPECT_EQ(c->command({"GET", "k"}, &r), -1);
    EXPECT_EQ(errno, ECONNRESET);
    EXPECT_EQ(c->command({"GET", "k"}, &r), -1);  // reconnected, cut again
    EXPECT_EQ(c->connects(), 2u);
    thread_join(th);
}

TEST_F(RedisTest, PoolSpreadsCallsOverItsConnections) {
    std::unique_ptr<client_pool> pool(new_client_pool(opts_, 4));
    ASSERT_TRUE(pool);
    reply del;
    ASSERT_EQ(pool->command({"DEL", "pool-counter"}, &del), 0);
    int bad = 0;
    std::vector<join_handle*> ths;
    for (int i = 0; i < 40; ++i) {
        ths.push_back(thread_enable_join(thread_create11([&] {
            for (int j = 0; j < 20; ++j) {
                reply r;
                if (pool->command({"INCR", "pool-counter"}, &r) != 0 || r.type != reply::INTEGER)
                    ++bad;
            }
        })));
    }
    for (auto th : ths) thread_join(th);
    EXPECT_EQ(bad, 0);
    size_t used = 0;
    for (size_t i = 0; i < pool->size(); ++i) used += pool->get(i)->connects() > 0;
    EXPECT_GT(used, 1u);
    command_batch b;
    b.add({"INCR", "pool-counter"});
    b.add({"GET", "pool-counter"});
    reply out[2];
    ASSERT_EQ(pool->commands(b, out), 0);
    EXPECT_EQ(out[0].integer, 40 * 20 + 1);
    EXPECT_EQ(out[1].str, std::to_string(40 * 20 + 1));
}

}  // namespace
