// A small key-value service written the way a PhotonLibOS user writes one:
// operations as structs with IID/FID, a server class with do_rpc_service
// overloads, a skeleton behind a TCP server, calls through a stub pool, and
// IOVector for scattered buffers.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include <photon/common/iovector.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread11.h>

namespace {

struct KVService {
    const static uint32_t IID = 0x20;
};

struct Put : public KVService {
    const static uint32_t FID = 0x1;
    struct Request : public photon::rpc::Message {
        photon::rpc::string key;
        photon::rpc::iovec_array value;
        PROCESS_FIELDS(key, value);
    };
    struct Response : public photon::rpc::Message {
        int32_t ret = 0;
        PROCESS_FIELDS();
    };
};

struct Get : public KVService {
    const static uint32_t FID = 0x2;
    struct Request : public photon::rpc::Message {
        photon::rpc::string key;
        PROCESS_FIELDS(key);
    };
    struct Response : public photon::rpc::Message {
        int32_t ret = 0;
        photon::rpc::buffer value;
        PROCESS_FIELDS(value);
    };
};

class KVServer {
public:
    int do_rpc_service(Put::Request* req, Put::Response* resp, IOVector*, IStream*) {
        std::string v;
        for (auto& x : req->value) v.append((const char*)x.iov_base, x.iov_len);
        m_kv[std::string(req->key.sv())] = v;
        resp->ret = 0;
        return 0;
    }
    int do_rpc_service(Get::Request* req, Get::Response* resp, IOVector* iov, IStream*) {
        auto it = m_kv.find(std::string(req->key.sv()));
        if (it == m_kv.end()) {
            resp->ret = -ENOENT;
            return 0;
        }
        // Copy into a buffer the reply owns (the IOVector lives until it is sent).
        auto buf = iov->malloc(it->second.size());
        memcpy(buf, it->second.data(), it->second.size());
        resp->value.assign(buf, it->second.size());
        resp->ret = 0;
        return 0;
    }

private:
    std::map<std::string, std::string> m_kv;
};

TEST(RpcStyle, KeyValueServiceThroughAStubPool) {
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE));
    {
        KVServer kv;
        std::unique_ptr<photon::rpc::Skeleton> skeleton(photon::rpc::new_skeleton());
        skeleton->register_service<Put, Get>(&kv);
        std::unique_ptr<photon::net::ISocketServer> server(photon::net::new_tcp_socket_server());
        server->set_handler({skeleton.get(), [](void* sk, photon::net::ISocketStream* s) -> int {
                                 return ((photon::rpc::Skeleton*)sk)->serve(s);
                             }});
        ASSERT_EQ(0, server->bind_v4localhost(0));
        ASSERT_EQ(0, server->listen());
        ASSERT_EQ(0, server->start_loop(false));
        auto ep = server->getsockname();

        std::unique_ptr<photon::rpc::StubPool> pool(
            photon::rpc::new_stub_pool(10 * 1000 * 1000, 1000 * 1000));
        auto stub = pool->get_stub(ep, false);
        ASSERT_NE(nullptr, stub);

        // The value goes out from three scattered pieces, described by an IOVector.
        char a[] = "photon ", b[] = "rpc ", c[] = "works";
        IOVector value;
        value.push_back(a, strlen(a));
        value.push_back(b, strlen(b));
        value.push_back(c, strlen(c));
        Put::Request put;
        put.key = "greeting";
        put.value.assign(value.iovec(), value.iovcnt());
        Put::Response put_resp;
        ASSERT_GE(stub->call<Put>(put, put_resp), 0);
        EXPECT_EQ(0, put_resp.ret);

        Get::Request get;
        get.key = "greeting";
        Get::Response get_resp;
        char buf[64];
        get_resp.value.assign(buf, sizeof(buf));
        ASSERT_GE(stub->call<Get>(get, get_resp), 0);
        EXPECT_EQ(0, get_resp.ret);
        EXPECT_EQ("photon rpc works",
                  std::string((char*)get_resp.value.addr(), get_resp.value.size()));

        get.key = "missing";
        IOVector resp_iov;
        auto r = stub->call<Get>(get, resp_iov);
        ASSERT_NE(nullptr, r);
        EXPECT_EQ(-ENOENT, r->ret);

        pool->put_stub(ep, false);
    }
    photon::fini();
}

}  // namespace
