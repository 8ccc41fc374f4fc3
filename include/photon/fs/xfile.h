// Composite files, as PhotonLibOS declares them: one file made of several.
//   linear:            the files one after another, each as long as its
//                      fstat() says when the composite is made;
//   fixed-size linear: the same with every part `unit_size` bytes long;
//   stripe:            `stripe_size` (a power of two) blocks dealt round-robin
//                      over n files of equal size, a multiple of stripe_size.
// The size is fixed at creation: reads at or past the end return 0 (short
// across it), writes there fail with ENOSPC (short across it). lseek, read,
// write and preadv / pwritev come from VirtualFile; fstat is the first
// part's with the composite's size; filesystem() is nullptr (ENOSYS);
// fchmod / fchown / ftruncate fail with ENOSYS. Calls block as the parts do;
// one coroutine at a time per file.
//
// Differences from PhotonLibOS: doc/compat.md#fsxfileh
#pragma once

#include <cinttypes>
#include <cstdint>

namespace photon {
namespace fs {

class IFile;

// A linear file over `n` files of their own sizes; nullptr with errno
// (EINVAL: no files or a null one; a part's fstat() error).
IFile* new_linear_file(IFile** files, uint64_t n, bool ownership = false);

// A linear file over `n` files of `unit_size` bytes each; nullptr with
// EINVAL (no or null files, unit_size 0, n * unit_size past 2^63).
IFile* new_fixed_size_linear_file(uint64_t unit_size, IFile** files, uint64_t n,
                                  bool ownership = false);

// A stripe file over `n` files; nullptr with errno: EINVAL (no or null
// files, stripe_size not a power of two, sizes unequal, empty or not a
// multiple of stripe_size), or a part's fstat() error.
IFile* new_stripe_file(uint64_t stripe_size, IFile** files, uint64_t n, bool ownership = false);

}  // namespace fs
}  // namespace photon
