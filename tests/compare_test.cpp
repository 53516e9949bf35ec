#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "common/errors.h"
#include "report/renderers.h"

using kbench::Better;
using kbench::analysis::build_comparison;
using kbench::analysis::CompareOptions;
using kbench::analysis::natural_less;
using kbench::analysis::TestMethod;
using kbench::analysis::Verdict;
using kbench::store::SampleRow;

namespace {

void add(std::vector<SampleRow>& rows, const std::string& sut, const std::string& profile,
         const std::string& benchmark, const std::string& rc, const std::string& unit, Better better,
         const std::vector<double>& values) {
  int repeat = 0;
  for (const double v : values) {
    SampleRow row;
    row.sut = sut;
    row.swprofile = profile;
    row.session = profile == "base" ? 1 : 2;
    row.benchmark = benchmark;
    row.result_class = {rc, unit, better};
    row.repeat = repeat++;
    row.value = v;
    rows.push_back(row);
  }
}

// The statistics of one session's repeats, as compared with --sessions pooled
// and no margin: most tests below check that machinery.
CompareOptions base_vs_test() {
  CompareOptions options;
  options.base = "base";
  options.tests = {"test"};
  options.sessions = kbench::analysis::SessionMode::Pooled;
  options.min_change_pct = 0;
  return options;
}

// What `kbench compare base test` does by default.
CompareOptions default_base_vs_test() {
  CompareOptions options;
  options.base = "base";
  options.tests = {"test"};
  return options;
}

bool marked(Verdict verdict) { return verdict == Verdict::Improvement || verdict == Verdict::Regression; }

const std::vector<double> kBase = {100.0, 101.0, 99.0, 100.5, 99.5};

}  // namespace

TEST(NaturalOrder, NumbersCompareAsNumbers) {
  EXPECT_TRUE(natural_less("fix_size_alloc_test: p:4, h:0", "fix_size_alloc_test: p:16, h:0"));
  EXPECT_TRUE(natural_less("hackbench-process-pipes-7 (seconds)", "hackbench-process-pipes-12 (seconds)"));
  EXPECT_TRUE(natural_less("size:4MB P:1 stride:128B seq_read_lat (ns)", "size:16MB P:1 stride:128B rnd_read_lat (ns)"));
  EXPECT_TRUE(natural_less("hackbench-process-pipes-256 (seconds)", "hackbench-process-sockets-1 (seconds)"));
  EXPECT_FALSE(natural_less("a10", "a9"));
  EXPECT_FALSE(natural_less("same", "same"));
  EXPECT_TRUE(natural_less("a", "ab"));
}

TEST(NaturalOrder, TextsEqualAsNumbersAreStillTwoKeys) {
  std::map<std::string, int, decltype(&natural_less)> keys(&natural_less);
  for (const char* text : {"node2", "node1", "loops=10", "node01", "loops=010", "node02"}) ++keys[text];
  std::vector<std::string> order;
  for (const auto& [text, count] : keys) order.push_back(text + "x" + std::to_string(count));
  EXPECT_EQ(order,
            (std::vector<std::string>{"loops=010x1", "loops=10x1", "node01x1", "node1x1", "node02x1", "node2x1"}));
}

TEST(Compare, ClearSlowdownOfLowerIsBetterIsARegression) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "syscall/getpid", "mean", "ns", Better::Lower, kBase);
  add(rows, "m", "test", "syscall/getpid", "mean", "ns", Better::Lower, {110.0, 111.0, 109.0, 110.5, 109.5});
  const auto report = build_comparison(rows, base_vs_test());
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& row = report.tables[0].rows.at(0);
  const auto& cell = row.cells.at(0);
  EXPECT_NEAR(cell.change_pct, 10.0, 1e-12);
  EXPECT_NEAR(kbench::analysis::signed_change(row, cell, kbench::analysis::SignConvention::Better), -10.0, 1e-12);
  EXPECT_EQ(cell.verdict, Verdict::Regression);
  EXPECT_EQ(report.tables[0].columns[0].regressions, 1);
  EXPECT_EQ(report.legend.rows_tested, 1);
}

TEST(Compare, HigherIsBetterIncreaseIsAnImprovement) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "perf/syscall", "basic", "ops/sec", Better::Higher, kBase);
  add(rows, "m", "test", "perf/syscall", "basic", "ops/sec", Better::Higher, {110.0, 111.0, 109.0, 110.5, 109.5});
  const auto report = build_comparison(rows, base_vs_test());
  EXPECT_EQ(report.tables[0].rows[0].cells[0].verdict, Verdict::Improvement);
  EXPECT_EQ(report.tables[0].columns[0].improvements, 1);
}

