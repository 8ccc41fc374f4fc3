// new_iostream (iostream.h): a std::streambuf over an ISocketStream, with a
// get area and a put area of its own, and the std::iostream that uses it.
#include <photon/net/iostream.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <photon/common/alog.h>

namespace photon {
namespace net {

namespace {

constexpr std::streamsize kBufSize = 8192;

class socket_streambuf : public std::streambuf {
public:
    socket_streambuf(ISocketStream* sock, bool owner) : sock_(sock), owner_(owner) {
        setp(obuf_, obuf_ + kBufSize);
    }
    ~socket_streambuf() override {
        flush_out();
        if (owner_) delete sock_;
    }

protected:
    // One recv: whatever the socket has, up to a buffer. Never touches the
    // put area, so one coroutine may read while another writes.
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        ssize_t r = sock_->recv(ibuf_, kBufSize);
        if (r <= 0) return traits_type::eof();  // EOF or error (errno says which)
        setg(ibuf_, ibuf_, ibuf_ + r);
        return traits_type::to_int_type(*gptr());
    }

    int_type overflow(int_type c) override {
        if (!flush_out()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }

    int sync() override { return flush_out() ? 0 : -1; }

    // Large writes skip the buffer (after what it holds).
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        if (n < kBufSize) return std::streambuf::xsputn(s, n);
        if (!flush_out()) return 0;
        ssize_t r = sock_->write(s, (size_t)n);
        return r > 0 ? r : 0;
    }

    // Large reads go to the socket directly once the buffer is drained;
    // fewer than n bytes only at EOF or on an error.
    std::streamsize xsgetn(char* s, std::streamsize n) override {
        std::streamsize got = std::min<std::streamsize>(n, egptr() - gptr());
        if (got > 0) {  // no get area yet: gptr() is null
            memcpy(s, gptr(), (size_t)got);
            gbump((int)got);
        }
        if (n - got < kBufSize) return got + std::streambuf::xsgetn(s + got, n - got);
        ssize_t r = sock_->read(s + got, (size_t)(n - got));
        if (r <= 0) return got;
        // Keep the last byte behind an empty get area, for unget().
        ibuf_[0] = s[got + r - 1];
        setg(ibuf_, ibuf_ + 1, ibuf_ + 1);
        return got + r;
    }

private:
    // Writes the put area out. A short write keeps the unsent tail at the
    // front of the buffer: a retry neither repeats nor drops a byte.
    bool flush_out() {
        size_t n = pptr() - pbase();
        if (!n) return true;
        ssize_t r = sock_->write(pbase(), n);
        size_t sent = r > 0 ? (size_t)r : 0;
        if (sent < n) memmove(obuf_, pbase() + sent, n - sent);
        setp(obuf_, obuf_ + kBufSize);
        pbump((int)(n - sent));
        return sent == n;
    }

    ISocketStream* sock_;
    bool owner_;
    char ibuf_[kBufSize];
    char obuf_[kBufSize];
};

// The streambuf is a base listed first, so that it is built before
// std::iostream takes its address and destroyed (flushing) after it.
struct streambuf_holder {
    socket_streambuf buf;
    streambuf_holder(ISocketStream* sock, bool owner) : buf(sock, owner) {}
};

class socket_iostream : private streambuf_holder, public std::iostream {
public:
    socket_iostream(ISocketStream* sock, bool owner)
        : streambuf_holder(sock, owner), std::iostream(&buf) {}
};

}  // namespace

std::iostream* new_iostream(ISocketStream* sock, bool owner_ship) {
    if (!sock) LOG_ERROR_RETURN(EINVAL, nullptr, "new_iostream: no socket");
    return new socket_iostream(sock, owner_ship);
}

}  // namespace net
}  // namespace photon
