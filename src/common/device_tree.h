#pragma once
// Flattened device trees (what dtc writes and a kernel build leaves under
// arch/arm64/boot/dts/): a swprofile's kernel may boot with its own instead
// of the one the board or its firmware gives.
#include <string>

namespace kbench {

// The magic number a flattened device tree starts with (big-endian).
inline constexpr unsigned kDeviceTreeMagic = 0xd00dfeed;

// What is wrong with the file at `path` as a flattened device tree: "" when
// nothing is, else why ("it cannot be read", "it starts with 0x7f454c46,
// not the device tree magic 0xd00dfeed", ...), to follow the file's name in
// an error message.
std::string device_tree_problem(const std::string& path);

// Throws InputError naming the swprofile's kernel.dtb and its problem when
// the file at `path` is not a flattened device tree: what a SUT checks
// before it boots one.
void require_device_tree(const std::string& path);

}  // namespace kbench
