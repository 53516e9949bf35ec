#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kbench {

enum class Better { Higher, Lower };

std::string_view to_string(Better better);
// "higher" or "lower"; nullopt for anything else.
std::optional<Better> parse_better(std::string_view text);

// One metric a benchmark reports. The label follows the grammar
// `<name>[: k:v, k:v] (<unit>)`, e.g. `fork: p:512, d:10 (seconds)`:
// `name` holds everything before the unit, parameters included.
struct ResultClass {
  std::string name;
  std::string unit;
  Better better = Better::Lower;

  std::string label() const { return name + " (" + unit + ")"; }
  bool operator==(const ResultClass&) const = default;
};

}  // namespace kbench
