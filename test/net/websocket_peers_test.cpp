// WebSocket against python3's websockets package (Debian: python3-websockets)
// on both event engines: its client against our server, our client against
// its server. Skipped when no python3 can import websockets. Every server
// listens on 127.0.0.1.
#include <cstdlib>
#include <memory>
#include <string>

#include "../util/temp_dir.h"
#include "websocket_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

// Probes for a python3 that has the websockets package (Debian:
// python3-websockets); "" if none. PHOTON_TEST_PYTHON is tried first.
const std::string& websockets_python() {
    static const std::string found = [] {
        const char* env = getenv("PHOTON_TEST_PYTHON");
        for (const char* p : {env ? env : "", "python3", "/usr/bin/python3"}) {
            if (!*p) continue;
            std::string cmd = std::string(p) + " -c 'import websockets' >/dev/null 2>&1";
            if (system(cmd.c_str()) == 0) return std::string(p);
        }
        return std::string();
    }();
    return found;
}

#define SKIP_WITHOUT_WEBSOCKETS_PYTHON()                                                         \
    if (websockets_python().empty())                                                             \
    GTEST_SKIP() << "python3 -c 'import websockets' fails: install python3-websockets (Debian) " \
                    "or set PHOTON_TEST_PYTHON"

// ---- python3's websockets as the peer ----------------------------------------------

const char kPythonEchoServer[] = R"(
import asyncio, sys, websockets

async def handler(ws, *args):
    try:
        async for msg in ws:
            if msg == "frag":
                await ws.send(["frag", "mented ", "w\u00f6rld"])
            elif msg == "ping":
                await asyncio.wait_for(await ws.ping(b"py"), 5)
                await ws.send("ponged")
            elif msg == "close":
                await ws.close(4002, "py bye")
            else:
                await ws.send(msg)
    except websockets.ConnectionClosed:
        pass
    print("closed", ws.close_code, ws.close_reason, flush=True)

async def main():
    async with websockets.serve(handler, "127.0.0.1", 0, max_size=8 << 20) as srv:
        print(srv.sockets[0].getsockname()[1], flush=True)
        await asyncio.sleep(60)

asyncio.run(main())
)";

const char kPythonClient[] = R"(
import asyncio, sys, websockets

async def session(uri):
    async with websockets.connect(uri, max_size=8 << 20) as ws:
        await ws.send("hello")
        assert await ws.recv() == "hello"
        data = bytes(range(256)) * 6000 + b"xyz"
        await ws.send(data)
        assert await ws.recv() == data
        await ws.send(["frag", "mented ", "w\u00f6rld"])
        got = await ws.recv()
        assert got == "fragmented w\u00f6rld", got
        await asyncio.wait_for(await ws.ping(b"hi"), 5)
        await ws.send("frag")
        got = await ws.recv()
        assert got == "fragmented w\u00f6rld", got
        await ws.close(1000, "py done")
    async with websockets.connect(uri) as ws:
        await ws.send("close:4001")
        try:
            await ws.recv()
            raise AssertionError("no close")
        except websockets.ConnectionClosed as e:
            assert e.rcvd.code == 4001 and e.rcvd.reason == "bye", e
    print("OK", flush=True)

asyncio.run(asyncio.wait_for(session(sys.argv[1]), 30))
)";

TEST_P(WebSocket, PythonWebsocketsClientAgainstOurServer) {
    SKIP_WITHOUT_WEBSOCKETS_PYTHON();
    temp_dir tmp;
    tmp.write("client.py", kPythonClient);
    child_process py({websockets_python(), tmp.path("client.py"), ws_url("/ws")}, "",
                     tmp.path("out"));
    ASSERT_TRUE(py.started());
    EXPECT_EQ(0, py.wait(40000)) << slurp(tmp.path("out"));
    EXPECT_NE(std::string::npos, slurp(tmp.path("out")).find("OK")) << slurp(tmp.path("out"));
    ASSERT_TRUE(wait_for([&] { return echo.ended == 2; }));
    EXPECT_GE(echo.pings, 1);
    EXPECT_EQ(2, echo.sessions);
}

TEST_P(WebSocket, OurClientAgainstPythonWebsocketsServer) {
    SKIP_WITHOUT_WEBSOCKETS_PYTHON();
    temp_dir tmp;
    tmp.write("server.py", kPythonEchoServer);
    child_server py({websockets_python(), tmp.path("server.py")}, tmp.path("out"));
    ASSERT_NE(0, py.port()) << py.output();
    std::string u = "ws://127.0.0.1:" + std::to_string(py.port()) + "/";
    {
        std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), u, kLongUs));
        ASSERT_TRUE(ws);
        ASSERT_EQ(5, ws->send_text("hello"));
        EXPECT_EQ("hello", recv_on(ws.get()).data);
        std::string bin = pattern((1 << 20) + 77, 5);
        ASSERT_EQ((ssize_t)bin.size(), ws->send_binary(bin.data(), bin.size()));
        auto r = recv_on(ws.get());
        EXPECT_EQ(Op::Binary, r.op);
        EXPECT_TRUE(r.data == bin);
        ASSERT_EQ(4, ws->send_text("frag"));  // python sends three fragments
        r = recv_on(ws.get());
        EXPECT_EQ(Op::Text, r.op);
        EXPECT_EQ("fragmented w\xC3\xB6rld", r.data);
        ASSERT_EQ(0, ws->ping("ours"));
        r = recv_on(ws.get());
        EXPECT_EQ(Op::Pong, r.op);
        EXPECT_EQ("ours", r.data);
        ASSERT_EQ(4, ws->send_text("ping"));
        r = recv_on(ws.get());
        EXPECT_EQ(Op::Ping, r.op);
        EXPECT_EQ("py", r.data);
        EXPECT_EQ("ponged", recv_on(ws.get()).data);  // it got our Pong
        ASSERT_EQ(0, ws->close(WebSocketCloseCode::NormalClosure, "done"));
        r = recv_on(ws.get());
        EXPECT_EQ(Op::Close, r.op);
        EXPECT_EQ(1000, code_of(r.data));
    }
    EXPECT_TRUE(wait_for([&] { return py.output().find("closed 1000 done") != std::string::npos; }))
        << py.output();
    {
        std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), u, kLongUs));
        ASSERT_TRUE(ws);
        ASSERT_EQ(5, ws->send_text("close"));
        auto r = recv_on(ws.get());
        EXPECT_EQ(Op::Close, r.op);
        EXPECT_EQ(code_bytes(4002) + "py bye", r.data);
    }
    // Its close_code is the one we echoed (without the reason).
    EXPECT_TRUE(wait_for([&] { return py.output().find("closed 4002") != std::string::npos; }))
        << py.output();
}
PHOTON_INSTANTIATE_ENGINE_TESTS(WebSocket);

}  // namespace
