#include "app/option_values.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "common/errors.h"
#include "plan/plan.h"

namespace kbench::app {

namespace {

std::string quoted(const std::string& option, const std::string& text) { return option + " '" + text + "'"; }

}  // namespace

std::optional<double> parse_fdr(const std::string& text) {
  if (text == "off") return std::nullopt;
  double q = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, q, std::chars_format::general);
  if (error == std::errc() && stop == end && q > 0 && q < 1) return q;
  throw InputError("--fdr " + text + ": expected a level between 0 and 1 (e.g. 0.05) or off");
}

int parse_integer(const std::string& option, const std::string& text, int min, int max) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error == std::errc() && stop == end && !text.empty() && value >= min && value <= max) return value;
  throw InputError(fmt::format("{}: expected a whole number from {} to {}", quoted(option, text), min, max));
}

double parse_decimal(const std::string& option, const std::string& text, double min) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (error == std::errc() && stop == end && std::isfinite(value) && value >= min) return value;
  throw InputError(fmt::format("{}: expected a number >= {}", quoted(option, text), min));
}

double parse_min_change(const std::string& text) {
  double value = -1;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value, std::chars_format::general);
  // Reports print the margin with two decimals: a smaller non-zero margin
  // would read "+/-0.00%", and one beyond kMaxMinChangePct is no margin at
  // all (every change lies inside it), which is a typo, not a wish.
  const bool parsed = error == std::errc() && stop == end && std::isfinite(value);
  if (parsed && (value == 0 || (value >= kMinMinChangePct && value <= kMaxMinChangePct))) return value;
  throw InputError(fmt::format("{}: expected 0 (no margin) or a percentage from {} to {}", quoted("--min-change", text),
                               kMinMinChangePct, kMaxMinChangePct));
}

std::chrono::seconds parse_timeout(const std::string& option, const std::string& text) {
  return plan::parse_timeout(text, option);
}

std::chrono::milliseconds parse_spread(const std::string& text) {
  if (text == "0") return std::chrono::milliseconds(0);
  try {
    return plan::parse_duration(text, "--spread");
  } catch (const InputError&) {
    throw InputError("--spread '" + text + "': expected 0 or a duration such as 90s, 10m or 1h30m");
  }
}

std::string parse_glob(const std::string& option, const std::string& text) {
  if (text.empty()) throw InputError(option + " '': expected a non-empty glob, e.g. '*' for all");
  const auto invalid = [&](const std::string& what) {
    return InputError(quoted(option, text) + ": expected a glob " + what);
  };
  std::string canonical;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') throw invalid("without backslashes (write [*] for a literal *)");
    if (text[i] != '[') {
      canonical += text[i];
      continue;
    }
    // A set: "[", an optional negation, an optional leading ']' (a member, not
    // the end), then members up to the closing ']'.
    std::size_t j = i + 1;
    canonical += '[';
    if (j < text.size() && (text[j] == '!' || text[j] == '^')) {
      canonical += '^';
      ++j;
    }
    if (j < text.size() && text[j] == ']') canonical += text[j++];
    for (; j < text.size() && text[j] != ']'; ++j) {
      if (text[j] == '\\') throw invalid("without backslashes (write [*] for a literal *)");
      if (text[j] == '[' && j + 1 < text.size() && text[j + 1] == ':') {
        throw invalid("without character classes such as [:alpha:] (list the characters, e.g. [a-z])");
      }
      canonical += text[j];
    }
    if (j == text.size()) {
      throw invalid(fmt::format("whose '[' (character {}) is closed by a ']' (write [[] for a literal [)", i + 1));
    }
    canonical += ']';
    i = j;
  }
  return canonical;
}

void check_name(const std::string& option, const std::string& text) {
  if (const std::string expected = plan::name_expectation(text); !expected.empty()) {
    throw InputError(quoted(option, text) + ": expected " + expected);
  }
}

}  // namespace kbench::app