TEST(Compare, IdenticalSamplesAreNotMarked) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "b/x", "mean", "ns", Better::Lower, kBase);
  add(rows, "m", "test", "b/x", "mean", "ns", Better::Lower, kBase);
  const auto report = build_comparison(rows, base_vs_test());
  EXPECT_FALSE(marked(report.tables[0].rows[0].cells[0].verdict));
  EXPECT_DOUBLE_EQ(report.tables[0].rows[0].cells[0].change_pct, 0.0);
}

TEST(Compare, TooFewSamplesGiveNoMarkAndAReason) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "b/x", "mean", "ns", Better::Lower, {100.0});
  add(rows, "m", "test", "b/x", "mean", "ns", Better::Lower, {200.0});
  for (const TestMethod method : {TestMethod::Welch, TestMethod::MannWhitney, TestMethod::CiOverlap}) {
    auto options = base_vs_test();
    options.method = method;
    const auto report = build_comparison(rows, options);
    const auto& cell = report.tables[0].rows[0].cells[0];
    EXPECT_EQ(cell.verdict, Verdict::None) << kbench::analysis::method_name(method);
    EXPECT_FALSE(cell.note.empty()) << kbench::analysis::method_name(method);
    EXPECT_EQ(report.legend.rows_tested, 0) << kbench::analysis::method_name(method);
  }
}

TEST(Compare, MissingRowOnOneSideGivesAnEmptyCell) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "b/x", "mean", "ns", Better::Lower, kBase);
  add(rows, "m", "base", "b/y", "mean", "ns", Better::Lower, kBase);
  add(rows, "m", "test", "b/x", "mean", "ns", Better::Lower, kBase);
  add(rows, "m", "test", "b/z", "mean", "ns", Better::Lower, kBase);
  const auto report = build_comparison(rows, base_vs_test());
  const auto& table = report.tables.at(0);
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_TRUE(table.rows[0].cells[0].present);
  EXPECT_FALSE(table.rows[1].cells[0].present);  // b/y: no test data
  EXPECT_FALSE(table.rows[2].base_present);      // b/z: no base data
}

TEST(Compare, BenjaminiHochbergIsAppliedOverAllRows) {
  // Twenty rows with a modest shift: each alone is significant at 5%, the
  // q-values are the BH adjustment of the p-values over all twenty.
  std::vector<SampleRow> rows;
  for (int i = 0; i < 20; ++i) {
    const std::string rc = "r" + std::to_string(i);
    add(rows, "m", "base", "b/x", rc, "ns", Better::Lower, kBase);
    std::vector<double> shifted;
    for (double v : kBase) shifted.push_back(v * (1.0 + 0.004 * (i + 1)));
    add(rows, "m", "test", "b/x", rc, "ns", Better::Lower, shifted);
  }
  const auto corrected = build_comparison(rows, base_vs_test());
  auto options = base_vs_test();
  options.fdr.reset();
  const auto uncorrected = build_comparison(rows, options);
  std::vector<double> p;
  for (const auto& row : uncorrected.tables[0].rows) p.push_back(row.cells[0].p_value);
  const auto q = kbench::stats::benjamini_hochberg(p);
  int marked_corrected = 0, marked_uncorrected = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_DOUBLE_EQ(corrected.tables[0].rows[i].cells[0].q_value, q[i]);
    marked_corrected += marked(corrected.tables[0].rows[i].cells[0].verdict);
    marked_uncorrected += uncorrected.tables[0].rows[i].cells[0].p_value <= 0.05;
    EXPECT_EQ(marked(uncorrected.tables[0].rows[i].cells[0].verdict),
              uncorrected.tables[0].rows[i].cells[0].p_value <= 0.05);
  }
  EXPECT_EQ(corrected.legend.rows_tested, 20);
  EXPECT_LE(marked_corrected, marked_uncorrected);
  EXPECT_GT(marked_uncorrected, 0);
}

TEST(Compare, CiOverlapMarksOnlyDisjointIntervals) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "b/x", "far", "ns", Better::Lower, kBase);
  add(rows, "m", "test", "b/x", "far", "ns", Better::Lower, {120.0, 121.0, 119.0, 120.5, 119.5});
  add(rows, "m", "base", "b/x", "near", "ns", Better::Lower, kBase);
  add(rows, "m", "test", "b/x", "near", "ns", Better::Lower, {100.5, 101.5, 99.5, 101.0, 100.0});
  auto options = base_vs_test();
  options.method = TestMethod::CiOverlap;
  const auto report = build_comparison(rows, options);
  EXPECT_EQ(report.tables[0].rows[0].cells[0].verdict, Verdict::Regression);  // far
  EXPECT_FALSE(marked(report.tables[0].rows[1].cells[0].verdict));            // near
  EXPECT_EQ(report.legend.rows_tested, 2);
}

