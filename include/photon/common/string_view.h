// std::string_view, as PhotonLibOS's header of this name provides it (this
// library is C++17, so it is the standard one).
#pragma once

#include <string_view>
