#include "report/format.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <span>
#include <fmt/format.h>

namespace kbench::report {

using analysis::ColumnSummary;
using analysis::ProfileRow;
using analysis::ProfileTable;
using analysis::Row;
using analysis::SignConvention;
using analysis::Table;
using analysis::Verdict;

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
  // Fixed notation of a value near 1e300 is a 300-digit cell; no measured
  // quantity reaches 1e15 in its unit (a petabyte per second, 11 days in ns).
  if (magnitude >= 1e15) return fmt::format("{:.3e}", value);
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
    case Verdict::Undecided: return "(?) ";
    case Verdict::Unchanged:  // most rows of a big table: a mark there would bury the others
    case Verdict::None: break;
  }
  return "";
}

std::string_view mark_suffix(Verdict verdict) {
  switch (verdict) {
    case Verdict::Improvement: return " (I)";
    case Verdict::Regression: return " (R)";
    case Verdict::Undecided: return " (?)";
    case Verdict::Unchanged:
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

namespace {

struct Range {
  char32_t first;
  char32_t last;
};

// Combining marks (general categories Mn, Me) and format characters that
// terminals draw with no width, from the Unicode Character Database; the
// blocks names and labels actually use (Latin, Greek, Cyrillic, Hebrew, Arabic,
// Devanagari, Thai, Hangul, symbols), not every script.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F},   {0x0483, 0x0489},   {0x0591, 0x05BD},   {0x05BF, 0x05BF},   {0x05C1, 0x05C2},
    {0x05C4, 0x05C5},   {0x05C7, 0x05C7},   {0x0610, 0x061A},   {0x064B, 0x065F},   {0x0670, 0x0670},
    {0x06D6, 0x06DC},   {0x06DF, 0x06E4},   {0x06E7, 0x06E8},   {0x06EA, 0x06ED},   {0x0900, 0x0902},
    {0x093A, 0x093A},   {0x093C, 0x093C},   {0x0941, 0x0948},   {0x094D, 0x094D},   {0x0951, 0x0957},
    {0x0962, 0x0963},   {0x0E31, 0x0E31},   {0x0E34, 0x0E3A},   {0x0E47, 0x0E4E},   {0x1160, 0x11FF},
    {0x1AB0, 0x1AFF},   {0x1DC0, 0x1DFF},   {0x200B, 0x200F},   {0x202A, 0x202E},   {0x2060, 0x2064},
    {0x20D0, 0x20FF},   {0x302A, 0x302D},   {0x3099, 0x309A},   {0xFE00, 0xFE0F},   {0xFE20, 0xFE2F},
    {0xFEFF, 0xFEFF},   {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xE0100, 0xE01EF},
};

// East Asian Width W and F (UAX #11): CJK, kana, Hangul syllables, fullwidth
// forms and the emoji that terminals draw two columns wide.
constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x23F0, 0x23F0},
    {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267F, 0x267F},
    {0x2693, 0x2693},   {0x26A1, 0x26A1},   {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},
    {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},   {0x2728, 0x2728},
    {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},
    {0x2E80, 0x3029},   {0x302E, 0x303E},   {0x3041, 0x3098},   {0x309B, 0x33FF},   {0x3400, 0x4DBF},
    {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
    {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4},
    {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E},
    {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB},
    {0x1F900, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

template <std::size_t N>
bool in_ranges(char32_t c, const Range (&ranges)[N]) {
  const Range* it = std::upper_bound(std::begin(ranges), std::end(ranges), c,
                                     [](char32_t value, const Range& range) { return value < range.first; });
  return it != std::begin(ranges) && c <= (it - 1)->last;
}

constexpr char32_t kReplacement = 0xFFFD;

// The code point at `pos`, advancing `pos` past it. A byte that does not start
// a valid sequence is U+FFFD of one byte, so Latin-1 names still count one
// column per byte.
char32_t decode(std::string_view text, std::size_t& pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  std::size_t length = 0;
  char32_t code = 0;
  if (lead < 0x80) length = 1, code = lead;
  else if ((lead & 0xE0) == 0xC0) length = 2, code = lead & 0x1F;
  else if ((lead & 0xF0) == 0xE0) length = 3, code = lead & 0x0F;
  else if ((lead & 0xF8) == 0xF0) length = 4, code = lead & 0x07;
  if (length == 0 || pos + length > text.size()) {
    ++pos;
    return kReplacement;
  }
  for (std::size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[pos + i]);
    if ((next & 0xC0) != 0x80) {
      ++pos;
      return kReplacement;
    }
    code = (code << 6) | (next & 0x3F);
  }
  pos += length;
  return code;
}

std::size_t code_point_width(char32_t c) {
  if (c < 0x300) return 1;
  if (in_ranges(c, kZeroWidth)) return 0;
  return in_ranges(c, kWide) ? 2 : 1;
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t pos = 0; pos < text.size();) width += code_point_width(decode(text, pos));
  return width;
}

std::size_t prefix_bytes_for_width(std::string_view text, std::size_t columns) {
  std::size_t used = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t next = pos;
    const std::size_t width = code_point_width(decode(text, next));
    // Combining marks stay with the character before them.
    if (width > 0 && used + width > columns && (pos > 0 || columns == 0)) break;
    used += width;
    pos = next;
  }
  return pos;
}

