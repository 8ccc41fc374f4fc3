// HTTP/1.1 messages over a connection: Request and Response read their head
// and body from an InputBuffer (which keeps bytes of the next pipelined
// message for the next receive) and write head and body to an IStream. A
// server or client binds them to a connection (or reset(ISocketStream*) to
// a socket, as in Photon). Calls block the calling coroutine on the stream.
//
// Differences from PhotonLibOS: doc/compat.md#nethttpmessageh
#pragma once

#include <sys/uio.h>
#include <cassert>
#include <cerrno>
#include <memory>
#include <string>
#include <string_view>

#include <photon/common/callback.h>
#include <photon/common/estring.h>
#include <photon/common/stream.h>
#include <photon/net/http/body.h>
#include <photon/net/http/headers.h>
#include <photon/net/http/parser.h>
#include <photon/net/http/url.h>
#include <photon/net/http/verb.h>

namespace photon {
namespace net {

class ISocketStream;

namespace http {

// Photon's message states, in Message::message_status.
enum MessageStatus {
    INIT,           // nothing sent or received yet
    HEADER_SENT,    // the head went out
    BODY_SENT,      // body bytes were written (or attempted)
    HEADER_PARSED,  // a head was received
};

class Message : public IStream {
public:
    Headers headers;
    Headers trailers;  // of a received chunked body; kept apart from headers
    // Photon's public state (MessageStatus), kept up to date by the message.
    int message_status = INIT;

    explicit Message(const Limits& limits = {});
    // Photon's: buf_capacity bounds the head. The message keeps its own
    // storage: buf is not used, only freed with free() by the message if
    // buf_ownership.
    Message(void* buf, uint16_t buf_capacity, bool buf_ownership = false);
    ~Message() override;
    Message(const Message&) = delete;
    Message& operator=(const Message&) = delete;

    // Binds to a connection and clears the message: reads come through `in`
    // (owned by the caller, one per connection), writes go to `out`.
    void reset(InputBuffer* in, IStream* out) { reset(in, out, nullptr); }
    // Extension, for messages on an HTTP/2 stream (the library's HTTP/2
    // server and client bind them): the head goes out through `hs` as a
    // header block, and `in` / `out` carry the body bytes alone, which the
    // stream frames (no chunked encoding, no Transfer-Encoding; a
    // Content-Length still bounds what may be written).
    class HeadSender {
    public:
        virtual int send_head(Message& m) = 0;
        // Ends the body with trailer fields (Message::send(trailers)).
        virtual int send_trailers(Message&, const Headers&) { return errno = ENOTSUP, -1; }

    protected:
        ~HeadSender() = default;
    };
    void reset(InputBuffer* in, IStream* out, HeadSender* hs);
    // Extension, for the same: a head that came as a header block, its
    // fields set by the caller; the body is read from `in` with this framing.
    void head_received(Framing framing, uint64_t content_length);
    // Photon's: binds to socket stream s (reads through a buffer of the
    // message's own), clearing the message; deletes s later (at the next
    // reset or destruction) if stream_ownership.
    void reset(ISocketStream* s, bool stream_ownership = false);
    // Photon's: as above; a buffer of ours replaces buf (which is freed
    // with free() if buf_ownership), buf_capacity bounds the head.
    void reset(void* buf, uint16_t buf_capacity, bool buf_ownership = false,
               ISocketStream* s = nullptr, bool stream_ownership = false);
    // Clears the message and unbinds it (deleting an owned stream).
    void reset();
    // Sets message_status; INIT also lets the head be sent again.
    void reset_status(int status = INIT) {
        message_status = status;
        if (status == INIT) head_sent_ = false;
    }
    // Photon's: the socket stream the message is bound to, which the caller
    // now owns if the message did; the message is unbound (bytes it had
    // buffered are dropped). nullptr if none. A handler of an HTTPServer
    // gets the connection, still the server's (it closes it when the handler
    // returns); connection_stream() (server.h) is the way to take one over.
    ISocketStream* steal_socket_stream();
    // "1.1" or "1.0": the version received (1.1 for ours to send).
    std::string_view version() const { return minor_ ? "1.1" : "1.0"; }
    // The request's method: a Request's own, a Response's request's.
    Verb verb() const;

