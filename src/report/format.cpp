#include "report/format.h"

#include <cmath>
#include <fmt/format.h>

namespace kbench::report {

namespace {

// Decimals that give two significant digits for 0 < |v| < 1, at least two.
int decimals_for_small(double magnitude) {
  const int exponent = static_cast<int>(std::floor(std::log10(magnitude)));  // -1 for 0.15
  return std::max(2, 1 - exponent);
}

}  // namespace

std::string format_number(double value) {
  if (std::isnan(value)) return "";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return "0.00";
  if (magnitude >= 1) return fmt::format("{:.2f}", value);
  if (magnitude < 1e-6) return fmt::format("{:.1e}", value);
  int decimals = decimals_for_small(magnitude);
  std::string text = fmt::format("{:.{}f}", value, decimals);
  // Rounding can carry into the next decade (0.00999 -> "0.0100", 0.996 ->
  // "1.00"); re-derive the decimals from the rounded value to keep two
  // significant digits, or two decimals once it has reached 1.
  const double rounded = std::fabs(std::stod(text));
  if (rounded >= 1) return fmt::format("{:.2f}", value);
  const int rounded_decimals = decimals_for_small(rounded);
  if (rounded_decimals != decimals) text = fmt::format("{:.{}f}", value, rounded_decimals);
  return text;
}

std::string format_percent(double percent, int decimals) {
  if (std::isnan(percent)) return "";
  if (std::isinf(percent)) return percent > 0 ? "inf%" : "-inf%";
  std::string text = fmt::format("{:.{}f}", percent, decimals);
  // A change that rounds to zero is shown as "0.00%", whatever its sign.
  if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text + "%";
}

std::string_view mark_prefix(Verdict verdict) {
  switch (verdict) {
    case Verdict::Improvement: return "(I) ";
    case Verdict::Regression: return "(R) ";
    case Verdict::None: break;
  }
  return "";
}

std::string_view mark_suffix(Verdict verdict) {
  switch (verdict) {
    case Verdict::Improvement: return " (I)";
    case Verdict::Regression: return " (R)";
    case Verdict::None: break;
  }
  return "";
}

std::string format_exact(double value) {
  if (std::isnan(value)) return "";
  return fmt::format("{}", value);
}

std::string count_noun(int count, std::string_view singular, std::string_view plural) {
  return fmt::format("{} {}", count, count == 1 ? singular : plural);
}

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;
  return width;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Improvement: return "improvement";
    case Verdict::Regression: return "regression";
    case Verdict::None: break;
  }
  return "none";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace kbench::report
