#pragma once
// Lists as a sentence says them, for messages: "local, qemu or ssh".
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// "local, qemu or ssh" (`last` = "or"); "ssh" alone; "" for none.
std::string spoken_list(const std::vector<std::string_view>& words, std::string_view last = "or");
std::string spoken_list(const std::vector<std::string>& words, std::string_view last = "or");

// Every item's `field` (a data member or a function of the item), joined by
// ", ": "a, b, c", as a list of known names prints. A plain loop rather than
// a range view: clang 14 with libstdc++ 12 (the fuzz build) cannot compile
// std::views::transform.
template <typename Items, typename Field>
std::string comma_list(const Items& items, Field field) {
  std::string list;
  bool first = true;
  for (const auto& item : items) {
    if (!first) list += ", ";
    first = false;
    list += std::invoke(field, item);
  }
  return list;
}

}  // namespace kbench
