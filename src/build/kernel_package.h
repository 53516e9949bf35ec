#pragma once
// The kernel image inside a Debian kernel package (linux-image-*.deb), for
// SUTs that boot an image with kbench's own initramfs (qemu, lava) where an
// ssh SUT installs the whole package: one swprofile serves them all, and a
// plan moves between them by its sut: alone. The modules stay in the
// package: those SUTs boot the image alone, as they do a built kernel.
// Unpacked once into the build cache (docs/builds.md):
//   <cache>/deb/<sha256 of the package>/vmlinuz-<release>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace kbench::build {

// The package's boot/vmlinuz-<release>, unpacked under `cache_dir` unless it
// is there already. InputError naming `profile_name` when `deb` is not a
// package holding exactly one kernel image; RunError when dpkg-deb fails
// otherwise.
std::string kernel_image_of_deb(const std::string& deb, const std::string& profile_name,
                                const std::string& cache_dir);

// When every SUT of the plan boots an image and installs nothing
// (sut::Capability::BootsKernel without Modules): each selected swprofile
// with kernel.deb gets kernel.image from it, and kernel.deb cleared.
// `selected` empty: all.
void unpack_deb_kernels(plan::Plan& plan, const std::vector<std::string>& selected, const std::string& cache_dir);

}  // namespace kbench::build
