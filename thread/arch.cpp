// photon::PAGE_SIZE (arch.h).
#include <photon/thread/arch.h>

#include "stack_slab.h"

namespace photon {

uint32_t PAGE_SIZE = (uint32_t)page_size();

}  // namespace photon
