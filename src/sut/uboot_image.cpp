#include "sut/uboot_image.h"

#include <algorithm>
#include <cstdint>

#include "common/errors.h"
#include "sut/initramfs.h"

namespace kbench::sut {

namespace {

// Values of U-Boot's include/image.h.
constexpr std::uint32_t kMagic = 0x27051956;
constexpr std::uint8_t kOsLinux = 5;
constexpr std::uint8_t kArchArm64 = 22;
constexpr std::uint8_t kArchX86_64 = 24;
constexpr std::uint8_t kTypeRamdisk = 3;
constexpr std::uint8_t kCompressionNone = 0;
constexpr std::size_t kHeaderSize = 64;
constexpr std::size_t kNameSize = 32;
constexpr std::size_t kHeaderCrcOffset = 4;

void put_be32(std::string& out, std::size_t offset, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out[offset + i] = static_cast<char>((value >> (24 - 8 * i)) & 0xFF);
}

}  // namespace

std::string uboot_ramdisk_image(const std::string& data, const std::string& arch, const std::string& name) {
  if (data.size() > UINT32_MAX) {
    throw InputError("a ramdisk of " + std::to_string(data.size()) + " bytes: expected less than 4 GiB for U-Boot");
  }
  std::uint8_t arch_code = 0;
  if (arch == "aarch64") {
    arch_code = kArchArm64;
  } else if (arch == "x86_64") {
    arch_code = kArchX86_64;
  } else {
    throw InputError("U-Boot image architecture '" + arch + "': expected x86_64 or aarch64");
  }
  std::string header(kHeaderSize, '\0');
  put_be32(header, 0, kMagic);
  // 8: creation time, 16: load address, 20: entry point, all 0.
  put_be32(header, 12, static_cast<std::uint32_t>(data.size()));
  put_be32(header, 24, crc32(data));
  header[28] = static_cast<char>(kOsLinux);
  header[29] = static_cast<char>(arch_code);
  header[30] = static_cast<char>(kTypeRamdisk);
  header[31] = static_cast<char>(kCompressionNone);
  header.replace(32, std::min(name.size(), kNameSize), name, 0, kNameSize);
  put_be32(header, kHeaderCrcOffset, crc32(header));
  return header + data;
}

}  // namespace kbench::sut
