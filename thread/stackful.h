// stackful_malloc()'s blocks at the low end of a coroutine stack. Private
// header.
#pragma once

#include "thread_control.h"

namespace photon {

// The end of th's stackful_malloc() blocks (an alive coroutine's), or
// nullptr if it has none: stack_pages_gc() keeps the pages below it.
char* stackful_end(const thread* th);

}  // namespace photon
