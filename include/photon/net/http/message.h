// HTTP/1.1 messages over a connection: Request and Response read their head
// and body from an InputBuffer (which keeps bytes of the next pipelined
// message for the next receive) and write head and body to an IStream.
// No sockets here: a server or client binds them to a connection. Calls
// block the calling coroutine on the stream.
#pragma once

#include <sys/uio.h>
#include <cassert>
#include <cerrno>
#include <memory>
#include <string>
#include <string_view>

#include <photon/common/stream.h>
#include <photon/net/http/body.h>
#include <photon/net/http/headers.h>
#include <photon/net/http/parser.h>
#include <photon/net/http/url.h>
#include <photon/net/http/verb.h>

namespace photon {
namespace net {
namespace http {

class Message : public IStream {
public:
    Headers headers;
    Headers trailers;  // of a received chunked body; kept apart from headers

    explicit Message(const Limits& limits = {});
    // Binds to a connection and clears the message: reads come through `in`
    // (owned by the caller, one per connection), writes go to `out`.
    void reset(InputBuffer* in, IStream* out);

    int minor_version() const { return minor_; }  // HTTP/1.<minor>
    void minor_version(int minor) { minor_ = minor ? 1 : 0; }
    bool keep_alive() const { return keep_alive_; }
    Framing framing() const { return framing_; }
    // Content-Length of a received body; -1 if unknown (chunked, until close).
    int64_t body_size() const;
    // Why the last receive_header() or read() failed with EPROTO.
    ParseError parse_error() const { return error_; }
    const Limits& limits() const { return limits_; }

    // The body: read() fills count unless the body ends first (0 at its
    // end); -1 with errno EPROTO (parse_error()) or the stream's.
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
    // (beyond the declared Content-Length, or a message without a body).
    ssize_t write(const void* buf, size_t count) override;
    ssize_t writev(const struct iovec* iov, int iovcnt) override;
    // Completes the message: head if unsent, then the body's end. 0 or -1
    // (EPROTO: fewer bytes than Content-Length were written).
    int send();

    int close() override { return 0; }  // the connection belongs to the caller

    // Extension for senders that write the body themselves (sendfile, or the
    // head and a small body in one writev): the stream writes go to.
    IStream* output() const { return out_; }
    // Extension: appends the head send_header() would send to *head and marks
    // the message as sent (send() then adds nothing). The message must have
    // a Content-Length or no body (HEAD, 304...): the caller writes *head and
    // exactly that many body bytes (none without a body) to output(). -1 with
    // errno EINVAL if the head was sent or the body is not so framed.
    int take_head(std::string* head) {
        if (head_sent_ || headers.has("Transfer-Encoding") ||
            (body_allowed() && !headers.has("Content-Length"))) {
            errno = EINVAL;
            return -1;
        }
        if (start_line(head) < 0) return -1;
        headers.serialize(head);
        head->append("\r\n");
        head_sent_ = true;
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
    int fail(ParseError e);
    void clear_state();

    Limits limits_;
    InputBuffer* in_ = nullptr;
    IStream* out_ = nullptr;
    BodyReader reader_;
    BodyWriter writer_;
    ParseError error_ = ParseError::None;
    Framing framing_ = Framing::None;
    uint64_t content_length_ = 0;
    int minor_ = 1;
    bool keep_alive_ = true;
    bool head_sent_ = false;
};

class Request : public Message {
public:
    using Message::Message;

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
    std::string_view abs_path() const {
        return std::string_view(target_).substr(0, target_.find('?'));
    }
    // After the '?', "" if none.
    std::string_view query() const;
    std::string_view host() const { return headers["Host"]; }
    // The client sent "Expect: 100-continue" (HTTP/1.1, with a body). The
    // first read() answers "100 Continue" unless a response head went first.
    bool expect_continue() const { return expect_continue_; }
    // A server that answers without reading the body calls this so read()
    // does not send 100 Continue any more.
    void continue_sent() { expect_continue_ = false; }

    ssize_t read(void* buf, size_t count) override;

    // -- the client side ----------------------------------------------------
    using Message::reset;
    // A request of verb v to the absolute http(s) `url`: target in
    // origin-form (absolute-form for an http URL when enable_proxy), Host
    // from the URL, headers cleared. 0, or -1 EINVAL (a bad URL).
    int reset(Verb v, std::string_view url, bool enable_proxy = false);
    // Re-targets to `location`, absolute or relative to url() (RFC 3986
    // 5.2), as reset() but keeping the headers other than Host.
    int redirect(Verb v, std::string_view location, bool enable_proxy = false);
    // The URL of reset() / redirect(); empty for a received request.
    const URL& url() const { return url_; }
    bool secure() const { return url_.secure(); }
    uint16_t port() const { return url_.port(); }
    std::string_view host_no_port() const { return url_.host(); }

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

    // Reads and parses a response head to a request of `request_verb` (HEAD
    // and CONNECT change the framing). 1xx heads are returned as they are.
    // 0 or -1 as Request::receive_header().
    int receive_header(Verb request_verb = Verb::GET);

    int status_code() const { return status_; }
    std::string_view status_message() const { return reason_; }
    // The size of the whole resource: the total of "Content-Range: bytes
    // a-b/total", else Content-Length; -1 if unknown.
    int64_t resource_size() const;
    // Sets the status; an empty reason takes the standard one. -1 EINVAL if
    // code is outside 100..599 or reason holds CR, LF or controls.
    int set_result(int code, std::string_view reason = "");
    // For sending: the request this answers. HEAD / 1xx / 204 / 304 responses
    // and a 2xx to CONNECT carry no body; an HTTP/1.0 peer gets an
    // until-close body instead of chunked when no Content-Length is set.
    void for_request(Verb request_verb, int request_minor) {
        request_verb_ = request_verb;
        peer_minor_ = request_minor;
    }

protected:
    ParseError parse_head(std::string_view head) override;
    int start_line(std::string* out) const override;
    Framing default_framing() override;
    bool body_allowed() const override;

private:
    int status_ = 200;
    std::string reason_ = "OK";
    Verb request_verb_ = Verb::GET;
    int peer_minor_ = 1;
};

// The standard reason phrase of a status code, "" if unknown.
std::string_view status_reason(int code);

}  // namespace http
}  // namespace net
}  // namespace photon
