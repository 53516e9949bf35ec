// compare --format html: the page's table, marks and footnotes, the
// reproducing command, the forest plot's data, the samples by session the
// page carries as data, and that it loads nothing. The page is read as text
// and its data parsed back with nlohmann::json; tests/browser/ loads it in
// Chromium.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "app/compare.h"
#include "report/model.h"
#include "support/report_fixtures.h"

namespace kbench::report {

using analysis::Cell;
using analysis::ColumnSummary;
using analysis::Report;
using analysis::Row;
using analysis::SessionSamples;
using analysis::Table;
using analysis::Verdict;

namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

std::string render_html(const Report& report) {
  std::ostringstream out;
  make_renderer("html")->render(report, out);
  return out.str();
}

using fixtures::summary_with_mean;

Cell tested_cell(double base_mean, double raw_pct, Verdict verdict) {
  return fixtures::tested_cell(base_mean, raw_pct, verdict, 2, 0.01, 0.02);
}

// Two sessions of three repeats on `sut`, the second `shift` higher.
std::vector<SessionSamples> two_sessions(const std::string& sut, double mean, double shift) {
  return {{sut, 1, {mean - 1, mean, mean + 1}}, {sut, 2, {mean + shift - 1, mean + shift, mean + shift + 1}}};
}

Row make_row(const std::string& benchmark, ResultClass result_class, double base_mean, Cell cell) {
  Row r;
  r.benchmark = benchmark;
  r.result_class = std::move(result_class);
  r.base_present = true;
  r.base = summary_with_mean(base_mean);
  r.samples.push_back(two_sessions("lab", base_mean, 0));
  r.samples.push_back(two_sessions("lab", cell.test.mean, cell.verdict == Verdict::Regression ? 40 : 0));
  r.cells.push_back(std::move(cell));
  return r;
}

// One table on SUT "lab", base against "patched": an improvement, a
// regression on a lower-is-better row (its CI flips under --sign better), an
// unchanged row, an undecided one and one not tested, with a footnote.
Report small_report() {
  Report report;
  report.legend.fdr = 0.05;
  report.legend.min_change_pct = 2;
  report.legend.rows_tested = 4;
  report.command = "kbench compare base patched --format html --benchmark 'perf/*'";
  Table table;
  table.sut = "lab";
  table.suts = {"lab"};
  table.base_profile = "base";
  table.test_profiles = {"patched"};
  table.rows.push_back(make_row("perf/sched", {"pipe", "ops/sec", Better::Higher}, 1000,
                                tested_cell(1000, 8, Verdict::Improvement)));
  table.rows.push_back(make_row("perf/sched", {"latency", "ns", Better::Lower}, 500,
                                tested_cell(500, 5, Verdict::Regression)));
  table.rows.push_back(make_row("perf/syscall", {"basic", "ns", Better::Lower}, 200,
                                tested_cell(200, 0.5, Verdict::Unchanged)));
  table.rows.push_back(make_row("sock/echo", {"lat", "us", Better::Lower}, 30,
                                tested_cell(30, -3, Verdict::Undecided)));
  Cell untested = tested_cell(10, 12, Verdict::None);
  untested.change_ci = {};
  untested.p_value = untested.q_value = stats::kNaN;
  untested.note = "n<2";
  table.rows.push_back(make_row("sock/echo", {"tp", "MB/s", Better::Higher}, 10, untested));
  ColumnSummary column;
  column.improvements = 1;
  column.regressions = 1;
  column.unchanged = 1;
  column.undecided = 1;
  column.untested = 1;
  column.geomean_rows = 5;
  column.geomean_change_pct = 1.5;
  table.columns.push_back(column);
  table.environment_differences = {"thp: base madvise, patched always"};
  report.tables.push_back(std::move(table));
  return report;
}

// The <tr> of the grid that holds `needle`.
std::string grid_row(const std::string& page, const std::string& needle) {
  const std::size_t at = page.find(needle);
  if (at == std::string::npos) return "";
  const std::size_t begin = page.rfind("<tr", at);
  const std::size_t end = page.find("</tr>", at);
  return page.substr(begin, end - begin);
}

// A script statement "window.NAME = <json>;" of the page, parsed.
json page_json(const std::string& page, const std::string& name) {
  const std::string start = "window." + name + " = ";
  const std::size_t at = page.find(start);
  if (at == std::string::npos) return nullptr;
  const std::size_t from = at + start.size();
  return json::parse(page.substr(from, page.find(";\n", from) - from));
}

TEST(HtmlReport, GridRowsCarryTheMarksLettersAndVerdictClasses) {
  const std::string page = render_html(small_report());
  EXPECT_THAT(grid_row(page, "<summary>pipe (ops/sec)"),
              HasSubstr("<td class=\"numbers verdict-I\" title=\"improvement\">(I) 8.00%</td>"));
  // Lower is better: +5% time reads -5.00% under --sign better.
  EXPECT_THAT(grid_row(page, "<summary>latency (ns)"),
              HasSubstr("<td class=\"numbers verdict-R\" title=\"regression\">(R) -5.00%</td>"));
  EXPECT_THAT(grid_row(page, "<summary>lat (us)"),
              HasSubstr("<td class=\"numbers verdict-Q\" title=\"undecided\">(?) 3.00%</td>"));
  // Unchanged: coloured, no mark, as in the text formats (the legend says so).
  EXPECT_THAT(grid_row(page, "<summary>basic (ns)"),
              HasSubstr("<td class=\"numbers verdict-U\" title=\"unchanged\">-0.50%</td>"));
  // The benchmark heads its group once; the base value is the grid's number.
  EXPECT_THAT(grid_row(page, "<summary>pipe (ops/sec)"), HasSubstr("<td>perf/sched</td>"));
  EXPECT_THAT(grid_row(page, "<summary>pipe (ops/sec)"), HasSubstr("<td class=\"numbers\">1000.00</td>"));
  EXPECT_THAT(grid_row(page, "<summary>latency (ns)"), HasSubstr("<td></td>"));
  EXPECT_THAT(page, HasSubstr("<th class=\"numbers\">base (base)</th><th class=\"numbers\">patched</th>"));
}

TEST(HtmlReport, FootnotesLegendAndEnvironmentAreThoseOfTheTextReport) {
  const std::string page = render_html(small_report());
  EXPECT_THAT(grid_row(page, "<summary>tp (MB/s)"), HasSubstr("<td class=\"numbers\">12.00% [1]</td>"));
  EXPECT_THAT(page, HasSubstr("<p>[1] n&lt;2</p>"));
  EXPECT_THAT(page, HasSubstr("<p>(I) significant improvement, (R) significant regression, (?) undecided: more "
                              "sessions needed.</p>"));
  EXPECT_THAT(page, HasSubstr("<p>Environment differences not declared by the swprofiles:</p>\n<ul>\n"
                              "<li>thp: base madvise, patched always</li>"));
}

TEST(HtmlReport, SummaryComesFirst) {
  const std::string page = render_html(small_report());
  const std::size_t summary = page.find("<section id=\"summary\">");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(summary, page.find("<table"));
  EXPECT_THAT(page.substr(summary), HasSubstr("<p><strong>lab:</strong></p>\n<ul>\n<li>1 improvement</li>\n"
                                              "<li>1 regression</li>\n<li>1 unchanged within +/-2.00%</li>\n"
                                              "<li>1 undecided</li>\n<li>1 not tested</li>\n</ul>"));
}

TEST(HtmlReport, ShowsTheCommandThatReproducesIt) {
  const std::string page = render_html(small_report());
  EXPECT_THAT(page, HasSubstr("<h2>Reproduce</h2>\n<pre><code>kbench compare base patched --format html "
                              "--benchmark &#39;perf/*&#39;</code></pre>"));
}

TEST(HtmlReport, DataHoldsEachRowsSamplesBySession) {
  const Report report = small_report();
  const json data = page_json(render_html(report), "kbenchData");
  ASSERT_TRUE(data.is_object());
  const json& table = data.at("tables").at(0);
  EXPECT_EQ(table.at("profiles"), json({"base", "patched"}));
  ASSERT_EQ(table.at("rows").size(), report.tables[0].rows.size());
  // The regression row: base 500, patched 525 with its second boot 40 higher.
  const json& row = table.at("rows").at(1);
  EXPECT_EQ(row.at("name"), "perf/sched");
  EXPECT_EQ(row.at("class"), "latency (ns)");
  const json& base = row.at("sides").at(0);
  EXPECT_EQ(base.at("s"), json::parse(R"([["#1", [499, 500, 501]], ["#2", [499, 500, 501]]])"));
  EXPECT_EQ(base.at("m"), json::parse("[500, 495, 505]"));
  const json& patched = row.at("sides").at(1);
  EXPECT_EQ(patched.at("s"), json::parse(R"([["#1", [524, 525, 526]], ["#2", [564, 565, 566]]])"));
}

TEST(HtmlReport, SessionsOfAClassTableNameTheirMachine) {
  Report report = small_report();
  Table& table = report.tables[0];
  table.suts = {"lab-1", "lab-2"};
  table.rows[0].samples[0] = {{"lab-1", 1, {1.0, 2.0}}, {"lab-2", 1, {3.0}}};
  const json data = page_json(render_html(report), "kbenchData");
  EXPECT_EQ(data["tables"][0]["rows"][0]["sides"][0]["s"], json::parse(R"([["lab-1 #1", [1, 2]], ["lab-2 #1", [3]]])"));
}

TEST(HtmlReport, SamplesCarrySixSignificantDigits) {
  Report report = small_report();
  report.tables[0].rows[0].samples[0] = {{"lab", 1, {1234.56789, 0.000123456789, 98765432.1}}};
  const json data = page_json(render_html(report), "kbenchData");
  EXPECT_EQ(data["tables"][0]["rows"][0]["sides"][0]["s"][0][1], json::parse("[1234.57, 0.000123457, 98765400]"));
}

TEST(HtmlReport, ForestPlotHasOneMarkPerCellWithAChange) {
  Report report = small_report();
  // A second test column: every row gets one more mark, named by its profile.
  Table& table = report.tables[0];
  table.test_profiles.push_back("v2");
  table.columns.push_back(table.columns[0]);
  for (Row& row : table.rows) {
    row.cells.push_back(tested_cell(row.base.mean, 1, Verdict::Unchanged));
    row.samples.push_back(two_sessions("lab", row.base.mean, 0));
  }
  table.rows[2].cells[1] = Cell{};  // v2 has no data on this row: no mark
  const json plots = page_json(render_html(report), "kbenchPlots");
  ASSERT_EQ(plots.size(), 1u);
  EXPECT_EQ(plots[0]["id"], "forest-0");
  const json& spec = plots[0]["spec"];
  EXPECT_EQ(spec["data"]["name"], "rows");
  const json& rows = spec["data"]["values"];
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_EQ(rows[0]["line"], "perf/sched pipe (ops/sec) | patched");
  EXPECT_EQ(rows[0]["verdict"], "(I) improvement");
  EXPECT_EQ(rows[1]["line"], "perf/sched pipe (ops/sec) | v2");
  // Lower is better: +5% raw (CI 4..6) prints as -5% with the CI -6..-4.
  EXPECT_EQ(rows[2]["verdict"], "(R) regression");
  EXPECT_EQ(rows[2]["change"], -5);
  EXPECT_EQ(rows[2]["low"], -6);
  EXPECT_EQ(rows[2]["high"], -4);
  EXPECT_EQ(rows[2]["text"], "(R) -5.00%");
  // The untested cell: a point, no interval.
  EXPECT_EQ(rows[7]["verdict"], "not tested");
  EXPECT_TRUE(rows[7]["low"].is_null());
  // Colour and shape both follow the verdict, so it reads without colour.
  const json& points = spec["layer"].back();
  EXPECT_EQ(points["mark"]["type"], "point");
  EXPECT_EQ(points["encoding"]["color"]["field"], "verdict");
  EXPECT_EQ(points["encoding"]["shape"]["field"], "verdict");
  // The +-min-change band and the zero line.
  EXPECT_EQ(spec["layer"][0]["mark"]["type"], "rect");
  EXPECT_EQ(spec["layer"][0]["encoding"]["x"]["datum"], -2);
  EXPECT_EQ(spec["layer"][1]["encoding"]["x"]["datum"], 0);
  EXPECT_THAT(plots[0]["spec"]["description"].get<std::string>(), HasSubstr("9 cells"));
}

TEST(HtmlReport, LoadsNothingFromOutside) {
  const std::string page = render_html(small_report());
  // The libraries' own code is html_page's concern (tests/html_page_test.cpp);
  // what this renderer writes is the document around it, its data and script.
  const std::string document = page.substr(0, page.find("<script"));
  EXPECT_THAT(document, Not(HasSubstr("<link")));
  EXPECT_THAT(document, Not(HasSubstr("src=")));
  EXPECT_THAT(document, Not(HasSubstr("href=")));
  EXPECT_THAT(document, Not(HasSubstr("url(")));
  const std::string ours = page.substr(page.find("window.kbenchData"));
  EXPECT_THAT(ours, Not(HasSubstr("http")));
  EXPECT_THAT(ours, Not(HasSubstr("src=")));
  EXPECT_THAT(ours, Not(HasSubstr("fetch(")));
}

TEST(HtmlReport, NamesFromTheStoreAreEscaped) {
  Report report = small_report();
  report.tables[0].rows[0].benchmark = "<script>alert(1)</script>";
  report.tables[0].test_profiles[0] = "a\"b<i>";
  report.command = "kbench compare base '<b>'";
  const std::string page = render_html(report);
  // What this renderer writes: the document before the libraries, and its data and script after them.
  for (const std::string& ours : {page.substr(0, page.find("<script")), page.substr(page.find("window.kbenchData"))}) {
    EXPECT_THAT(ours, Not(HasSubstr("<script>alert(1)")));
    EXPECT_THAT(ours, Not(HasSubstr("<i>")));
    EXPECT_THAT(ours, Not(HasSubstr("<b>")));
  }
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  // In the data too, where the page script puts names into the document as text.
  EXPECT_EQ(page_json(page, "kbenchData")["tables"][0]["rows"][0]["name"], "<script>alert(1)</script>");
}

}  // namespace
}  // namespace kbench::report

namespace kbench {
namespace {

std::vector<store::SampleRow> two_machines_samples() {
  std::vector<store::SampleRow> rows;
  std::int64_t session = 0;
  for (const std::string sut : {"lab-1", "lab-2"}) {
    for (const std::string profile : {"base", "patched", "other"}) {
      for (int s = 0; s < 2; ++s) {
        ++session;
        for (int r = 0; r < 3; ++r) {
          store::SampleRow row;
          row.sut = sut;
          row.sut_class = "lab";
          row.swprofile = profile;
          row.session = session;
          row.session_index = s;
          row.benchmark = "syscall/getpid";
          row.result_class = ResultClass{"mean", "ns", Better::Lower};
          row.repeat = r;
          row.value = 100 + (profile == "patched" ? 5 : 0) + s + r * 0.1 + (sut == "lab-2" ? 10 : 0);
          rows.push_back(row);
        }
      }
    }
  }
  return rows;
}

TEST(CompareSamples, KeptByRowAndSessionOnlyWhenAsked) {
  analysis::CompareOptions options;
  options.base = "base";
  options.tests = {"patched"};
  options.per_sut = true;
  const auto samples = two_machines_samples();
  for (const auto& table : analysis::build_comparison(samples, options).tables)
    for (const auto& row : table.rows) EXPECT_TRUE(row.samples.empty());

  options.keep_samples = true;
  const analysis::Report report = analysis::build_comparison(samples, options);
  ASSERT_EQ(report.tables.size(), 2u);
  const analysis::Row& row = report.tables[1].rows.at(0);
  ASSERT_EQ(row.samples.size(), 2u);  // base, patched: the profile not compared stays out
  ASSERT_EQ(row.samples[1].size(), 2u);
  EXPECT_EQ(row.samples[1][1].sut, "lab-2");
  EXPECT_EQ(row.samples[1][1].session, 2);
  using ::testing::DoubleEq;
  EXPECT_THAT(row.samples[1][1].values, ::testing::ElementsAre(DoubleEq(116), DoubleEq(116.1), DoubleEq(116.2)));
}

TEST(CompareSamples, AClassTableHoldsTheSessionsOfEveryMachine) {
  analysis::CompareOptions options;
  options.base = "base";
  options.tests = {"patched"};
  options.keep_samples = true;
  const analysis::Report report = analysis::build_comparison(two_machines_samples(), options);
  ASSERT_EQ(report.tables.size(), 1u);
  const analysis::Row& row = report.tables[0].rows.at(0);
  ASSERT_EQ(row.samples.size(), 2u);
  ASSERT_EQ(row.samples[0].size(), 4u);
  EXPECT_EQ(row.samples[0][0].sut, "lab-1");
  EXPECT_EQ(row.samples[0][3].sut, "lab-2");
  EXPECT_EQ(row.samples[0][3].session, 2);
  std::size_t values = 0;
  for (const auto& session : row.samples[0]) values += session.values.size();
  EXPECT_EQ(values, row.base.count);
}

TEST(CompareCommand, WordsAreQuotedForAShellOnlyWhenTheyNeedIt) {
  EXPECT_EQ(app::shell_command({"kbench", "compare", "base", "v6.8-rc1", "--store", "/tmp/a.db"}),
            "kbench compare base v6.8-rc1 --store /tmp/a.db");
  EXPECT_EQ(app::shell_command({"--benchmark", "perf/*", "it's", "", "a b"}),
            "--benchmark 'perf/*' 'it'\\''s' '' 'a b'");
}

TEST(CompareCommand, TheEquivalentCommandNamesTheOptionsThatDifferFromTheDefaults) {
  app::CompareArguments request;
  request.profiles = {"base", "patched"};
  EXPECT_EQ(app::equivalent_command(request), "kbench compare base patched");
  request.format = "html";
  request.fdr = "off";
  request.filter.benchmark_glob = "perf/*";
  request.per_sut = true;
  request.store_url = "postgresql://lab/kbench";
  EXPECT_EQ(app::equivalent_command(request),
            "kbench compare base patched --format html --fdr off --benchmark 'perf/*' --per-sut --store "
            "postgresql://lab/kbench");
}

}  // namespace
}  // namespace kbench
