// Typed gRPC calls and handlers for protobuf messages, header-only over
// google::protobuf::MessageLite (photon itself never links libprotobuf; a
// program that includes this header does). Compiles to nothing where the
// protobuf headers are absent. The calls behave as their untyped forms in
// channel.h and server.h; a message that does not serialize or parse gives
// INTERNAL.
//
//   grpc::add_unary<EchoRequest, EchoReply>(&server, "/echo.Echo/Say",
//       [](grpc::ServerCall&, const EchoRequest& req, EchoReply* resp) { ...; return
//       grpc::Status(); });
//   EchoReply reply;
//   grpc::Status st = grpc::call(channel, "/echo.Echo/Say", request, &reply);
#pragma once

#if defined(__has_include)
#if __has_include(<google/protobuf/message_lite.h>)
#define PHOTON_GRPC_HAVE_PROTOBUF 1
#endif
#endif

#ifdef PHOTON_GRPC_HAVE_PROTOBUF

#include <google/protobuf/message_lite.h>

#include <cerrno>

#include <functional>
#include <string>

#include <photon/net/grpc/channel.h>
#include <photon/net/grpc/server.h>

namespace photon {
namespace net {
namespace grpc {

// A unary call with typed messages.
template <typename Request, typename Response>
Status call(Channel& ch, const std::string& method, const Request& req, Response* resp,
            const CallOptions& opt = {}) {
    std::string out, in;
    if (!req.SerializeToString(&out))
        return Status(StatusCode::INTERNAL, "cannot serialize the request");
    Status st = ch.call(method, out, &in, opt);
    if (st.ok() && !resp->ParseFromString(in))
        return Status(StatusCode::INTERNAL, "cannot parse the response");
    return st;
}

// Writes a message on a client or server call (ClientCall, ServerCall): as
// their write(), and -1 EINVAL if it does not serialize.
template <typename Call, typename Message>
int write_message(Call& call, const Message& m) {
    std::string out;
    if (!m.SerializeToString(&out)) return errno = EINVAL, -1;
    return call.write(out);
}

// Reads a message: as the call's read() (1, 0 at the end, -1), and -1
// EBADMSG if it does not parse.
template <typename Call, typename Message>
int read_message(Call& call, Message* m) {
    std::string in;
    int r = call.read(&in);
    if (r != 1) return r;
    return m->ParseFromString(in) ? 1 : (errno = EBADMSG, -1);
}

// Registers a unary method with typed messages; a request that does not
// parse is answered INTERNAL without the handler.
template <typename Request, typename Response>
int add_unary(Server* server, const std::string& name,
              std::function<Status(ServerCall&, const Request&, Response*)> handler) {
    return server->add_unary(
        name, [handler](ServerCall& call, const std::string& in, std::string* out) {
            Request req;
            if (!req.ParseFromString(in))
                return Status(StatusCode::INTERNAL, "cannot parse the request");
            Response resp;
            Status st = handler(call, req, &resp);
            if (st.ok() && !resp.SerializeToString(out))
                return Status(StatusCode::INTERNAL, "cannot serialize the response");
            return st;
        });
}

}  // namespace grpc
}  // namespace net
}  // namespace photon

#endif  // PHOTON_GRPC_HAVE_PROTOBUF