TEST(Compare, MinChangeLeavesSmallChangesUnmarked) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "b/x", "mean", "ns", Better::Lower, {100.0, 100.01, 99.99, 100.0, 100.0});
  add(rows, "m", "test", "b/x", "mean", "ns", Better::Lower, {101.0, 101.01, 100.99, 101.0, 101.0});
  auto options = base_vs_test();
  EXPECT_EQ(build_comparison(rows, options).tables[0].rows[0].cells[0].verdict, Verdict::Regression);
  options.min_change_pct = 2.0;  // a 1 % change known to +-0.01 %: unchanged within +-2 %
  EXPECT_EQ(build_comparison(rows, options).tables[0].rows[0].cells[0].verdict, Verdict::Unchanged);
}

TEST(Compare, GeomeanIsInTheBetterSense) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "b/x", "lat", "ns", Better::Lower, {100.0, 100.0});
  add(rows, "m", "test", "b/x", "lat", "ns", Better::Lower, {50.0, 50.0});  // 2x better
  add(rows, "m", "base", "b/x", "ops", "ops/sec", Better::Higher, {100.0, 100.0});
  add(rows, "m", "test", "b/x", "ops", "ops/sec", Better::Higher, {200.0, 200.0});  // 2x better
  const auto report = build_comparison(rows, base_vs_test());
  // Both rows are 2x better: G = 2. The latency row prints 1 - 1/G = 50%, the
  // throughput row G - 1 = 100%; the geomean prints G as they do, averaged.
  EXPECT_NEAR(report.tables[0].columns[0].geomean_change_pct, 75.0, 1e-9);
  EXPECT_EQ(report.tables[0].columns[0].geomean_rows, 2);
}

TEST(Compare, OneTablePerSutWhereTheBaseHasData) {
  std::vector<SampleRow> rows;
  add(rows, "m1", "base", "b/x", "mean", "ns", Better::Lower, kBase);
  add(rows, "m1", "test", "b/x", "mean", "ns", Better::Lower, kBase);
  add(rows, "m2", "base", "b/x", "mean", "ns", Better::Lower, kBase);
  add(rows, "m3", "test", "b/x", "mean", "ns", Better::Lower, kBase);
  const auto report = build_comparison(rows, base_vs_test());
  ASSERT_EQ(report.tables.size(), 2u);
  EXPECT_EQ(report.tables[0].sut, "m1");
  EXPECT_EQ(report.tables[1].sut, "m2");
}

TEST(Compare, UnknownMethodIsInputError) {
  EXPECT_THROW(kbench::analysis::parse_test_method("bayes"), kbench::InputError);
  EXPECT_THROW(kbench::analysis::parse_test_method("Welch"), kbench::InputError);
}

TEST(Compare, MethodNamesReadBackToTheirMethod) {
  for (const TestMethod method : {TestMethod::Welch, TestMethod::MannWhitney, TestMethod::CiOverlap}) {
    EXPECT_EQ(kbench::analysis::parse_test_method(std::string(kbench::analysis::method_name(method))), method);
  }
  EXPECT_EQ(kbench::analysis::method_names(), "welch, mwu, ci-overlap");
}

// --- sessions -----------------------------------------------------------------

namespace {

using kbench::analysis::SessionMode;

// One row of a profile measured in several sessions (one vector per session).
void add_sessions(std::vector<SampleRow>& rows, const std::string& profile, std::int64_t first_session,
                  const std::vector<std::vector<double>>& sessions, const std::string& rc = "mean") {
  std::int64_t session = first_session;
  int index = 0;
  for (const auto& values : sessions) {
    int repeat = 0;
    for (const double v : values) {
      SampleRow row;
      row.sut = "m";
      row.swprofile = profile;
      row.session = session;
      row.session_index = index;
      row.benchmark = "b/x";
      row.result_class = {rc, "ns", Better::Lower};
      row.repeat = repeat++;
      row.value = v;
      rows.push_back(row);
    }
    ++session;
    ++index;
  }
}

// Repeats agree within 0.1%, but every boot lands somewhere else within a few
// percent: the classic session effect. Both profiles are the same kernel.
std::vector<SampleRow> strong_session_effect() {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 100.1, 99.9, 100.05, 99.95}, {103.0, 103.1, 102.9, 103.05, 102.95},
                                 {99.0, 99.1, 98.9, 99.05, 98.95}});
  add_sessions(rows, "test", 10, {{104.0, 104.1, 103.9, 104.05, 103.95}, {101.0, 101.1, 100.9, 101.05, 100.95},
                                  {105.0, 105.1, 104.9, 105.05, 104.95}});
  return rows;
}

}  // namespace

