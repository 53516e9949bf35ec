// The single-profile table of `kbench run` / `kbench show`, in the grid layout.
// Not a seed layout: its default columns fit a terminal; its values are in the
// label's unit, as compare prints them (docs/reports.md, "Single-profile table").
#include <cmath>
#include <fmt/format.h>
#include <ostream>

#include "report/format.h"
#include "report/model.h"
#include "report/text_table.h"

namespace kbench::report {

using analysis::ProfileRow;
using analysis::ProfileTable;

namespace {

// Widest Benchmark and Result Class cells before they wrap: with them the
// default table of the quick suite is at most 100 columns wide. Benchmark
// names break after the family ("mmtests/" + "sysbench-thread"), so their
// continuation is not indented.
constexpr std::size_t kBenchmarkWidth = 16;
constexpr std::size_t kResultClassWidth = 30;

constexpr const char* kWideNote =
    "wide: the 95% confidence interval of the mean is wider than the mean itself (half-width > |mean|, "
    "typical of 2 or 3 repeats), so it says nothing about the value; more repeats narrow it. "
    "kbench export gives every sample.";

// A CI whose half-width exceeds the mean reaches past zero: for the positive
// quantities kbench measures its lower bound is meaningless.
bool ci_is_wide(const stats::Summary& s) {
  if (std::isnan(s.ci95_low) || std::isnan(s.ci95_high) || std::isnan(s.mean)) return false;
  return (s.ci95_high - s.ci95_low) / 2 > std::fabs(s.mean);
}

// "±2.48%": the half-width of the 95% CI in percent of the mean.
std::string half_width_cell(const stats::Summary& s) {
  if (std::isnan(s.ci95_low) || std::isnan(s.ci95_high) || std::isnan(s.mean) || s.mean == 0) return "";
  if (ci_is_wide(s)) return "wide";
  return "±" + format_percent((s.ci95_high - s.ci95_low) / 2 / std::fabs(s.mean) * 100);
}

}  // namespace

void render_profile_grid(const ProfileTable& table, std::ostream& out, const ProfileGridOptions& options) {
  std::vector<TextColumn> columns{{"Benchmark", Align::Left, kBenchmarkWidth, 0},
                                  {"Result Class", Align::Left, kResultClassWidth}};
  if (options.all_columns) {
    for (const char* name : {"min", "ci95min", "mean", "ci95max", "max"}) columns.push_back({name, Align::Right});
  } else {
    columns.push_back({"mean", Align::Right});
    columns.push_back({"±ci95", Align::Right});
  }
  columns.push_back({"cv", Align::Right});
  columns.push_back({"count", Align::Right});
  TextTable text(std::move(columns));
  bool any_wide = false;
  const RowNames names(table);
  std::string previous;
  for (const ProfileRow& row : table.rows) {
    const std::string name = names(row);
    const bool new_group = &row == &table.rows.front() || previous != name;
    const stats::Summary& s = row.summary;
    const bool wide = ci_is_wide(s);
    any_wide = any_wide || wide;
    // In the label's unit, as compare prints the same row's base value.
    auto value = [](double v) { return format_number(v); };
    std::vector<std::string> cells{new_group ? name : "", row.result_class.label()};
    if (options.all_columns) {
      cells.insert(cells.end(), {value(s.min), wide ? "wide" : value(s.ci95_low), value(s.mean),
                                 wide ? "wide" : value(s.ci95_high), value(s.max)});
    } else {
      cells.insert(cells.end(), {value(s.mean), half_width_cell(s)});
    }
    // cv as a percent of the mean: comparable with the change column of compare.
    cells.push_back(std::isnan(s.cv) ? "" : format_percent(s.cv * 100));
    cells.push_back(std::to_string(s.count));
    text.add_row(std::move(cells), new_group);
    previous = name;
  }
  out << sut_heading(table.sut, table.sut_scope) << ", swprofile " << table.swprofile << ":\n";
  if (!text.empty()) text.render_grid(out);
  if (any_wide)
    for (const std::string& line : wrap_text(kWideNote, 80)) out << line << '\n';
  for (const std::string& entry : table.skipped) out << "skipped: " << entry << '\n';
  for (const std::string& entry : table.failed) out << "failed: " << entry << '\n';
}

}  // namespace kbench::report
