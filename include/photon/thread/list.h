// Intrusive lists, under the path PhotonLibOS declares them
// (photon/thread/list.h); the same header as photon/common/intrusive_list.h.
#pragma once

#include <photon/common/intrusive_list.h>
