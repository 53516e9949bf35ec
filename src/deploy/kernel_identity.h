#pragma once
// What a kernel image says it is, so that a booted SUT can be checked to run
// exactly the kernel the swprofile names before anything is measured.
#include <optional>
#include <string>

namespace kbench::deploy {

// `uname -r` and `uname -v` of a build. The version holds the build number
// and time ("#1 SMP PREEMPT_DYNAMIC Debian 6.1.106-3 (2024-08-26)"), so two
// builds of one release differ in it.
struct KernelIdentity {
  std::string release;
  std::string version;
  bool operator==(const KernelIdentity&) const = default;
};

// Read from the image's own bytes: the kernel_version string of an x86
// bzImage's setup header, else the "Linux version ..." banner of an
// uncompressed or gzip-compressed image (arm64 Image, Image.gz). nullopt when
// neither is found (e.g. an EFI zboot image).
std::optional<KernelIdentity> identity_of_image(const std::string& image_bytes);

// The banner as /proc/version prints it: "Linux version REL (builder)
// (compiler) VERSION". nullopt when `text` is not such a banner.
std::optional<KernelIdentity> identity_of_banner(const std::string& text);

}  // namespace kbench::deploy
