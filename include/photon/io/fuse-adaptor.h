// PhotonLibOS's second name for the FUSE adaptor: the same declarations as
// <photon/fs/fuse_adaptor.h> (see there).
// Floor: fs (tools/floors.txt), above its folder's: the fs header's second name.
#pragma once

#include <photon/fs/fuse_adaptor.h>