TEST(CompareSessions, ParseSessionMode) {
  EXPECT_EQ(kbench::analysis::parse_session_mode("sessions"), SessionMode::Sessions);
  EXPECT_EQ(kbench::analysis::parse_session_mode("pooled"), SessionMode::Pooled);
  EXPECT_THROW(kbench::analysis::parse_session_mode("auto"), kbench::InputError);
  EXPECT_THROW(kbench::analysis::parse_session_mode("boots"), kbench::InputError);
}

namespace {
std::vector<double> logs(std::vector<double> values) {
  for (auto& v : values) v = std::log(v);
  return values;
}
}  // namespace

TEST(CompareSessions, StrongSessionEffectPooledMarksTheSessionTestDoesNot) {
  const auto rows = strong_session_effect();
  auto pooled = default_base_vs_test();
  pooled.sessions = SessionMode::Pooled;
  const auto naive = build_comparison(rows, pooled);
  const auto& naive_cell = naive.tables.at(0).rows.at(0).cells.at(0);
  EXPECT_EQ(naive_cell.verdict, Verdict::Regression);  // 15 "independent" repeats a side
  EXPECT_EQ(naive.legend.cells_on_session_means, 0);
  EXPECT_EQ(naive.legend.sessions, "pooled");

  const auto aware = build_comparison(rows, default_base_vs_test());  // sessions is the default
  const auto& cell = aware.tables.at(0).rows.at(0).cells.at(0);
  EXPECT_EQ(cell.verdict, Verdict::Undecided);
  EXPECT_GT(cell.sessions_to_decide, 0);
  EXPECT_EQ(cell.base_sessions, 3u);
  EXPECT_EQ(cell.test_sessions, 3u);
  EXPECT_EQ(cell.prior_df, 0.0);
  EXPECT_EQ(aware.legend.cells_on_session_means, 1);
  EXPECT_EQ(aware.legend.sessions, "sessions");
  // With no other profile the session test is Student's t on the log session means.
  const std::vector<double> base_means = {100.0, 103.0, 99.0};
  const std::vector<double> test_means = {104.0, 101.0, 105.0};
  const auto session = kbench::stats::session_test(base_means, test_means, {});
  EXPECT_NEAR(cell.p_value, session.p_value, 1e-12);
  const auto b = logs(base_means), t = logs(test_means);
  const auto student = kbench::stats::welch_t_test(b, t);  // equal sizes: Welch's t equals Student's
  EXPECT_NEAR(session.statistic, -student.statistic, 1e-9);
  // The displayed change is the one tested (the ratio of the geometric means
  // of the session means), so the mark, its direction and its CI agree.
  EXPECT_NEAR(cell.change_pct, std::expm1(session.log_change) * 100, 1e-9);
  ASSERT_TRUE(cell.change_ci.valid);
  EXPECT_LT(cell.change_ci.low, 0.0);
  EXPECT_GT(cell.change_ci.high, 0.0);
}

TEST(CompareSessions, OneSessionASideNeedsTheNoiseModel) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 100.1, 99.9}});
  add_sessions(rows, "test", 10, {{110.0, 110.1, 109.9}});
  const auto alone = build_comparison(rows, default_base_vs_test());
  const auto& untested = alone.tables.at(0).rows.at(0).cells.at(0);
  EXPECT_EQ(untested.verdict, Verdict::None);
  EXPECT_NE(untested.note.find("no noise model"), std::string::npos) << untested.note;
  EXPECT_EQ(alone.tables[0].columns.at(0).untested, 1);

  // Another profile on the SUT with 4 quiet sessions: the row borrows its 3 df.
  add_sessions(rows, "calibrate", 20, {{100.0}, {100.5}, {99.6}, {100.2}});
  const auto modelled = build_comparison(rows, default_base_vs_test());
  ASSERT_EQ(modelled.tables.at(0).rows.size(), 1u);
  const auto& cell = modelled.tables[0].rows[0].cells.at(0);
  EXPECT_EQ(cell.prior_df, 3.0);
  EXPECT_EQ(cell.verdict, Verdict::Regression);  // +10 % against a 0.4 % session noise
  const auto prior = kbench::stats::pool_log_session_variance({{100.0, 100.5, 99.6, 100.2}});
  EXPECT_NEAR(cell.p_value, kbench::stats::session_test(std::vector<double>{100.0}, std::vector<double>{110.0}, prior).p_value,
              1e-12);
}

TEST(CompareSessions, OneSessionOnOneSideBorrowsTheOtherSidesDf) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 100.1, 99.9}, {103.0, 103.1, 102.9}, {99.0, 99.1, 98.9}});
  add_sessions(rows, "test", 10, {{104.0, 104.1, 103.9, 104.05}});
  const auto report = build_comparison(rows, default_base_vs_test());
  const auto& cell = report.tables[0].rows[0].cells[0];
  EXPECT_TRUE(cell.note.empty()) << cell.note;
  EXPECT_EQ(cell.base_sessions, 3u);
  EXPECT_EQ(cell.test_sessions, 1u);
  EXPECT_TRUE(std::isfinite(cell.p_value));
}

