#pragma once
// U-Boot's legacy image format (its include/image.h): a 64-byte big-endian
// header, with checksums of itself and of the data, before the data. U-Boot's
// booti and bootm take a ramdisk with this header without being told its
// size, which is how LAVA's U-Boot device types pass one.
#include <string>

namespace kbench::sut {

// `data` as an uncompressed Linux ramdisk image for a kernel of architecture
// `arch` (x86_64 | aarch64), named `name` (at most 32 bytes kept). Its
// creation time is 0, so one input always gives the same bytes.
std::string uboot_ramdisk_image(const std::string& data, const std::string& arch, const std::string& name);

}  // namespace kbench::sut
