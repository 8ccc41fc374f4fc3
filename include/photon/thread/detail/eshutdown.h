// ESHUTDOWN, the errno of a closed channel and of an interrupt that ends a
// semaphore wait, where the C library lacks it (Linux value), as Photon's
// thread.h defines it. thread.h still provides it.
#pragma once

#include <cerrno>

#ifndef ESHUTDOWN
#define ESHUTDOWN 108
#endif
