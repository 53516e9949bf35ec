#include "common/device_tree.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/errors.h"

namespace kbench {

namespace {

std::uint32_t big_endian(const unsigned char* bytes) {
  return std::uint32_t{bytes[0]} << 24 | std::uint32_t{bytes[1]} << 16 | std::uint32_t{bytes[2]} << 8 | bytes[3];
}

// kbench_common goes into the aarch64 agent too, which is built without fmt.
std::string hex32(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

}  // namespace

std::string device_tree_problem(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return std::filesystem::exists(path, ec) ? "it is not a regular file" : "there is no such file";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return "it cannot be read";
  // The header's first two fields: magic and totalsize.
  unsigned char header[8] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  if (in.gcount() < 4) return "it is shorter than a device tree header";
  const std::uint32_t magic = big_endian(header);
  if (magic != kDeviceTreeMagic) {
    return "it starts with " + hex32(magic) + ", not the device tree magic " + hex32(kDeviceTreeMagic);
  }
  if (in.gcount() < 8) return "it is shorter than a device tree header";
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (const std::uint32_t total = big_endian(header + 4); !ec && total > size) {
    return "it is cut short: its header says " + std::to_string(total) + " bytes, the file has " + std::to_string(size);
  }
  return "";
}

void require_device_tree(const std::string& path) {
  if (const std::string problem = device_tree_problem(path); !problem.empty()) {
    throw InputError("swprofile kernel.dtb " + path + ": expected a flattened device tree (" + problem + ")");
  }
}

}  // namespace kbench
