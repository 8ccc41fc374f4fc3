// std::string_view, as PhotonLibOS's header of this name provides it, in every C++ mode.
//
// C++17 and later, and libc++ in any mode: the standard <string_view>. C++14 on libstdc++,
// whose <string_view> is empty there: std::basic_string_view from detail/string_view14.h,
// the same class to the ABI as the one photon (built as C++17) was compiled against, so a
// C++14 program links with photon's functions that take a std::string_view.
// Differences from PhotonLibOS: doc/compat.md#commonstring_viewh
#pragma once

#include <string>  // defines the library's version macros

#if __cplusplus >= 201703L || defined(_LIBCPP_VERSION) || defined(__cpp_lib_string_view)
#include <string_view>
#elif defined(__GLIBCXX__)
#include <photon/common/detail/string_view14.h>
#else
#error "photon: no std::string_view for this standard library before C++17"
#endif
