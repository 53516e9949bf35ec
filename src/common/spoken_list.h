#pragma once
// Lists as a sentence says them, for messages: "local, qemu or ssh".
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// "local, qemu or ssh" (`last` = "or"); "ssh" alone; "" for none.
std::string spoken_list(const std::vector<std::string_view>& words, std::string_view last = "or");
std::string spoken_list(const std::vector<std::string>& words, std::string_view last = "or");

}  // namespace kbench
