#pragma once
// Number and text formatting shared by the text renderers. The precision rules
// reproduce the seed report (tests/golden/grid-seed-aws-m7g.txt), so
// a kbench table can be pasted next to one made by the tools the field uses.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "report/model.h"

namespace kbench::report {

// |v| >= 1: two decimals ("25.36", "635669.17"); 0 < |v| < 1: two significant
// digits but at least two decimals ("0.0076", "0.061", "0.15"); 0: "0.00".
// Below 1e-6 the fixed form gets unreadable, so scientific ("1.2e-07").
// NaN: "" (an empty cell); infinities: "inf" / "-inf".
std::string format_number(double value);

// Percent with `decimals` decimals and a '%': "-3.89%", "0.00%" (never "-0.00%").
// NaN: "".
std::string format_percent(double percent, int decimals = 2);

// "(I) " / "(R) " / "(?) " (undecided) / "" (unchanged, not tested) for a verdict.
std::string_view mark_prefix(analysis::Verdict verdict);
// " (I)" / " (R)" / " (?)" / "" for a verdict, for layouts that put the mark last.
std::string_view mark_suffix(analysis::Verdict verdict);

// Every digit needed to read the double back unchanged (shortest round-trip
// form, at most max_digits10 significant digits). NaN: "".
std::string format_exact(double value);

// "1 improvement", "21 improvements".
std::string count_noun(int count, std::string_view singular, std::string_view plural);

// Number of terminal columns `text` takes, as a terminal draws it: East Asian
// wide and fullwidth characters (CJK, Hangul, fullwidth forms, most emoji)
// take 2, combining marks and zero-width characters 0, every other code point
// 1 ("↑" is one, "µ" is one). A byte that is not valid UTF-8 counts as 1.
std::size_t display_width(std::string_view text);

// Byte length of the longest prefix of `text` that fits in `columns` display
// columns without splitting a character or separating it from the combining
// marks that follow it. At least one character when `columns` > 0, so a
// character wider than the room still makes progress.
std::size_t prefix_bytes_for_width(std::string_view text, std::size_t columns);

// Word wrap to `width` display columns; continuation lines start with `indent`
// spaces. A word longer than a line is split (after its last '/' that fits
// when it has one, so "mmtests/sysbench-thread" breaks between family and
// name), never cut: joining the pieces gives the word back.
std::vector<std::string> wrap_text(std::string_view text, std::size_t width, std::size_t indent = 0);

// "none", "improvement", "regression", "unchanged", "undecided"
std::string_view verdict_name(analysis::Verdict verdict);

// A confidence level as a percent: 0.95 -> "95%", 0.975 -> "97.5%".
std::string format_level(double level);

// How every report names a row. Parameters are part of a row's identity, but
// most benchmarks run with one parameter set, and printing it everywhere
// would bury the names: a benchmark that appears with one parameter set in a
// table is named alone ("mmtests/hackbench"); one that appears with several
// gets the parameters in which its sets differ ("mmtests/hackbench
// [loops=40]"), so that its rows can be told apart (docs/reports.md).
class RowNames {
 public:
  explicit RowNames(const analysis::Table& table);
  explicit RowNames(const analysis::ProfileTable& table);
  std::string operator()(const analysis::Row& row) const { return name(row.benchmark, row.params); }
  std::string operator()(const analysis::ProfileRow& row) const { return name(row.benchmark, row.params); }
  std::string name(const std::string& benchmark, const Params& params) const;

 private:
  void add(const std::string& benchmark, const Params& params);
  void settle();
  std::map<std::string, std::vector<Params>> sets_;                 // benchmark -> its distinct sets
  std::map<std::string, std::vector<std::string>> differing_keys_;  // only benchmarks with several sets
};

// The geometric-mean summary of a test column in the sign convention its rows
// are printed in, and the words that say which: "positive = better" or
// "raw: positive = larger".
double geomean_change(const analysis::ColumnSummary& column, analysis::SignConvention sign);
std::string_view geomean_sense(analysis::SignConvention sign);

// RFC 4180: a field that holds a separator, a quote or a line break, quoted
// with its quotes doubled; any other field as it is.
std::string csv_field(const std::string& text);

}  // namespace kbench::report