TEST(CompareSessions, UnchangedWhenTheCiLiesInsideTheMargin) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0}, {100.2}, {99.9}, {100.1}, {100.0}});
  add_sessions(rows, "test", 10, {{100.1}, {100.0}, {99.9}, {100.2}, {100.1}});
  const auto report = build_comparison(rows, default_base_vs_test());
  const auto& cell = report.tables[0].rows[0].cells[0];
  EXPECT_EQ(cell.verdict, Verdict::Unchanged);
  EXPECT_EQ(report.tables[0].columns[0].unchanged, 1);
  auto strict = default_base_vs_test();
  strict.min_change_pct = 0;  // no margin: nothing can be shown unchanged
  EXPECT_EQ(build_comparison(rows, strict).tables[0].rows[0].cells[0].verdict, Verdict::Undecided);
}

TEST(CompareSessions, CiOverlapOnSessionMeans) {
  const auto rows = strong_session_effect();
  auto options = default_base_vs_test();
  options.method = TestMethod::CiOverlap;
  options.sessions = SessionMode::Pooled;
  EXPECT_EQ(build_comparison(rows, options).tables[0].rows[0].cells[0].verdict, Verdict::Regression);
  options.sessions = SessionMode::Sessions;
  const auto aware = build_comparison(rows, options);
  EXPECT_EQ(aware.tables[0].rows[0].cells[0].verdict, Verdict::Undecided);
  EXPECT_EQ(aware.legend.rows_tested, 1);
}

TEST(CompareSessions, MannWhitneyBeyond170SamplesIsTested) {
  // The smallest-p guard used tgamma(n + m + 1), which overflows from 171 on.
  std::vector<SampleRow> rows;
  std::vector<double> base, test;
  for (int i = 0; i < 200; ++i) {
    base.push_back(100.0 + (i % 10) * 0.1);
    test.push_back(110.0 + (i % 10) * 0.1);
  }
  add_sessions(rows, "base", 1, {base});
  add_sessions(rows, "test", 10, {test});
  auto options = base_vs_test();
  options.method = TestMethod::MannWhitney;
  options.sessions = SessionMode::Pooled;
  const auto report = build_comparison(rows, options);
  const auto& cell = report.tables.at(0).rows.at(0).cells.at(0);
  EXPECT_TRUE(cell.note.empty()) << cell.note;
  EXPECT_EQ(cell.verdict, Verdict::Regression);
}

TEST(CompareSessions, ZeroBaseIsNotTestedAndNegativeBaseKeepsTheDirection) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{0.0, 0.0}, {0.0, 0.0}}, "zero");
  add_sessions(rows, "test", 10, {{1.0, 1.0}, {1.0, 1.0}}, "zero");
  add_sessions(rows, "base", 1, {{-100.0, -100.1}, {-99.9, -100.0}}, "negative");
  add_sessions(rows, "test", 10, {{-90.0, -90.1}, {-89.9, -90.0}}, "negative");
  auto options = base_vs_test();
  options.sessions = SessionMode::Pooled;
  const auto report = build_comparison(rows, options);
  const auto& table = report.tables.at(0);
  ASSERT_EQ(table.rows.size(), 2u);
  for (const auto& row : table.rows) {
    const auto& cell = row.cells.at(0);
    if (row.result_class.name == "zero") {
      EXPECT_EQ(cell.verdict, Verdict::None);
      EXPECT_FALSE(cell.note.empty());
    } else {
      EXPECT_GT(cell.change_pct, 0.0);  // -100 -> -90 is up, whatever the sign of the base
      const double better = kbench::analysis::signed_change(row, cell, kbench::analysis::SignConvention::Better);
      EXPECT_EQ(cell.verdict, better > 0 ? Verdict::Improvement : Verdict::Regression);
    }
  }
  EXPECT_EQ(report.legend.rows_tested, 1);  // the zero base is not a test
}

TEST(CompareSessions, LegendSaysWhichCellsWereTestedOnSessionMeans) {
  const auto report = build_comparison(strong_session_effect(), default_base_vs_test());
  const auto lines = kbench::report::legend_lines(report.legend, false);
  bool found = false;
  for (const auto& line : lines) found = found || line.find("1 cell tested on session means") != std::string::npos;
  EXPECT_TRUE(found);
}
// --- rows that are not what they seem ----------------------------------------

