// `kbench trend` as text (docs/reports.md, "Trends").
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <ostream>

#include "report/format.h"
#include "report/text_table.h"
#include "report/trend.h"

namespace kbench::report {

using analysis::SignConvention;
using analysis::Table;

namespace {

constexpr const char* kRepeatsCiNote = "one session: the CI of its repeats, which leaves out the session noise";

std::string row_title(const analysis::TrendRow& row) {
  const std::string params = params_text(row.params);
  return fmt::format("{}{} {} on SUT {} ({} is better)", row.benchmark, params.empty() ? "" : " [" + params + "]",
                     row.result_class.label(), row.sut, to_string(row.result_class.better));
}

void render_row(const analysis::TrendRow& row, SignConvention sign, std::ostream& out) {
  out << "Trend of " << row_title(row) << ":\n";
  TextTable text({{"swprofile", Align::Left},
                  {"sessions", Align::Right},
                  {"mean", Align::Right},
                  {"95% CI", Align::Left},
                  {"step", Align::Left}});
  std::map<std::size_t, const analysis::TrendStep*> step_at;
  for (const auto& step : row.steps) step_at[step.at] = &step;
  Footnotes notes;
  bool repeats_ci = false;
  for (std::size_t p = 0; p < row.points.size(); ++p) {
    const analysis::TrendPoint& point = row.points[p];
    std::string ci = std::isnan(point.ci_low)
                         ? ""
                         : format_number(point.ci_low) + " .. " + format_number(point.ci_high);
    if (point.ci_of_repeats && !ci.empty()) {
      ci += " *";
      repeats_ci = true;
    }
    std::string step;
    const auto found = step_at.find(p);
    if (found != step_at.end()) {
      const analysis::TrendStep& s = *found->second;
      step = "change point: " + (s.row.cells.empty() ? std::string("not tested")
                                                     : change_cell(s.row, s.row.cells.front(), sign, notes));
    }
    text.add_row({point.swprofile, std::to_string(point.sessions), format_number(point.samples.mean), ci, step},
                 found != step_at.end());
  }
  text.render_grid(out);
  out << trend_row_summary(row) << '\n';
  if (!row.missing.empty()) {
    out << "No data for this row in: ";
    for (std::size_t i = 0; i < row.missing.size(); ++i) out << (i ? ", " : "") << row.missing[i];
    out << ".\n";
  }
  if (repeats_ci) out << "* " << kRepeatsCiNote << ".\n";
  for (const std::string& line : notes.lines()) out << line << '\n';
  out << '\n';
}

void render_steps(const analysis::TrendReport& trend, std::ostream& out) {
  std::map<std::string, std::vector<const analysis::TrendRow*>> by_sut;
  for (const auto& row : trend.rows) {
    if (!row.steps.empty()) by_sut[row.sut].push_back(&row);
  }
  if (by_sut.empty()) {
    out << "No change points: no steps to show.\n";
    return;
  }
  for (const auto& [sut, rows] : by_sut) {
    out << "Steps at the change points, SUT " << sut << ":\n";
    TextTable text({{"Benchmark", Align::Left},
                    {"Result Class", Align::Left},
                    {"Step", Align::Left},
                    {"Before", Align::Right},
                    {"Change", Align::Right}});
    Footnotes notes;
    Table table;  // the steps as compare's model, for the legend's session counts
    table.sut = sut;
    std::string previous;
    for (const analysis::TrendRow* row : rows) {
      std::string name = row->benchmark;
      const std::string params = params_text(row->params);
      if (!params.empty()) name += " [" + params + "]";
      for (const auto& step : row->steps) {
        const bool new_group = previous != name;
        const std::string change =
            step.row.cells.empty() ? "" : change_cell(step.row, step.row.cells.front(), trend.legend.sign, notes);
        text.add_row({new_group ? name : "", row->result_class.label(), step_place(step),
                      step.row.base_present ? format_number(step.row.base.mean) : "", change},
                     new_group);
        previous = name;
        table.rows.push_back(step.row);
      }
    }
    text.render_grid(out);
    out << "Step: the segment before the change point against the segment after it, as compare tests a base "
           "against a test swprofile.\n";
    for (const std::string& line : legend_lines(trend.legend, false, &table)) out << line << '\n';
    for (const std::string& line : notes.lines()) out << line << '\n';
    out << '\n';
  }
}

}  // namespace

std::string step_place(const analysis::TrendStep& step) { return step.before_label + " -> " + step.after_label; }

std::string trend_row_summary(const analysis::TrendRow& row) {
  if (!row.changes.valid) return "No change point detection: " + row.changes.reason + ".";
  const std::size_t found = row.changes.segmentation.change_points.size();
  if (found == 0) return "Change points: none.";
  std::string places;
  for (const auto& step : row.steps) places += (places.empty() ? "" : "; ") + step_place(step);
  return fmt::format("Change points: {} ({}).", found, places);
}

std::vector<std::string> trend_method_lines(const analysis::TrendReport& trend) {
  std::vector<std::string> lines;
  const auto& profiles = trend.profiles;
  std::string order = fmt::format("Order: {} swprofiles by {}", profiles.names.size(),
                                  profiles.order == analysis::TrendOrder::Version ? "kernel version (a release "
                                                                                    "candidate before its release)"
                                                                                  : "store order (first session)");
  if (!profiles.note.empty()) order += "; --order version: " + profiles.note;
  lines.push_back(order + ".");
  lines.push_back(fmt::format(
      "Change points: PELT (Killick et al. 2012) for a change in mean of the log session means, one point per "
      "swprofile, penalty {} ln(swprofiles) per change point (raised to an F(1, df) quantile where the noise is "
      "estimated from the trend itself), segments of at least {}; the noise of a "
      "swprofile's mean is its session noise plus what swprofiles of one segment differ by (docs/statistics.md, "
      "\"Trends\").",
      format_exact(trend.penalty_factor), count_noun(static_cast<int>(trend.min_segment), "swprofile", "swprofiles")));
  return lines;
}

void render_trend_text(const analysis::TrendReport& trend, const std::string& /*title*/, std::ostream& out) {
  for (const auto& row : trend.rows) render_row(row, trend.legend.sign, out);
  for (const std::string& line : trend_method_lines(trend)) out << line << '\n';
  out << '\n';
  render_steps(trend, out);
}

}  // namespace kbench::report
