// Lets LOG_* print std::string and std::string_view, and so estring, estring_view and
// string_key, which derive from them (PhotonLibOS overloads each by name; the result is the
// same). Any thread, never yields.
#pragma once
#include <string>
#include <string_view>

#include <photon/common/alog.h>

inline LogBuffer& operator<<(LogBuffer& log, std::string_view s) {
    log.put(s.data(), s.size());
    return log;
}

inline LogBuffer& operator<<(LogBuffer& log, const std::string& s) {
    log.put(s.data(), s.size());
    return log;
}
