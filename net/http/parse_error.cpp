// ParseError -> status code and text.
#include <photon/net/http/parser.h>

namespace photon {
namespace net {
namespace http {

int http_status(ParseError e) {
    switch (e) {
        case ParseError::None:
            return 200;
        case ParseError::BodyTooLarge:
            return 413;
        case ParseError::UriTooLong:
            return 414;
        case ParseError::FieldLineTooLong:
        case ParseError::HeadTooLarge:
        case ParseError::TooManyFields:
        case ParseError::TrailersTooLarge:
            return 431;
        case ParseError::UnknownMethod:
        case ParseError::UnsupportedTransferEncoding:
            return 501;
        case ParseError::VersionNotSupported:
            return 505;
        default:
            return 400;
    }
}

const char* parse_error_str(ParseError e) {
    switch (e) {
#define PHOTON_HTTP_PE_(x) \
    case ParseError::x:    \
        return #x;
        PHOTON_HTTP_PE_(None)
        PHOTON_HTTP_PE_(BadRequestLine)
        PHOTON_HTTP_PE_(BadTarget)
        PHOTON_HTTP_PE_(BadVersion)
        PHOTON_HTTP_PE_(BadStatusLine)
        PHOTON_HTTP_PE_(BareCR)
        PHOTON_HTTP_PE_(BareLF)
        PHOTON_HTTP_PE_(BadFieldName)
        PHOTON_HTTP_PE_(BadFieldValue)
        PHOTON_HTTP_PE_(ObsFold)
        PHOTON_HTTP_PE_(MissingHost)
        PHOTON_HTTP_PE_(BadHost)
        PHOTON_HTTP_PE_(BadContentLength)
        PHOTON_HTTP_PE_(MultipleContentLength)
        PHOTON_HTTP_PE_(ContentLengthWithTransferEncoding)
        PHOTON_HTTP_PE_(TransferEncodingInHttp10)
        PHOTON_HTTP_PE_(ChunkedNotLast)
        PHOTON_HTTP_PE_(BadTransferEncoding)
        PHOTON_HTTP_PE_(BadChunk)
        PHOTON_HTTP_PE_(ChunkLineTooLong)
        PHOTON_HTTP_PE_(Truncated)
        PHOTON_HTTP_PE_(BodyTooLarge)
        PHOTON_HTTP_PE_(UriTooLong)
        PHOTON_HTTP_PE_(FieldLineTooLong)
        PHOTON_HTTP_PE_(HeadTooLarge)
        PHOTON_HTTP_PE_(TooManyFields)
        PHOTON_HTTP_PE_(TrailersTooLarge)
        PHOTON_HTTP_PE_(UnknownMethod)
        PHOTON_HTTP_PE_(UnsupportedTransferEncoding)
        PHOTON_HTTP_PE_(VersionNotSupported)
#undef PHOTON_HTTP_PE_
    }
    return "?";
}

}  // namespace http
}  // namespace net
}  // namespace photon
