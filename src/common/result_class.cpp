#include "common/result_class.h"

namespace kbench {

std::string_view to_string(Better better) {
  return better == Better::Higher ? "higher" : "lower";
}

std::optional<Better> parse_better(std::string_view text) {
  if (text == "higher") return Better::Higher;
  if (text == "lower") return Better::Lower;
  return std::nullopt;
}

}  // namespace kbench
