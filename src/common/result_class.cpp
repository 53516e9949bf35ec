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

std::optional<ResultClass> parse_result_class_label(std::string_view label, Better better) {
  if (label.size() < 4 || label.back() != ')') return std::nullopt;
  const auto open = label.rfind(" (");
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  ResultClass rc;
  rc.name = std::string(label.substr(0, open));
  rc.unit = std::string(label.substr(open + 2, label.size() - open - 3));
  rc.better = better;
  if (rc.unit.empty()) return std::nullopt;
  return rc;
}

}  // namespace kbench