TEST(CompareFlags, MeanAboveItsP99IsAHeavyTail) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{150.0, 151.0}, {149.0, 150.5}}, "mean");
  add_sessions(rows, "base", 1, {{120.0, 121.0}, {119.0, 120.5}}, "p99");
  add_sessions(rows, "test", 10, {{100.0, 101.0}, {99.0, 100.5}}, "mean");
  add_sessions(rows, "test", 10, {{120.0, 121.0}, {119.0, 120.5}}, "p99");
  const auto report = build_comparison(rows, default_base_vs_test());
  const auto& table = report.tables.at(0);
  ASSERT_EQ(table.rows.size(), 2u);
  for (const auto& row : table.rows) {
    EXPECT_EQ(row.cells.at(0).heavy_tail, row.result_class.name == "mean") << row.result_class.name;
  }
}

TEST(CompareFlags, AFewExtremeRepeatsAreAHeavyTail) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 100.2, 99.8, 100.1, 99.9, 100.0, 100.3, 99.7, 100.0, 100.1}});
  add_sessions(rows, "test", 10, {{100.0, 100.2, 99.8, 100.1, 99.9, 100.0, 100.3, 99.7, 100.0, 200.0}});
  const auto report = build_comparison(rows, base_vs_test());
  const auto& cell = report.tables.at(0).rows.at(0).cells.at(0);
  EXPECT_TRUE(cell.heavy_tail);
  EXPECT_FALSE(cell.bimodal);
}

TEST(CompareFlags, TwoModesInsideASessionAreBimodalASessionEffectIsNot) {
  std::vector<SampleRow> rows;
  // Each session has repeats in both modes (around 100 and around 130).
  add_sessions(rows, "base", 1, {{100.0, 130.0, 100.5}, {130.5, 99.5, 129.5}});
  add_sessions(rows, "test", 10, {{100.0, 100.2, 99.9}, {100.1, 99.8, 100.3}});
  EXPECT_TRUE(build_comparison(rows, default_base_vs_test()).tables.at(0).rows.at(0).cells.at(0).bimodal);

  // Sessions that differ, each tight: that is a session effect, not two modes.
  std::vector<SampleRow> shifted;
  add_sessions(shifted, "base", 1, {{100.0, 100.1, 99.9}, {130.0, 130.1, 129.9}});
  add_sessions(shifted, "test", 10, {{100.0, 100.2, 99.9}, {100.1, 99.8, 100.3}});
  EXPECT_FALSE(build_comparison(shifted, default_base_vs_test()).tables.at(0).rows.at(0).cells.at(0).bimodal);
}

TEST(CompareSessions, LooksSplitTheLevel) {
  // A change whose q lies between 0.05/4 and 0.05: marked with one look,
  // undecided when the level is split over four.
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0}, {101.0}, {99.0}, {100.5}, {99.5}});
  add_sessions(rows, "test", 10, {{102.0}, {104.0}, {100.0}, {101.5}, {103.5}});  // +2.2 %, p = 0.025
  auto options = default_base_vs_test();
  const auto once = build_comparison(rows, options);
  const auto& cell = once.tables.at(0).rows.at(0).cells.at(0);
  ASSERT_GT(cell.q_value, 0.05 / 4);
  ASSERT_LE(cell.q_value, 0.05);
  EXPECT_EQ(cell.verdict, Verdict::Regression);
  options.looks = 4;
  const auto split = build_comparison(rows, options);
  EXPECT_EQ(split.tables[0].rows[0].cells[0].verdict, Verdict::Undecided);
  EXPECT_EQ(split.legend.looks, 4);
}

TEST(CompareFlags, AMeanIsHeldAgainstTheP99OfItsOwnParameterSet) {
  // calls=10: mean 100 above its own p99 90 (a heavy tail), though below the
  // other set's p99 200; calls=1000: mean 150 below its p99 200.
  std::vector<SampleRow> rows;
  const auto with = [&](const std::string& profile, std::int64_t first, const std::vector<std::vector<double>>& s,
                        const std::string& rc, const std::string& calls) {
    const std::size_t before = rows.size();
    add_sessions(rows, profile, first, s, rc);
    for (std::size_t i = before; i < rows.size(); ++i) rows[i].params = {{"calls", calls}};
  };
  for (const std::string profile : {"base", "test"}) {
    const std::int64_t first = profile == "base" ? 1 : 10;
    with(profile, first, {{150.0, 151.0}, {149.0, 150.5}}, "mean", "1000");
    with(profile, first, {{200.0, 201.0}, {199.0, 200.5}}, "p99", "1000");
    with(profile, first, {{100.0, 101.0}, {99.0, 100.5}}, "mean", "10");
    with(profile, first, {{90.0, 91.0}, {89.0, 90.5}}, "p99", "10");
  }
  const auto report = build_comparison(rows, default_base_vs_test());
  int means = 0;
  for (const auto& row : report.tables.at(0).rows) {
    if (row.result_class.name != "mean") continue;
    ++means;
    EXPECT_EQ(row.cells.at(0).heavy_tail, row.params.at("calls") == "10") << row.params.at("calls");
  }
  EXPECT_EQ(means, 2);
}

