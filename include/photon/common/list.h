// Intrusive circular doubly-linked lists: the element embeds its links, so
// insertion and removal never allocate. Not thread-safe by itself. The lists
// are PhotonLibOS's (photon/common/intrusive_list.h, also reached as
// photon/thread/list.h); this name stays for the code that includes it.
#pragma once

#include <photon/common/intrusive_list.h>