    int minor_version() const { return minor_; }  // HTTP/1.<minor>
    void minor_version(int minor) { minor_ = minor ? 1 : 0; }
    bool keep_alive() const { return keep_alive_; }
    // Before the head is sent: false adds "Connection: close" (a server
    // closes after such a response), true drops it. 0, or -1 as insert.
    int keep_alive(bool ka);
    Framing framing() const { return framing_; }
    // Content-Length of a received body; -1 if unknown (chunked, until close).
    int64_t body_size() const;
    // The size of the whole resource: the total of "Content-Range: bytes
    // a-b/total", else Content-Length; -1 if unknown.
    int64_t resource_size() const;
    // Why the last receive_header() or read() failed with EPROTO.
    ParseError parse_error() const { return error_; }
    const Limits& limits() const { return limits_; }

    // The body: read() fills count unless the body ends first (0 at its
    // end); -1 with errno EPROTO (parse_error()) or the stream's. A failure
    // after some bytes were copied returns them (a short count) and is
    // reported by the next call; EPROTO then sticks, while a timed-out read
    // may be retried and loses nothing.
    ssize_t read(void* buf, size_t count) override;
    ssize_t readv(const struct iovec* iov, int iovcnt) override;
    // Whether the whole received body has been read.
    bool body_done() const { return reader_.done(); }
    // Reads and drops the rest of the body: 0 or -1 as read().
    int skip_body();
    // Writes `input` as body bytes until its end (read() returning 0) or
    // `size` bytes: the bytes written, or -1 with errno of either stream.
    ssize_t write_stream(IStream* input, size_t size = -1);

    // Sends the head (once), deciding the body framing from the headers:
    // Transfer-Encoding: chunked, else Content-Length, else none (requests)
    // or chunked / until close (responses, see Response). 0 or -1 with errno
    // (EINVAL: a Transfer-Encoding other than "chunked", or with
    // Content-Length; a request without verb or target).
    int send_header();
    // Body bytes, after the head: all of count, or -1 with errno EMSGSIZE
    // (beyond the declared Content-Length, or a message without a body). A
    // response to HEAD counts them and sends none.
    ssize_t write(const void* buf, size_t count) override;
    ssize_t writev(const struct iovec* iov, int iovcnt) override;
    // Completes the message: head if unsent, then the body's end. 0 or -1
    // (EPROTO: fewer bytes than Content-Length were written).
    int send();
    // Extension: completes the message as send() does, with trailer fields
    // after the body: after the last chunk of a chunked HTTP/1.1 body, or as
    // a HEADERS frame ending an HTTP/2 stream (a response of the HTTP
    // server). -1 with errno EINVAL where the body cannot carry them:
    // HTTP/1.1 framed by Content-Length or by the close of the connection
    // (an HTTP/1.0 peer), a message without a body, or one completed
    // already; the head may have gone out, and send() completes the message.
    // Which fields may be trailers (RFC 9110 6.5.1: not framing, routing,
    // authentication...) is the caller's to choose.
    int send(const Headers& trailers);

    int close() override { return 0; }  // the connection belongs to the caller