namespace {

TEST(CompareVerdicts, ARowLeftUndecidedOnlyByBenjaminiHochbergSaysHowManySessionsDecideIt) {
  // Row "a" changes 3 % with p about 0.02 on its own; 19 unchanged rows share
  // the report, so BH leaves it unmarked although its 95 % CI excludes 0.
  // It needs sessions, and says how many (it used to say nothing: its 95 %
  // CI was "already decided").
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0}, {101.0}, {99.0}}, "a");
  add_sessions(rows, "test", 10, {{103.0}, {104.0}, {102.0}}, "a");
  for (int r = 0; r < 19; ++r) {
    add_sessions(rows, "base", 1, {{100.0}, {101.0}, {99.0}}, "z" + std::to_string(r));
    add_sessions(rows, "test", 10, {{100.0}, {101.0}, {99.0}}, "z" + std::to_string(r));
  }
  const auto report = build_comparison(rows, default_base_vs_test());
  const auto& table = report.tables.at(0);
  const auto found = std::find_if(table.rows.begin(), table.rows.end(),
                                  [](const auto& row) { return row.result_class.name == "a"; });
  ASSERT_NE(found, table.rows.end());
  const auto& cell = found->cells.at(0);
  EXPECT_EQ(cell.verdict, Verdict::Undecided);
  EXPECT_GT(cell.change_ci.low, 0.0) << "the per-row 95 % CI excludes 0";
  EXPECT_GT(cell.q_value, 0.05);
  EXPECT_GT(cell.sessions_to_decide, 0);
  EXPECT_LE(cell.sessions_to_decide, kbench::analysis::kSessionsToDecideLimit);
}

TEST(CompareVerdicts, LooksSplitTheUnchangedVerdictsLevelAsTheyDoTheMarks) {
  // The sides agree; their 95 % CI lies inside +-2 % but the CI at
  // 1 - 0.05/4 does not: "unchanged" with one look, undecided with four
  // (and then a number of sessions, judged at the same level).
  std::vector<SampleRow> rows;
  const std::vector<std::vector<double>> sessions = {{100.0}, {101.5}, {98.5}, {100.75}, {99.25}};
  add_sessions(rows, "base", 1, sessions);
  add_sessions(rows, "test", 10, sessions);
  auto options = default_base_vs_test();
  const auto once = build_comparison(rows, options);
  EXPECT_EQ(once.tables.at(0).rows.at(0).cells.at(0).verdict, Verdict::Unchanged);
  options.looks = 4;
  const auto four = build_comparison(rows, options);
  const auto& cell = four.tables.at(0).rows.at(0).cells.at(0);
  EXPECT_EQ(cell.verdict, Verdict::Undecided);
  EXPECT_GT(cell.sessions_to_decide, 0);
  EXPECT_LE(cell.sessions_to_decide, kbench::analysis::kSessionsToDecideLimit);
}

}  // namespace

namespace {

CompareOptions in_mode(kbench::analysis::SessionMode mode) {
  CompareOptions options = default_base_vs_test();
  options.sessions = mode;
  return options;
}

constexpr kbench::analysis::SessionMode kModes[] = {kbench::analysis::SessionMode::Sessions,
                                                    kbench::analysis::SessionMode::Pooled};

const std::vector<std::vector<double>> kBaseSessions = {{100, 101, 99}, {102, 103, 101}, {99, 100, 98.5}};
const std::vector<std::vector<double>> kTestSessions = {{101, 102, 100}, {104, 105, 103}, {100, 101, 99.5}};

std::vector<std::vector<double>> times(std::vector<std::vector<double>> sessions, double factor) {
  for (auto& session : sessions)
    for (double& v : session) v *= factor;
  return sessions;
}

}  // namespace

TEST(CompareExtremes, ANonFiniteValueIsNotTestedAndTheNoteSaysSo) {
  for (const double bad : {INFINITY, -INFINITY, NAN}) {
    for (const auto mode : kModes) {
      std::vector<SampleRow> rows;
      auto base = kBaseSessions;
      base[1][2] = bad;
      add_sessions(rows, "base", 1, base);
      add_sessions(rows, "test", 10, kTestSessions);
      const auto report = build_comparison(rows, in_mode(mode));
      const auto& cell = report.tables.at(0).rows.at(0).cells.at(0);
      EXPECT_EQ(cell.note, "a value is not finite (NaN or infinite): no change computed") << bad;
      EXPECT_EQ(cell.verdict, Verdict::None);
      EXPECT_EQ(report.legend.rows_tested, 0);
    }
  }
}

