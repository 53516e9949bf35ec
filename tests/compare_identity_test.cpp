// What a compare or show row is, and how it is named and summarised:
// parameters are part of a row's identity, the
// geomean reads like the rows beside it, and profiles measured on different
// SUTs are refused instead of giving an empty report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/compare.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/params.h"
#include "report/format.h"
#include "report/model.h"
#include "store/result_store.h"
#include "support/error_text.h"
#include "support/test_files.h"

namespace kbench {
namespace {

using analysis::build_comparison;
using analysis::build_profile_tables;
using analysis::CompareOptions;
using analysis::SignConvention;
using analysis::Verdict;
using store::SampleRow;
using testing::error_of;
using ::testing::HasSubstr;
using ::testing::Not;

// Repeats of one row of one profile, one session each side.
void add(std::vector<SampleRow>& rows, const std::string& profile, const std::string& benchmark,
         const ResultClass& result_class, const Params& params, const std::vector<double>& values,
         const std::string& sut = "lab") {
  int repeat = 0;
  for (const double value : values) {
    SampleRow row;
    row.sut = sut;
    row.swprofile = profile;
    row.session = profile == "base" ? 1 : 2;
    row.benchmark = benchmark;
    row.result_class = result_class;
    row.repeat = repeat++;
    row.value = value;
    row.params = params;
    rows.push_back(row);
  }
}

const ResultClass kSeconds{"hackbench-process-pipes-4", "seconds", Better::Lower};
const ResultClass kOps{"basic", "ops/sec", Better::Higher};
const Params kLoops40{{"groups", "4"}, {"loops", "40"}};
const Params kLoops10{{"groups", "4"}, {"loops", "10"}};

CompareOptions base_vs_test(SignConvention sign = SignConvention::Better) {
  CompareOptions options;
  options.base = "base";
  options.tests = {"test"};
  options.sign = sign;
  return options;
}

std::string render(const analysis::Report& report, const std::string& format) {
  std::ostringstream out;
  report::make_renderer(format)->render(report, out);
  return out.str();
}

// --- parameters are part of a row's identity ------------------------------------

// The case: base ran hackbench with loops=40, test with loops=10.
// Pooled into one row it read as a 69.85% improvement, marked (I).
TEST(CompareIdentity, RowsWithDifferentParametersAreNeverCompared) {
  std::vector<SampleRow> rows;
  add(rows, "base", "mmtests/hackbench", kSeconds, kLoops40, {10.0, 10.1, 9.9, 10.05, 9.95});
  add(rows, "test", "mmtests/hackbench", kSeconds, kLoops10, {3.0, 3.02, 3.01, 3.03, 3.015});
  const analysis::Report report = build_comparison(rows, base_vs_test());
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& table = report.tables[0];
  ASSERT_EQ(table.rows.size(), 2u);
  // Sorted by parameters as numbers: loops=10 before loops=40.
  EXPECT_EQ(table.rows[0].params, kLoops10);
  EXPECT_FALSE(table.rows[0].base_present);
  EXPECT_TRUE(table.rows[0].cells[0].present);
  EXPECT_EQ(table.rows[1].params, kLoops40);
  EXPECT_TRUE(table.rows[1].base_present);
  EXPECT_FALSE(table.rows[1].cells[0].present);
  for (const auto& row : table.rows) EXPECT_EQ(row.cells[0].verdict, Verdict::None);
  EXPECT_EQ(table.columns[0].improvements, 0);
  EXPECT_EQ(report.legend.rows_tested, 0);
}

TEST(CompareIdentity, EachParameterSetIsComparedWithItself) {
  std::vector<SampleRow> rows;
  add(rows, "base", "syscall/getpid", {"mean", "ns", Better::Lower}, {{"calls", "10000000"}}, {100.0, 100.5, 99.5});
  add(rows, "base", "syscall/getpid", {"mean", "ns", Better::Lower}, {{"calls", "1000000"}}, {150.0, 150.5, 149.5});
  add(rows, "test", "syscall/getpid", {"mean", "ns", Better::Lower}, {{"calls", "10000000"}}, {100.0, 100.5, 99.5});
  add(rows, "test", "syscall/getpid", {"mean", "ns", Better::Lower}, {{"calls", "1000000"}}, {150.0, 150.5, 149.5});
  const analysis::Report report = build_comparison(rows, base_vs_test());
  const auto& table = report.tables.at(0);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].params.at("calls"), "1000000");
  EXPECT_DOUBLE_EQ(table.rows[0].base.mean, 150.0);
  EXPECT_EQ(table.rows[0].base.count, 3u);
  EXPECT_NEAR(table.rows[0].cells[0].change_pct, 0.0, 1e-12);
  EXPECT_EQ(table.rows[1].params.at("calls"), "10000000");
  EXPECT_DOUBLE_EQ(table.rows[1].base.mean, 100.0);
  EXPECT_NEAR(table.rows[1].cells[0].change_pct, 0.0, 1e-12);
}