    // Extension for senders that write the body themselves (sendfile, or the
    // head and a small body in one writev): the stream writes go to.
    IStream* output() const { return out_; }
    // Extension: appends the head send_header() would send to *head and marks
    // the message as sent (send() then adds nothing; on an HTTP/2 stream the
    // head is sent now and nothing is appended). The message must have
    // a Content-Length or no body (HEAD, 304...): the caller writes *head and
    // exactly that many body bytes (none without a body) to output(). -1 with
    // errno EINVAL if the head was sent or the body is not so framed.
    int take_head(std::string* head) {
        if (head_sent_ || headers.has("Transfer-Encoding") ||
            (body_allowed() && !headers.has("Content-Length"))) {
            errno = EINVAL;
            return -1;
        }
        if (head_sender_) {  // the head goes as a header block now; *head stays
            if (head_sender_->send_head(*this) < 0) return -1;
        } else {
            if (start_line(head) < 0) return -1;
            headers.serialize(head);
            head->append("\r\n");
        }
        head_sent_ = true;
        message_status = HEADER_SENT;
        writer_.reset(out_, Framing::None, 0);
        return 0;
    }

protected:
    // Reads a head and parses it with parse(); shared by the subclasses.
    int receive_head(bool request);
    virtual ParseError parse_head(std::string_view head) = 0;
    // Appends the start line; -1 with errno EINVAL if it cannot be sent.
    virtual int start_line(std::string* out) const = 0;
    // The framing of an outgoing body with no Content-Length or
    // Transfer-Encoding set.
    virtual Framing default_framing() = 0;
    // Whether an outgoing message of this kind may carry body bytes.
    virtual bool body_allowed() const { return true; }
    // An outgoing message framed as if it had a body whose bytes are not sent
    // (the answer to HEAD: the head a GET would get, body writes dropped).
    virtual bool body_discarded() const { return false; }
    // Sends the head once send_header() has chosen the body's framing: the
    // HTTP/1.1 bytes to out_, or the head sender's header block.
    int write_head();
    int fail(ParseError e);
    void clear_state();
    // The socket stream bound by reset(ISocketStream*), or the output if it
    // is one.
    ISocketStream* socket_stream() const;
    void release_stream();

    Limits limits_;
    InputBuffer* in_ = nullptr;
    IStream* out_ = nullptr;
    HeadSender* head_sender_ = nullptr;
    BodyReader reader_;
    BodyWriter writer_;
    ParseError error_ = ParseError::None;
    Framing framing_ = Framing::None;
    uint64_t content_length_ = 0;
    int minor_ = 1;
    bool keep_alive_ = true;
    bool head_sent_ = false;
    int read_err_ = 0;  // ended a short read(); reported by the next one
    // reset(ISocketStream*)'s binding.
    std::unique_ptr<InputBuffer> own_in_;
    ISocketStream* stream_ = nullptr;
    bool stream_ownership_ = false;
    void* own_buf_ = nullptr;  // Photon's buffer, freed for it
};

class Request : public Message {
public:
    using Message::Message;
    // Photon's: a request of verb v to url (see reset(v, url)); buf as
    // Message's.
    Request(void* buf, uint16_t buf_capacity, Verb v, std::string_view url,
            bool enable_proxy = false)
        : Message(buf, buf_capacity) {
        (void)reset(v, url, enable_proxy);
    }

    // Reads and parses the next request head, first dropping any unread
    // rest of the previous body. 0, or -1 with errno: ENODATA (the peer
    // closed before sending a byte: the normal end of keep-alive), EPROTO
    // (parse_error(); answer with http_status(parse_error()) and close) or
    // the stream's.
    int receive_header();

    Verb verb() const { return verb_; }
    void verb(Verb v) { verb_ = v; }
    std::string_view target() const { return target_; }
    // Sets the target for sending; -1 EINVAL if it holds space or controls.
    int target(std::string_view t);
    // The target's path, without the query (of an absolute-form target, its
    // path: "/x" for "http://a/x?q").
    std::string_view abs_path() const {
        if (url_.is_absolute()) return url_.path();
        return std::string_view(target_).substr(0, target_.find('?'));
    }
    // After the '?', "" if none.
    std::string_view query() const;
    // The authority of an absolute-form target (RFC 9112 3.2.2: it overrides
    // the Host field), else the Host field.
    std::string_view host() const {
        return url_.is_absolute() ? url_.host_port() : headers["Host"];
    }
    // The client sent "Expect: 100-continue" (HTTP/1.1, with a body). The
    // first read() answers "100 Continue" unless a response head went first.
    bool expect_continue() const { return expect_continue_; }
    // A server that answers without reading the body calls this so read()
    // does not send 100 Continue any more.
    void continue_sent() { expect_continue_ = false; }