std::vector<std::string> wrap_text(std::string_view text, std::size_t width, std::size_t indent) {
  std::vector<std::string> lines;
  std::string line;
  auto room = [&]() -> std::size_t {
    if (lines.empty()) return std::max<std::size_t>(width, 1);
    return width > indent ? width - indent : 1;
  };
  auto flush = [&] {
    lines.push_back((lines.empty() ? "" : std::string(indent, ' ')) + line);
    line.clear();
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t space = text.find(' ', pos);
    std::string_view word = text.substr(pos, space == std::string_view::npos ? text.size() - pos : space - pos);
    pos = space == std::string_view::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    const std::size_t needed = display_width(line) + (line.empty() ? 0 : 1) + display_width(word);
    if (needed <= room()) {
      line += (line.empty() ? "" : " ") + std::string(word);
      continue;
    }
    if (!line.empty()) flush();
    while (display_width(word) > room()) {
      std::size_t cut = prefix_bytes_for_width(word, room());
      const std::size_t slash = word.substr(0, cut).rfind('/');
      if (slash != std::string_view::npos && slash > 0) cut = slash + 1;
      line = std::string(word.substr(0, cut));
      flush();
      word = word.substr(cut);
    }
    line = std::string(word);
  }
  if (!line.empty() || lines.empty()) flush();
  return lines;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Improvement: return "improvement";
    case Verdict::Regression: return "regression";
    case Verdict::Unchanged: return "unchanged";
    case Verdict::Undecided: return "undecided";
    case Verdict::None: break;
  }
  return "none";
}

std::string format_level(double level) {
  if (std::isnan(level)) return "";
  return fmt::format("{:g}%", std::round(level * 1e5) / 1e3);
}

RowNames::RowNames(const Table& table) {
  for (const Row& row : table.rows) add(row.benchmark, row.params);
  settle();
}

RowNames::RowNames(const ProfileTable& table) {
  for (const ProfileRow& row : table.rows) add(row.benchmark, row.params);
  settle();
}

void RowNames::add(const std::string& benchmark, const Params& params) {
  std::vector<Params>& sets = sets_[benchmark];
  if (std::find(sets.begin(), sets.end(), params) == sets.end()) sets.push_back(params);
}

// A key differs when some set lacks it or gives it another value than the
// first set does.
void RowNames::settle() {
  for (const auto& benchmark_sets : sets_) {
    // Named, not bound: clang before 16 cannot capture a structured binding (the lambda below).
    const std::string& benchmark = benchmark_sets.first;
    const std::vector<Params>& sets = benchmark_sets.second;
    if (sets.size() < 2) continue;
    std::set<std::string> keys;
    for (const Params& params : sets)
      for (const auto& entry : params) keys.insert(entry.first);
    std::vector<std::string>& differing = differing_keys_[benchmark];
    for (const std::string& key : keys) {
      const auto first = sets.front().find(key);
      const bool same = std::all_of(sets.begin(), sets.end(), [&](const Params& params) {
        const auto it = params.find(key);
        return first != sets.front().end() && it != params.end() && it->second == first->second;
      });
      if (!same) differing.push_back(key);
    }
  }
  sets_.clear();
}

std::string RowNames::name(const std::string& benchmark, const Params& params) const {
  const auto it = differing_keys_.find(benchmark);
  if (it == differing_keys_.end()) return benchmark;
  std::string shown;
  for (const std::string& key : it->second) {
    const auto value = params.find(key);
    shown += (shown.empty() ? "" : " ") + key + "=" + (value == params.end() ? "(unset)" : value->second);
  }
  return benchmark + " [" + shown + "]";
}

double geomean_change(const ColumnSummary& column, SignConvention sign) {
  return sign == SignConvention::Raw ? column.geomean_raw_change_pct : column.geomean_change_pct;
}

std::string_view geomean_sense(SignConvention sign) {
  return sign == SignConvention::Raw ? "raw: positive = larger" : "positive = better";
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
