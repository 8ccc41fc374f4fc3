// PhotonLibOS's second name for the FUSE adaptor: the same declarations as
// <photon/fs/fuse_adaptor.h> (see there).
#pragma once

#include <photon/fs/fuse_adaptor.h>