    ssize_t read(void* buf, size_t count) override;

    // -- the client side ----------------------------------------------------
    using Message::reset;
    // A request of verb v to the http(s) `url`: target in origin-form
    // (absolute-form for an http URL when enable_proxy), Host from the URL,
    // headers cleared. A relative url ("/path?q") sets the target only.
    // 0, or -1 EINVAL (a bad URL).
    int reset(Verb v, std::string_view url, bool enable_proxy = false);
    // Re-targets to `location`, absolute or relative to url() (RFC 3986
    // 5.2), as reset() but keeping the headers other than Host.
    int redirect(Verb v, std::string_view location, bool enable_proxy = false);
    // The URL of reset() / redirect(); of a received request, its target if
    // in absolute-form, else empty.
    const URL& url() const { return url_; }
    bool secure() const { return url_.secure(); }
    uint16_t port() const { return url_.port(); }
    // The host of host() without port (nor IPv6 brackets).
    std::string_view host_no_port() const;
    // Photon's: the connection's socket stream, nullptr if unbound. For a
    // request an HTTPServer serves, reading or writing it takes the
    // connection over (connection_stream()).
    ISocketStream* get_socket_stream() { return socket_stream(); }

protected:
    ParseError parse_head(std::string_view head) override;
    int start_line(std::string* out) const override;
    Framing default_framing() override { return Framing::None; }

private:
    Verb verb_ = Verb::UNKNOWN;
    std::string target_;
    bool expect_continue_ = false;
    URL url_;
};

class Response : public Message {
public:
    using Message::Message;
    Response(char* buf, uint16_t buf_capacity) : Message(buf, buf_capacity) {}
    using Message::reset;
    // Photon's: as Message::reset(buf, ...), answering a request of verb v.
    void reset(char* buf, uint16_t buf_capacity, bool buf_ownership = false,
               ISocketStream* stream = nullptr, bool stream_ownership = false,
               Verb v = Verb::UNKNOWN) {
        Message::reset(buf, buf_capacity, buf_ownership, stream, stream_ownership);
        status_ = 200;
        reason_ = "OK";
        request_verb_ = v == Verb::UNKNOWN ? Verb::GET : v;
    }
    // The method of the request this answers.
    Verb verb() const { return request_verb_; }

    // Reads and parses a response head to a request of `request_verb` (HEAD
    // and CONNECT change the framing). 1xx heads are returned as they are.
    // 0 or -1 as Request::receive_header().
    int receive_header(Verb request_verb = Verb::GET);

    uint16_t status_code() const { return (uint16_t)status_; }
    std::string_view status_message() const { return reason_; }
    // Sets the status; an empty reason takes the standard one. -1 EINVAL if
    // code is outside 100..599 or reason holds CR, LF or controls.
    int set_result(int code, std::string_view reason = "");
    // For sending: the request this answers. HEAD / 1xx / 204 / 304 responses
    // and a 2xx to CONNECT carry no body (a HEAD answer gets the framing a GET
    // would, and its body writes succeed and are dropped); an HTTP/1.0 peer
    // gets an until-close body instead of chunked when no Content-Length is
    // set.
    void for_request(Verb request_verb, int request_minor) {
        request_verb_ = request_verb;
        peer_minor_ = request_minor;
    }

protected:
    ParseError parse_head(std::string_view head) override;
    int start_line(std::string* out) const override;
    Framing default_framing() override;
    bool body_allowed() const override;
    bool body_discarded() const override;

private:
    int status_ = 200;
    std::string reason_ = "OK";
    Verb request_verb_ = Verb::GET;
    int peer_minor_ = 1;
};

// The standard reason phrase of a status code, "" if unknown.
std::string_view status_reason(int code);
// Photon's name for it.
inline std::string_view obsolete_reason(int code) { return status_reason(code); }

}  // namespace http
}  // namespace net
}  // namespace photon