TEST(CompareIdentity, ShowKeepsParameterSetsApart) {
  std::vector<SampleRow> rows;
  add(rows, "base", "syscall/getpid", {"mean", "ns", Better::Lower}, {{"calls", "10000000"}}, {100.0, 100.0});
  add(rows, "base", "syscall/getpid", {"mean", "ns", Better::Lower}, {{"calls", "1000000"}}, {150.0, 150.0});
  const auto tables = build_profile_tables(rows, "base");
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_EQ(tables[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(tables[0].rows[0].summary.mean, 150.0);
  EXPECT_EQ(tables[0].rows[0].params.at("calls"), "1000000");
  EXPECT_DOUBLE_EQ(tables[0].rows[1].summary.mean, 100.0);
  std::ostringstream out;
  report::render_profile_grid(tables[0], out);
  EXPECT_THAT(out.str(), HasSubstr("[calls=1000000]"));
  EXPECT_THAT(out.str(), HasSubstr("[calls=10000000]"));
}

// --- naming -----------------------------------------------------------------------

TEST(RowNames, ParametersOnlyWhereABenchmarkHasSeveralSets) {
  analysis::Table table;
  for (const auto& [benchmark, params] : std::vector<std::pair<std::string, Params>>{
           {"mmtests/hackbench", kLoops40}, {"mmtests/hackbench", kLoops10}, {"syscall/getpid", {{"calls", "7"}}}}) {
    analysis::Row row;
    row.benchmark = benchmark;
    row.params = params;
    table.rows.push_back(row);
  }
  const report::RowNames names(table);
  // groups=4 is the same in both sets: only what tells them apart is shown.
  EXPECT_EQ(names(table.rows[0]), "mmtests/hackbench [loops=40]");
  EXPECT_EQ(names(table.rows[1]), "mmtests/hackbench [loops=10]");
  EXPECT_EQ(names(table.rows[2]), "syscall/getpid");
}

TEST(RowNames, AKeyOneSetLacksIsShownAsUnset) {
  analysis::ProfileTable table;
  table.rows.push_back({"b/x", kOps, {}, {{"size", "4KB"}}});
  table.rows.push_back({"b/x", kOps, {}, {{"size", "4KB"}, {"mode", "fast"}}});
  const report::RowNames names(table);
  EXPECT_EQ(names(table.rows[0]), "b/x [mode=(unset)]");
  EXPECT_EQ(names(table.rows[1]), "b/x [mode=fast]");
}

TEST(RowNames, ParamsTextIsCanonical) {
  EXPECT_EQ(params_text({}), "");
  EXPECT_EQ(params_text({{"loops", "40"}, {"groups", "4"}}), "groups=4;loops=40");
  EXPECT_EQ(params_text({{"loops", "40"}, {"groups", "4"}}, " "), "groups=4 loops=40");
}

// Two parameter sets of hackbench on both sides and a benchmark with one set.
analysis::Report two_parameter_sets() {
  std::vector<SampleRow> rows;
  add(rows, "base", "mmtests/hackbench", kSeconds, kLoops40, {10.0, 10.1, 9.9});
  add(rows, "test", "mmtests/hackbench", kSeconds, kLoops40, {10.0, 10.1, 9.9});
  add(rows, "base", "mmtests/hackbench", kSeconds, kLoops10, {3.0, 3.01, 2.99});
  add(rows, "test", "mmtests/hackbench", kSeconds, kLoops10, {3.0, 3.01, 2.99});
  add(rows, "base", "perf/syscall", kOps, {{"loops", "5"}}, {5.0, 5.1, 4.9});
  add(rows, "test", "perf/syscall", kOps, {{"loops", "5"}}, {5.0, 5.1, 4.9});
  return build_comparison(rows, base_vs_test());
}

TEST(RowNames, EveryTextFormatTellsParameterSetsApart) {
  const analysis::Report report = two_parameter_sets();
  for (const std::string format : {"grid", "markdown", "delta", "mail"}) {
    const std::string text = render(report, format);
    EXPECT_THAT(text, HasSubstr("mmtests/hackbench [loops=10]")) << format << "\n" << text;
    EXPECT_THAT(text, HasSubstr("mmtests/hackbench [loops=40]")) << format << "\n" << text;
    EXPECT_THAT(text, Not(HasSubstr("perf/syscall ["))) << format << "\n" << text;
  }
}

TEST(RowNames, CsvAndJsonAlwaysCarryTheParameters) {
  const analysis::Report report = two_parameter_sets();
  const std::string csv = render(report, "csv");
  // params, run_df, then the class columns (no class here; the machine "lab")
  // and the pairs.
  EXPECT_THAT(csv, HasSubstr(",params,run_df,sut_class,suts,machines,pairs\n"));
  EXPECT_THAT(csv, HasSubstr(",groups=4;loops=10,0,,lab,0,0\n"));
  EXPECT_THAT(csv, HasSubstr(",groups=4;loops=40,0,,lab,0,0\n"));
  EXPECT_THAT(csv, HasSubstr(",loops=5,0,,lab,0,0\n"));  // also where one set would need no naming
  const auto json = nlohmann::json::parse(render(report, "json"));
  const auto& rows = json["tables"][0]["rows"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["params"], (nlohmann::json{{"groups", "4"}, {"loops", "10"}}));
  EXPECT_EQ(rows[1]["params"], (nlohmann::json{{"groups", "4"}, {"loops", "40"}}));
  EXPECT_EQ(rows[2]["params"], (nlohmann::json{{"loops", "5"}}));
}

// --- the geomean reads like the rows -------------------------------------------------

// One lower-is-better row whose test mean is 30.15% of the base: the row
// prints 69.85%. The geomean used to print base/test - 1 = 231.67%.
std::vector<SampleRow> one_faster_row() {
  std::vector<SampleRow> rows;
  add(rows, "base", "mmtests/hackbench", kSeconds, kLoops40, {10.0, 10.0, 10.0});
  add(rows, "test", "mmtests/hackbench", kSeconds, kLoops40, {3.015, 3.015, 3.015});
  return rows;
}

TEST(CompareGeomean, OneRowGeomeanIsThatRowsChange) {
  const analysis::Report report = build_comparison(one_faster_row(), base_vs_test());
  const auto& table = report.tables.at(0);
  const double printed = analysis::signed_change(table.rows[0], table.rows[0].cells[0], SignConvention::Better);
  EXPECT_NEAR(printed, 69.85, 1e-9);
  EXPECT_NEAR(table.columns[0].geomean_change_pct, printed, 1e-9);
  EXPECT_NEAR(table.columns[0].geomean_raw_change_pct, -69.85, 1e-9);
  EXPECT_EQ(table.columns[0].geomean_rows, 1);
}

TEST(CompareGeomean, EveryFormatPrintsTheGeomeanOnTheRowsScale) {
  const analysis::Report better = build_comparison(one_faster_row(), base_vs_test());
  const std::string grid = render(better, "grid");
  EXPECT_THAT(grid, HasSubstr("| all rows (positive = better) "));
  EXPECT_THAT(grid, HasSubstr("|     69.85% |"));
  EXPECT_THAT(grid, Not(HasSubstr("231."))) << grid;
  EXPECT_THAT(render(better, "mail"), HasSubstr("geomean (positive = better): 69.85% over 1 rows"));
  // markdown and delta print the raw change (↓69.8%, -69.8%): so does their geomean.
  EXPECT_THAT(render(better, "markdown"), HasSubstr("geomean (raw: positive = larger): -69.85% over 1 rows"));
  EXPECT_THAT(render(better, "delta"), HasSubstr("geomean (raw: positive = larger): -69.85% over 1 rows"));

  const analysis::Report raw = build_comparison(one_faster_row(), base_vs_test(SignConvention::Raw));
  const std::string raw_grid = render(raw, "grid");
  EXPECT_THAT(raw_grid, HasSubstr("| all rows (raw: positive = larger) "));
  EXPECT_THAT(raw_grid, HasSubstr("-69.85% |"));
  EXPECT_THAT(raw_grid, Not(HasSubstr(" 69.85% |")));
  EXPECT_THAT(render(raw, "mail"), HasSubstr("geomean (raw: positive = larger): -69.85% over 1 rows"));
  const auto json = nlohmann::json::parse(render(raw, "json"));
  EXPECT_NEAR(json["tables"][0]["columns"][0]["geomean_change_pct"].get<double>(), 69.85, 1e-9);
  EXPECT_NEAR(json["tables"][0]["columns"][0]["geomean_raw_change_pct"].get<double>(), -69.85, 1e-9);
}

TEST(CompareGeomean, RowsOfOneDirectionGiveTheGeometricMeanOfTheirRatios) {
  std::vector<SampleRow> rows;
  // test/base = 0.5 and 0.8: the geometric mean ratio is sqrt(0.4).
  add(rows, "base", "b/a", kSeconds, {}, {10.0, 10.0});
  add(rows, "test", "b/a", kSeconds, {}, {5.0, 5.0});
  add(rows, "base", "b/b", kSeconds, {}, {10.0, 10.0});
  add(rows, "test", "b/b", kSeconds, {}, {8.0, 8.0});
  const analysis::Report report = build_comparison(rows, base_vs_test());
  const auto& column = report.tables.at(0).columns.at(0);
  // Printed as a lower-is-better row prints a change: 1 - test/base.
  EXPECT_NEAR(column.geomean_change_pct, (1 - std::sqrt(0.4)) * 100, 1e-9);
  EXPECT_NEAR(column.geomean_raw_change_pct, (std::sqrt(0.4) - 1) * 100, 1e-9);
  // Between the rows' own changes (50% and 20%), as a summary of them should be.
  EXPECT_GT(column.geomean_change_pct, 20.0);
  EXPECT_LT(column.geomean_change_pct, 50.0);
}

TEST(CompareGeomean, ZeroOrMissingMeansAreLeftOut) {
  std::vector<SampleRow> rows;
  add(rows, "base", "b/a", kOps, {}, {10.0, 10.0});
  add(rows, "test", "b/a", kOps, {}, {11.0, 11.0});
  add(rows, "base", "b/zero", kOps, {}, {0.0, 0.0});
  add(rows, "test", "b/zero", kOps, {}, {1.0, 1.0});
  add(rows, "base", "b/only-base", kOps, {}, {1.0, 1.0});
  const analysis::Report report = build_comparison(rows, base_vs_test());
  const auto& column = report.tables.at(0).columns.at(0);
  EXPECT_EQ(column.geomean_rows, 1);
  EXPECT_NEAR(column.geomean_change_pct, 10.0, 1e-9);
}

// --- profiles measured on different SUTs ---------------------------------------------

store::SessionStart session_on(const std::string& sut_name, const std::string& swprofile) {
  store::SessionStart start;
  start.sut.name = sut_name;
  start.sut.hostname = "lab.example";
  start.sut.arch = "x86_64";
  start.sut.cpu_model = "Test CPU";
  start.sut.cpu_count = 2;
  start.sut.memory_gib = 8;
  start.swprofile = swprofile;
  start.fingerprint = {{"kernel_release", "6.1.0-test"}, {"hostname", "lab.example"}};
  start.started_at = "2026-11-30T12:00:00Z";
  return start;
}

// A finished session of one benchmark with three repeats, as kbench run leaves it.
void store_session(store::ResultStore& store, const std::string& sut_name, const std::string& swprofile,
                   const std::string& benchmark = "syscall/getpid") {
  const store::BenchmarkKey getpid{benchmark, {{"calls", "1000"}}};
  const ResultClass mean{"mean", "ns", Better::Lower};
  const std::int64_t session = store.begin_session(session_on(sut_name, swprofile));
  for (int repeat = 0; repeat < 3; ++repeat)
    store.add_repeat(session, getpid, repeat, {records::Sample{"", mean, 0, 100.0 + repeat}});
  store.record_outcome(session, getpid, store::Outcome{store::OutcomeStatus::Ok, "", ""});
  store.finish_session(session);
}

// kbench compare in this process, as main() runs it; stdout is captured.
std::string run_compare(std::vector<std::string> args) {
  CLI::App app;
  cli::add_compare_command(app);
  args.insert(args.begin(), "compare");
  std::reverse(args.begin(), args.end());  // CLI11 reads the vector from its end
  std::ostringstream captured;
  std::streambuf* const saved = std::cout.rdbuf(captured.rdbuf());
  try {
    app.parse(args);
  } catch (...) {
    std::cout.rdbuf(saved);
    throw;
  }
  std::cout.rdbuf(saved);
  return captured.str();
}

class CompareSuts : public ::testing::Test {
 protected:
  std::string url() const { return "sqlite://" + (dir.path() / "results.db").string(); }
  testing::TempDir dir;
};

TEST_F(CompareSuts, ProfilesOnDifferentSutsAreRefusedNamingBoth) {
  {
    auto store = store::open_store(url(), store::OpenMode::CreateIfMissing);
    store_session(*store, "a", "A");
    store_session(*store, "b", "B");
  }
  EXPECT_EQ(error_of([&] { run_compare({"A", "B", "--store", url()}); }),
            "compare: base 'A' was measured on SUT 'a', 'B' only on SUT 'b'; rows are compared within one SUT, "
            "so measure both on the same one (kbench run --sut NAME)");
}

TEST_F(CompareSuts, OneTestColumnWithoutASharedSutIsEnoughToRefuse) {
  {
    auto store = store::open_store(url(), store::OpenMode::CreateIfMissing);
    store_session(*store, "a", "A");
    store_session(*store, "c", "A");
    store_session(*store, "a", "B");
    store_session(*store, "b", "C");
    store_session(*store, "d", "C");
  }
  EXPECT_EQ(error_of([&] { run_compare({"A", "B", "C", "--store", url()}); }),
            "compare: base 'A' was measured on SUTs 'a', 'c', 'C' only on SUTs 'b', 'd'; rows are compared within "
            "one SUT, so measure both on the same one (kbench run --sut NAME)");
}

TEST_F(CompareSuts, ATestProfileWithoutMatchingRowsIsRefused) {
  {
    auto store = store::open_store(url(), store::OpenMode::CreateIfMissing);
    store_session(*store, "a", "A");
    store_session(*store, "a", "B", "syscall/getppid");
  }
  EXPECT_EQ(error_of([&] { run_compare({"A", "B", "--benchmark", "syscall/getpid", "--store", url()}); }),
            "compare: no rows for swprofile 'B' match --sut/--benchmark/--resultclass");
}

TEST_F(CompareSuts, ProfilesSharingASutAreCompared) {
  {
    auto store = store::open_store(url(), store::OpenMode::CreateIfMissing);
    store_session(*store, "a", "A");
    store_session(*store, "b", "A");  // A's table on b has an empty B column, but a has both
    store_session(*store, "a", "B");
  }
  const std::string out = run_compare({"A", "B", "--store", url()});
  EXPECT_THAT(out, HasSubstr("Results for SUT a:"));
  EXPECT_THAT(out, HasSubstr("syscall/getpid"));
}

}  // namespace
}  // namespace kbench
