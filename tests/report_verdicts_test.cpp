// The three-valued verdicts, the heavy-tail and bimodal footnotes, the legend's
// session basis and CI level, and the environment differences, in every
// output format. Models are built by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "report/model.h"
#include "support/report_fixtures.h"

namespace kbench::report {

using analysis::Cell;
using analysis::ColumnSummary;
using analysis::kSessionsToDecideLimit;
using analysis::Report;
using analysis::Row;
using analysis::Table;
using analysis::Verdict;

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const char* const kTextFormats[] = {"grid", "markdown", "delta", "mail"};

std::string render(const Report& report, const std::string& format) {
  std::ostringstream out;
  make_renderer(format)->render(report, out);
  return out.str();
}

stats::Summary summary_with_mean(double mean) { return fixtures::summary_with_mean(mean, 9); }

// A tested cell with 3+3 sessions; `raw_pct` the raw change.
Cell cell(double base_mean, double raw_pct, Verdict verdict) {
  return fixtures::tested_cell(base_mean, raw_pct, verdict, 3, 0.2, 0.3, 9);
}

Row row(const std::string& benchmark, const std::string& name, Cell c) {
  Row r;
  r.benchmark = benchmark;
  r.result_class = ResultClass{name, "ops/sec", Better::Higher};
  r.base_present = true;
  r.base = summary_with_mean(1000);
  r.cells.push_back(std::move(c));
  return r;
}

// One column: an improvement, a regression, two unchanged rows, three
// undecided ones (4, 9 and more than the limit of sessions to settle), one not
// tested.
Report verdict_report() {
  Report report;
  report.legend.fdr = 0.05;
  report.legend.min_change_pct = 2;
  report.legend.rows_tested = 7;
  Table table;
  table.sut = "lab";
  table.base_profile = "base";
  table.test_profiles = {"patched"};
  table.rows.push_back(row("perf/sched", "pipe", cell(1000, 8, Verdict::Improvement)));
  table.rows.push_back(row("perf/sched", "messaging", cell(1000, -5, Verdict::Regression)));
  table.rows.push_back(row("perf/syscall", "basic", cell(1000, 0.5, Verdict::Unchanged)));
  table.rows.push_back(row("perf/syscall", "fork", cell(1000, -0.25, Verdict::Unchanged)));
  Cell four = cell(1000, 3.5, Verdict::Undecided);
  four.sessions_to_decide = 4;
  table.rows.push_back(row("sock/echo", "lat", four));
  Cell nine = cell(1000, -2.5, Verdict::Undecided);
  nine.sessions_to_decide = 9;
  table.rows.push_back(row("sock/echo", "tp", nine));
  Cell beyond = cell(1000, 1.5, Verdict::Undecided);
  beyond.sessions_to_decide = kSessionsToDecideLimit + 1;
  table.rows.push_back(row("sock/echo", "p99", beyond));
  Cell untested = cell(1000, 12, Verdict::None);
  untested.test_sessions = 1;
  untested.p_value = untested.q_value = stats::kNaN;
  untested.note = "1 session on the test side and no noise model for this SUT";
  table.rows.push_back(row("syscall/getppid", "mean", untested));
  ColumnSummary column;
  column.improvements = 1;
  column.regressions = 1;
  column.unchanged = 2;
  column.undecided = 3;
  column.untested = 1;
  column.geomean_rows = 8;
  column.geomean_change_pct = 1;
  table.columns.push_back(column);
  report.tables.push_back(std::move(table));
  return report;
}

bool has_mark(const std::string& text) {
  for (const char* mark : {"(I)", "(R)", "(?)", "(=)"})
    if (text.find(mark) != std::string::npos) return true;
  return false;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line of `text` that contains `needle`, or "".
std::string line_with(const std::string& text, const std::string& needle) {
  for (const std::string& line : lines_of(text))
    if (line.find(needle) != std::string::npos) return line;
  return "";
}

TEST(ReportVerdicts, UndecidedIsMarkedAndUnchangedLeftBlank) {
  const Report report = verdict_report();
  const std::string grid = render(report, "grid");
  EXPECT_THAT(line_with(grid, "| pipe "), HasSubstr("(I) 8.00%"));
  EXPECT_THAT(line_with(grid, "| messaging "), HasSubstr("(R) -5.00%"));
  EXPECT_THAT(line_with(grid, "| lat "), HasSubstr("(?) 3.50%"));
  // Unchanged: the change, no mark (a column of "(=)" would bury the others).
  const std::string basic = line_with(grid, "| basic ");
  EXPECT_THAT(basic, HasSubstr(" 0.50% |"));
  EXPECT_FALSE(has_mark(basic)) << basic;
  EXPECT_THAT(line_with(render(report, "mail"), "  lat"), HasSubstr("(?) 3.50%"));
  EXPECT_THAT(line_with(render(report, "markdown"), "sock/echo lat"), HasSubstr("↑3.5% (?)"));
  EXPECT_THAT(line_with(render(report, "delta"), "sock/echo lat"), HasSubstr("(+3.5%) (?)"));
  EXPECT_FALSE(has_mark(line_with(render(report, "markdown"), "perf/syscall basic")));
  EXPECT_FALSE(has_mark(line_with(render(report, "delta"), "perf/syscall basic")));
  EXPECT_FALSE(has_mark(line_with(render(report, "mail"), "  basic")));
}

TEST(ReportVerdicts, SummaryCountsEveryVerdict) {
  const Report report = verdict_report();
  for (const std::string format : kTextFormats) {
    const std::string text = render(report, format);
    // The seed's own two lines first, then the new counts.
    EXPECT_THAT(text, HasSubstr("lab:\n1 improvement\n1 regression\n2 unchanged within +/-2.00%\n"
                                "3 undecided (about 9 more sessions a side would settle 2 of them)\n"
                                "1 not tested\n"))
        << format;
  }
}

TEST(ReportVerdicts, UndecidedClauseCoversOneAndNone) {
  Report report = verdict_report();
  Table& table = report.tables[0];
  // Only the 4-session row left undecided.
  table.rows[5].cells[0].verdict = Verdict::Unchanged;
  table.rows[6].cells[0].verdict = Verdict::Unchanged;
  table.columns[0].undecided = 1;
  EXPECT_THAT(render(report, "grid"), HasSubstr("\n1 undecided (about 4 more sessions a side would settle it)\n"));
  // Only the row beyond the limit.
  table.rows[4].cells[0].verdict = Verdict::Unchanged;
  table.rows[6].cells[0].verdict = Verdict::Undecided;
  EXPECT_THAT(render(report, "grid"), HasSubstr("\n1 undecided (not within 50 more sessions a side)\n"));
  // Beyond the limit because the sides' runs differ: the note names what decides it.
  table.rows[6].cells[0].run_df = 5;
  EXPECT_THAT(render(report, "grid"), HasSubstr("\n1 undecided (not within 50 more sessions a side: the drift "
                                                "between the sides' runs dominates; alternate the two in one "
                                                "`kbench plan exec`, or measure more runs with `kbench calibrate`)\n"));
}

TEST(ReportVerdicts, SeveralColumnsJoinTheCountsOnOneLine) {
  Report report = verdict_report();
  Table& table = report.tables[0];
  table.test_profiles.push_back("v2");
  for (Row& r : table.rows) r.cells.push_back(cell(1000, 0.1, Verdict::Unchanged));
  ColumnSummary second;
  second.unchanged = 8;
  table.columns.push_back(second);
  const std::string grid = render(report, "grid");
  EXPECT_THAT(grid, HasSubstr("\npatched: 1 improvement, 1 regression, 2 unchanged within +/-2.00%, 3 undecided "
                              "(about 9 more sessions a side would settle 2 of them), 1 not tested\n"));
  EXPECT_THAT(grid, HasSubstr("\nv2: 0 improvements, 0 regressions, 8 unchanged within +/-2.00%\n"));
}

TEST(ReportVerdicts, HeavyTailAndBimodalRowsAreFootnotedInEveryTextFormat) {
  Report report = verdict_report();
  report.tables[0].rows[1].cells[0].heavy_tail = true;
  report.tables[0].rows[4].cells[0].bimodal = true;
  report.tables[0].rows[5].cells[0].bimodal = true;  // one footnote for both bimodal rows
  for (const std::string format : kTextFormats) {
    const std::string text = render(report, format);
    // Numbered in order of first use: the heavy tail (row 2), bimodal (row
    // 5), then the untested row's note; one number for both bimodal rows.
    EXPECT_THAT(line_with(text, "messaging"), HasSubstr("(R)")) << format;
    EXPECT_THAT(line_with(text, "messaging"), HasSubstr("[1]")) << format;
    EXPECT_THAT(text, HasSubstr("[1] heavy tail: a side's mean lies above its p99")) << format;
    EXPECT_THAT(text, HasSubstr("[2] bimodal: a side's samples fall into two separate groups;")) << format;
    EXPECT_THAT(text, HasSubstr("[3] 1 session on the test side")) << format;
    EXPECT_EQ(text.find("[4]"), std::string::npos) << format;
    // The markers themselves are ASCII: mail clients and terminals keep them.
    for (const std::string& line : lines_of(text)) {
      if (line.find("[1]") == std::string::npos && line.find("[2]") == std::string::npos) continue;
      const std::size_t marker = line.find('[');
      EXPECT_TRUE(std::all_of(line.begin() + marker, line.end(),
                              [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
          << line;
    }
  }
}

TEST(ReportVerdicts, LegendGivesTheCiLevelAndTheSessionBasis) {
  Report report = verdict_report();
  report.legend.ci_level = 0.9;
  Table& table = report.tables[0];
  table.rows[2].cells[0].prior_df = 6;
  table.rows[3].cells[0].prior_df = 8;
  const std::string grid = render(report, "grid");
  EXPECT_THAT(grid, HasSubstr("\nNo mark: unchanged, the CI of the change lies within +/-2.00%. CIs are 90%, per "
                              "row, not adjusted for the FDR of the marks.\n"));
  // 7 of the 8 cells have 3+3 sessions; the untested one 3+1.
  EXPECT_THAT(grid, HasSubstr("\nSessions: tested on session means, 3+3 sessions (base+test) on 7 of 8 cells, 1 to 3 "
                              "a side on the others; 2 cells also used this SUT's noise model from other profiles "
                              "(prior df 6 to 8).\n"));
  // Estimated dfs print with one decimal at most: a prior of no weight is 0.
  table.rows[2].cells[0].prior_df = 1.0629341673507042e-07;
  table.rows[3].cells[0].prior_df = 8.46;
  EXPECT_THAT(render(report, "grid"), HasSubstr("(prior df 0 to 8.5).\n"));
  table.rows[3].cells[0].prior_df = 1e-9;
  EXPECT_THAT(render(report, "grid"), HasSubstr("(prior df 0).\n"));
  table.rows[2].cells[0].prior_df = 6;
  table.rows[3].cells[0].prior_df = 8;
  report.legend.fdr.reset();
  report.legend.looks = 3;
  report.legend.alpha = 0.06;
  const std::string looks = render(report, "markdown");
  EXPECT_THAT(looks, HasSubstr("CIs are 90%, per row, not adjusted for the number of rows tested."));
  EXPECT_THAT(looks, HasSubstr("\nUntil decided: 3 looks at the data, each at alpha=0.02 (0.06 / 3, Bonferroni).\n"));
}

TEST(ReportVerdicts, UnclassifiedCellsAreNotCalledUnchanged) {
  // A tested cell with no verdict and no reason (a method without the
  // equivalence verdict): a blank there means "not significant".
  Report report = verdict_report();
  report.tables[0].rows[2].cells[0].verdict = Verdict::None;
  const std::string grid = render(report, "grid");
  EXPECT_THAT(grid, HasSubstr("\nNo mark: no significant change of at least 2.00%. CIs are 95%"));
  EXPECT_THAT(grid, Not(HasSubstr("No mark: unchanged")));
}

TEST(ReportVerdicts, EnvironmentDifferencesAreListedUnderEveryTable) {
  Report report = verdict_report();
  report.tables[0].environment_differences = {"thp: base madvise, patched always",
                                              "load: base quiet, patched busy (1-minute load 2.50 on 4 CPUs at the "
                                              "start of 1 of 3 runs)"};
  for (const std::string format : kTextFormats) {
    const std::string text = render(report, format);
    EXPECT_THAT(text, HasSubstr("Environment differences not declared by the swprofiles:\n"
                                "  thp: base madvise, patched always\n  load: base quiet, patched busy"))
        << format;
    // Before the summary, which stays the last block as in the seed.
    EXPECT_LT(text.find("  thp: base"), text.find("\nlab:\n")) << format;
  }
  for (const std::string& line : lines_of(render(report, "mail"))) EXPECT_LE(line.size(), 80u) << line;
  const nlohmann::json doc = nlohmann::json::parse(render(report, "json"));
  EXPECT_EQ(doc["tables"][0]["environment_differences"][0], "thp: base madvise, patched always");
  const std::string csv = render(report, "csv");
  EXPECT_THAT(lines_of(csv)[1], HasSubstr(",\"thp: base madvise, patched always | load: base quiet, patched busy"));
}

TEST(ReportVerdicts, MachineFormatsCarryTheVerdictDetails) {
  Report report = verdict_report();
  report.legend.looks = 2;
  report.tables[0].rows[0].cells[0].heavy_tail = true;
  report.tables[0].rows[4].cells[0].prior_df = 4.5;
  report.tables[0].rows[4].cells[0].bimodal = true;
  const nlohmann::json doc = nlohmann::json::parse(render(report, "json"));
  EXPECT_EQ(doc["legend"]["ci_level"], 0.95);
  EXPECT_EQ(doc["legend"]["looks"], 2);
  const auto& rows = doc["tables"][0]["rows"];
  std::vector<std::string> verdicts;
  for (const auto& r : rows) verdicts.push_back(r["cells"][0]["verdict"]);
  EXPECT_EQ(verdicts, (std::vector<std::string>{"improvement", "regression", "unchanged", "unchanged", "undecided",
                                                "undecided", "undecided", "none"}));
  const auto& undecided = rows[4]["cells"][0];
  EXPECT_EQ(undecided["sessions_to_decide"], 4);
  EXPECT_EQ(undecided["base_sessions"], 3);
  EXPECT_EQ(undecided["test_sessions"], 3);
  EXPECT_EQ(undecided["prior_df"], 4.5);
  EXPECT_EQ(undecided["bimodal"], true);
  EXPECT_EQ(undecided["heavy_tail"], false);
  EXPECT_TRUE(rows[0]["cells"][0]["sessions_to_decide"].is_null());  // decided: nothing to settle
  EXPECT_EQ(rows[0]["cells"][0]["heavy_tail"], true);
  const auto& column = doc["tables"][0]["columns"][0];
  EXPECT_EQ(column["unchanged"], 2);
  EXPECT_EQ(column["undecided"], 3);
  EXPECT_EQ(column["untested"], 1);

  const std::vector<std::string> csv = lines_of(render(report, "csv"));
  auto fields = [](const std::string& line) {
    std::vector<std::string> result;
    std::istringstream in(line);  // no quoted fields in this model's lines
    for (std::string field; std::getline(in, field, ',');) result.push_back(field);
    if (!line.empty() && line.back() == ',') result.emplace_back();
    return result;
  };
  const std::vector<std::string> header = fields(csv[0]);
  auto value = [&](std::size_t line, const std::string& name) {
    const auto column_index = std::find(header.begin(), header.end(), name) - header.begin();
    return fields(csv[line])[column_index];
  };
  EXPECT_EQ(value(5, "verdict"), "undecided");
  EXPECT_EQ(value(5, "sessions_to_decide"), "4");
  EXPECT_EQ(value(5, "prior_df"), "4.5");
  EXPECT_EQ(value(5, "bimodal"), "true");
  EXPECT_EQ(value(5, "change_ci_level"), "0.95");
  EXPECT_EQ(value(7, "sessions_to_decide"), "51");  // above the limit: "more than 50"
  EXPECT_EQ(value(3, "verdict"), "unchanged");
  EXPECT_EQ(value(3, "sessions_to_decide"), "");
  EXPECT_EQ(value(8, "test_sessions"), "1");
  EXPECT_EQ(value(1, "heavy_tail"), "true");
  EXPECT_EQ(value(1, "column_unchanged"), "2");
  EXPECT_EQ(value(1, "column_undecided"), "3");
  EXPECT_EQ(value(1, "column_untested"), "1");
}

}  // namespace
}  // namespace kbench::report
