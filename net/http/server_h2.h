// HTTP/2 for the HTTP server: a connection that speaks it (h2 by ALPN, h2c
// with prior knowledge or by Upgrade) is served by an http2::server_connection
// whose streams each run the server's handlers on a Request and Response of
// their own, as an HTTP/1.1 request would. Private header of net/http/.
#pragma once

#include <string_view>

#include <photon/common/callback.h>
#include <photon/net/http/message.h>

#include "server_conn.h"

namespace photon {
namespace net {
namespace http {
namespace server_detail {

// Runs a request through the server's handlers (0, or < 0: failed).
using Dispatch = Delegate<int, Request&, Response&>;

// The client preface's first line: a connection that starts with it speaks
// h2c with prior knowledge.
constexpr std::string_view kH2PrefaceStart = "PRI * HTTP/2.0\r\n";

// Whether a new connection speaks HTTP/2 (ServerOptions::http2 On; Only: all do):
// ALPN chose "h2" in the TLS handshake, or its first bytes (read into c.in)
// are the client preface's. 1 or 0; -1 with errno if the first read failed.
int speaks_http2(Connection& c);

// Serves c as HTTP/2 until it ends or the server stops: 0, or -1 with errno.
int serve_http2(Connection& c, Dispatch dispatch);

// A request asking to upgrade to h2c (RFC 7540 3.2) that we take: a valid
// HTTP2-Settings, no body, not over TLS. Answers 101 and serves the
// connection as HTTP/2, the request being stream 1: 0 or -1 as
// serve_http2(). 1: not such a request (serve it as HTTP/1.1).
int upgrade_to_http2(Connection& c, Dispatch dispatch);

}  // namespace server_detail
}  // namespace http
}  // namespace net
}  // namespace photon