// Values near the ends of the double range: a sum of values near 1.7e308
// overflows, squares of values near 1e300 overflow and of values near
// 1e-300 vanish. The same samples times a power of two (exact) must give the
// ordinary samples' change, test and CI, not "base mean is 0", an untested
// row without a note, or a zero-width CI with a mark.
TEST(CompareExtremes, ValuesNearTheEndsOfTheDoubleRangeGiveTheOrdinaryResult) {
  for (const double factor : {0x1p1000, 0x1p-1000, 0x1p1016}) {
    for (const auto mode : kModes) {
      std::vector<SampleRow> ordinary, extreme;
      add_sessions(ordinary, "base", 1, kBaseSessions);
      add_sessions(ordinary, "test", 10, kTestSessions);
      add_sessions(extreme, "base", 1, times(kBaseSessions, factor));
      add_sessions(extreme, "test", 10, times(kTestSessions, factor));
      const auto expected = build_comparison(ordinary, in_mode(mode));
      const auto got = build_comparison(extreme, in_mode(mode));
      const auto& want_row = expected.tables.at(0).rows.at(0);
      const auto& row = got.tables.at(0).rows.at(0);
      const auto& want = want_row.cells.at(0);
      const auto& cell = row.cells.at(0);
      SCOPED_TRACE(::testing::Message() << "factor " << factor << ", " << kbench::analysis::to_string(mode));
      EXPECT_EQ(row.base.mean, want_row.base.mean * factor);
      EXPECT_EQ(row.base.stddev, want_row.base.stddev * factor);
      EXPECT_EQ(cell.note, want.note);
      // On session means the change is a contrast of logs near +-690: a few ulps of those.
      EXPECT_NEAR(cell.change_pct, want.change_pct, 1e-9);
      ASSERT_TRUE(std::isfinite(want.p_value));
      EXPECT_NEAR(cell.p_value, want.p_value, 1e-9 * want.p_value);
      ASSERT_TRUE(cell.change_ci.valid);
      EXPECT_NEAR(cell.change_ci.low, want.change_ci.low, 1e-9);
      EXPECT_NEAR(cell.change_ci.high, want.change_ci.high, 1e-9);
      EXPECT_LT(cell.change_ci.low, cell.change_ci.high);
      EXPECT_EQ(cell.verdict, want.verdict);
      EXPECT_EQ(got.legend.rows_tested, 1);
    }
  }
}

TEST(CompareExtremes, ConstantEqualSidesAreNotATestInEitherSessionMode) {
  for (const auto mode : kModes) {
    std::vector<SampleRow> rows;
    const std::vector<std::vector<double>> constant = {{100, 100, 100}, {100, 100, 100}, {100, 100, 100}};
    add_sessions(rows, "base", 1, constant);
    add_sessions(rows, "test", 10, constant);
    // A second row that does change, so the FDR has one test to count.
    add_sessions(rows, "base", 1, kBaseSessions, "p99");
    add_sessions(rows, "test", 10, times(kBaseSessions, 1.2), "p99");
    const auto report = build_comparison(rows, in_mode(mode));
    SCOPED_TRACE(kbench::analysis::to_string(mode));
    const auto& table = report.tables.at(0);
    const auto& cell = table.rows.at(0).result_class.name == "mean" ? table.rows.at(0).cells.at(0)
                                                                      : table.rows.at(1).cells.at(0);
    EXPECT_NE(cell.note.find("constant and equal"), std::string::npos) << cell.note;
    EXPECT_EQ(cell.verdict, Verdict::None);
    EXPECT_EQ(report.legend.rows_tested, 1);
    EXPECT_EQ(table.columns.at(0).untested, 1);
    EXPECT_EQ(table.columns.at(0).regressions, 1);
  }
}

TEST(CompareExtremes, NoChangeOfALowerIsBetterRowIsNeverANegativeZero) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "syscall/getpid", "mean", "ns", Better::Lower, kBase);
  add(rows, "m", "test", "syscall/getpid", "mean", "ns", Better::Lower, kBase);
  const auto report = build_comparison(rows, base_vs_test());
  const auto& row = report.tables.at(0).rows.at(0);
  const double change = kbench::analysis::signed_change(row, row.cells.at(0), kbench::analysis::SignConvention::Better);
  EXPECT_EQ(change, 0.0);
  EXPECT_FALSE(std::signbit(change));
  std::ostringstream json;
  kbench::report::make_renderer("json")->render(report, json);
  const auto printed = nlohmann::json::parse(json.str())["tables"][0]["rows"][0]["cells"][0]["signed_change_pct"];
  EXPECT_EQ(printed.dump(), "0.0") << json.str();
}
