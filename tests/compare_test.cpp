#include <gtest/gtest.h>

#include <cmath>

#include "analysis/compare.h"
#include "analysis/noise.h"
#include "common/errors.h"
#include "report/renderers.h"

using kbench::Better;
using kbench::analysis::build_comparison;
using kbench::analysis::CompareOptions;
using kbench::analysis::natural_less;
using kbench::analysis::TestMethod;
using kbench::report::Verdict;
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

CompareOptions base_vs_test() {
  CompareOptions options;
  options.base = "base";
  options.tests = {"test"};
  return options;
}

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

TEST(Compare, ClearSlowdownOfLowerIsBetterIsARegression) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "syscall/getpid", "mean", "ns", Better::Lower, kBase);
  add(rows, "m", "test", "syscall/getpid", "mean", "ns", Better::Lower, {110.0, 111.0, 109.0, 110.5, 109.5});
  const auto report = build_comparison(rows, base_vs_test());
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& row = report.tables[0].rows.at(0);
  const auto& cell = row.cells.at(0);
  EXPECT_NEAR(cell.change_pct, 10.0, 1e-12);
  EXPECT_NEAR(kbench::report::signed_change(row, cell, kbench::report::SignConvention::Better), -10.0, 1e-12);
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
  EXPECT_EQ(report.tables[0].rows[0].cells[0].verdict, Verdict::None);
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
    marked_corrected += corrected.tables[0].rows[i].cells[0].verdict != Verdict::None;
    marked_uncorrected += uncorrected.tables[0].rows[i].cells[0].p_value <= 0.05;
    EXPECT_EQ(uncorrected.tables[0].rows[i].cells[0].verdict != Verdict::None,
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
  EXPECT_EQ(report.tables[0].rows[1].cells[0].verdict, Verdict::None);        // near
  EXPECT_EQ(report.legend.rows_tested, 2);
}

TEST(Compare, MinChangeLeavesSmallChangesUnmarked) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", "b/x", "mean", "ns", Better::Lower, {100.0, 100.01, 99.99, 100.0, 100.0});
  add(rows, "m", "test", "b/x", "mean", "ns", Better::Lower, {101.0, 101.01, 100.99, 101.0, 101.0});
  auto options = base_vs_test();
  EXPECT_EQ(build_comparison(rows, options).tables[0].rows[0].cells[0].verdict, Verdict::Regression);
  options.min_change_pct = 2.0;
  EXPECT_EQ(build_comparison(rows, options).tables[0].rows[0].cells[0].verdict, Verdict::None);
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
  EXPECT_EQ(kbench::analysis::parse_session_mode("auto"), SessionMode::Auto);
  EXPECT_EQ(kbench::analysis::parse_session_mode("pooled"), SessionMode::Pooled);
  EXPECT_EQ(kbench::analysis::parse_session_mode("means"), SessionMode::Means);
  EXPECT_THROW(kbench::analysis::parse_session_mode("boots"), kbench::InputError);
}

TEST(CompareSessions, StrongSessionEffectPooledMarksSessionAwareDoesNot) {
  const auto rows = strong_session_effect();
  auto pooled = base_vs_test();
  pooled.sessions = SessionMode::Pooled;
  const auto naive = build_comparison(rows, pooled);
  const auto& naive_cell = naive.tables.at(0).rows.at(0).cells.at(0);
  EXPECT_EQ(naive_cell.verdict, Verdict::Regression);  // 15 "independent" repeats a side
  EXPECT_FALSE(naive_cell.session_noisy);
  EXPECT_EQ(naive.legend.cells_on_session_means, 0);
  EXPECT_EQ(naive.legend.sessions, "pooled");

  const auto aware = build_comparison(rows, base_vs_test());  // auto is the default
  const auto& cell = aware.tables.at(0).rows.at(0).cells.at(0);
  EXPECT_TRUE(cell.session_noisy);
  EXPECT_EQ(cell.verdict, Verdict::None);
  EXPECT_EQ(aware.legend.cells_on_session_means, 1);
  EXPECT_EQ(aware.legend.sessions, "auto");
  // The test used 3 session means a side: its p is Welch's on those means.
  const std::vector<double> base_means = {100.0, 103.0, 99.0};
  const std::vector<double> test_means = {104.0, 101.0, 105.0};
  EXPECT_NEAR(cell.p_value, kbench::stats::welch_t_test(base_means, test_means).p_value, 1e-12);
  // The displayed change is still that of the pooled means.
  EXPECT_NEAR(cell.change_pct, (310.0 / 3 - 302.0 / 3) / (302.0 / 3) * 100, 1e-9);
  // And the interval of the change is that of the means: it includes 0%, like the verdict.
  ASSERT_TRUE(cell.change_ci.valid);
  EXPECT_LT(cell.change_ci.low, 0.0);
  EXPECT_GT(cell.change_ci.high, 0.0);
}

TEST(CompareSessions, NoSessionEffectGivesThePooledVerdict) {
  // Same spread inside and between sessions: no session effect, so auto tests
  // the pooled repeats and agrees with --sessions pooled in every number.
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 101.0, 99.0, 100.5, 99.5}, {100.2, 99.2, 100.7, 99.7, 100.9}}, "shift");
  add_sessions(rows, "test", 10, {{103.0, 104.0, 102.0, 103.5, 102.5}, {103.2, 102.2, 103.7, 102.7, 103.9}}, "shift");
  add_sessions(rows, "base", 1, {{100.0, 101.0, 99.0, 100.5, 99.5}, {100.2, 99.2, 100.7, 99.7, 100.9}}, "same");
  add_sessions(rows, "test", 10, {{100.1, 101.1, 99.1, 100.4, 99.4}, {100.3, 99.1, 100.6, 99.8, 100.8}}, "same");
  auto pooled = base_vs_test();
  pooled.sessions = SessionMode::Pooled;
  const auto naive = build_comparison(rows, pooled);
  const auto aware = build_comparison(rows, base_vs_test());
  ASSERT_EQ(aware.tables.at(0).rows.size(), 2u);
  for (std::size_t r = 0; r < 2; ++r) {
    const auto& a = aware.tables[0].rows[r].cells.at(0);
    const auto& n = naive.tables[0].rows[r].cells.at(0);
    EXPECT_FALSE(a.session_noisy) << r;
    EXPECT_EQ(a.verdict, n.verdict) << r;
    EXPECT_DOUBLE_EQ(a.p_value, n.p_value) << r;
    EXPECT_DOUBLE_EQ(a.q_value, n.q_value) << r;
  }
  EXPECT_EQ(aware.tables[0].rows[0].benchmark, "b/x");
  ASSERT_EQ(aware.tables[0].rows[0].result_class.name, "same");
  EXPECT_EQ(aware.tables[0].rows[0].cells[0].verdict, Verdict::None);
  EXPECT_EQ(aware.tables[0].rows[1].cells[0].verdict, Verdict::Regression);  // shift: +3%, lower is better
  EXPECT_EQ(aware.legend.cells_on_session_means, 0);
}

TEST(CompareSessions, OneSessionOnASideStaysPooled) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 100.1, 99.9}, {103.0, 103.1, 102.9}, {99.0, 99.1, 98.9}});
  add_sessions(rows, "test", 10, {{104.0, 104.1, 103.9, 104.05}});
  for (const auto mode : {SessionMode::Auto, SessionMode::Means}) {
    auto options = base_vs_test();
    options.sessions = mode;
    const auto report = build_comparison(rows, options);
    const auto& cell = report.tables[0].rows[0].cells[0];
    EXPECT_FALSE(cell.session_noisy);
    EXPECT_EQ(report.legend.cells_on_session_means, 0);
    std::vector<double> base_values, test_values;
    for (const auto& row : rows) (row.swprofile == "base" ? base_values : test_values).push_back(row.value);
    EXPECT_DOUBLE_EQ(cell.p_value, kbench::stats::welch_t_test(base_values, test_values).p_value);
  }
}

TEST(CompareSessions, MeansModeTestsSessionMeansEvenWithoutASessionEffect) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 101.0, 99.0}, {100.2, 99.2, 100.7}, {99.9, 100.4, 100.1}});
  add_sessions(rows, "test", 10, {{100.1, 101.1, 99.1}, {100.3, 99.1, 100.6}, {100.0, 100.2, 99.8}});
  auto options = base_vs_test();
  options.sessions = SessionMode::Means;
  const auto report = build_comparison(rows, options);
  const auto& cell = report.tables[0].rows[0].cells[0];
  EXPECT_FALSE(cell.session_noisy);  // not noisy, so no session-noisy footnote...
  EXPECT_EQ(report.legend.cells_on_session_means, 1);  // ...but the legend counts it
  const std::vector<double> base_means = {100.0, (100.2 + 99.2 + 100.7) / 3, (99.9 + 100.4 + 100.1) / 3};
  const std::vector<double> test_means = {(100.1 + 101.1 + 99.1) / 3, (100.3 + 99.1 + 100.6) / 3, 100.0};
  EXPECT_NEAR(cell.p_value, kbench::stats::welch_t_test(base_means, test_means).p_value, 1e-9);
}

TEST(CompareSessions, CiOverlapUsesSessionMeansWhenNoisy) {
  const auto rows = strong_session_effect();
  auto options = base_vs_test();
  options.method = TestMethod::CiOverlap;
  options.sessions = SessionMode::Pooled;
  EXPECT_EQ(build_comparison(rows, options).tables[0].rows[0].cells[0].verdict, Verdict::Regression);
  options.sessions = SessionMode::Auto;
  const auto aware = build_comparison(rows, options);
  EXPECT_EQ(aware.tables[0].rows[0].cells[0].verdict, Verdict::None);
  EXPECT_TRUE(aware.tables[0].rows[0].cells[0].session_noisy);
  EXPECT_EQ(aware.legend.rows_tested, 1);
}

TEST(CompareSessions, LegendSaysWhichCellsWereTestedOnSessionMeans) {
  const auto report = build_comparison(strong_session_effect(), base_vs_test());
  const auto lines = kbench::report::legend_lines(report.legend, false);
  bool found = false;
  for (const auto& line : lines) found = found || line.find("1 cell tested on session means") != std::string::npos;
  EXPECT_TRUE(found);
}

// --- noise (the A/A view) -------------------------------------------------------

TEST(Noise, SessionsAreSplitInOrderAndTheFloorUsesAllSamples) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1,
               {{100.0, 101.0, 99.0}, {100.5, 99.5, 100.2}, {99.8, 100.9, 99.1}, {100.3, 99.7, 100.6}});
  kbench::analysis::NoiseOptions options;
  options.profile = "base";
  const auto report = kbench::analysis::build_noise_report(rows, options);
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& table = report.tables[0];
  EXPECT_EQ(table.split, "sessions split in order: #0-#1 (2) against #2-#3 (2)");
  ASSERT_EQ(table.rows.size(), 1u);
  const auto& row = table.rows[0];
  EXPECT_EQ(row.summary.count, 12u);
  EXPECT_EQ(row.sessions, 4u);
  EXPECT_FALSE(row.floor_on_session_means);
  EXPECT_NEAR(row.floor_pct, kbench::stats::noise_floor_percent(12, row.summary.cv), 1e-12);
  EXPECT_EQ(report.floor_rows, 1);
  EXPECT_NEAR(row.floor_alone_pct, row.floor_pct, 1e-12);  // one row: q / 1 = q
  // The A/A cell compares sessions 2-3 with sessions 0-1.
  ASSERT_TRUE(row.aa.present);
  const std::vector<double> first = {100.0, 101.0, 99.0, 100.5, 99.5, 100.2};
  const std::vector<double> second = {99.8, 100.9, 99.1, 100.3, 99.7, 100.6};
  EXPECT_NEAR(row.aa.p_value, kbench::stats::welch_t_test(first, second).p_value, 1e-12);
  EXPECT_EQ(table.aa_marks, 0);
}

TEST(Noise, OneSessionSplitsEvenAndOddRepeats) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 102.0, 98.0, 101.0, 99.0, 100.5}});
  kbench::analysis::NoiseOptions options;
  options.profile = "base";
  const auto report = kbench::analysis::build_noise_report(rows, options);
  const auto& table = report.tables.at(0);
  EXPECT_NE(table.split.find("even repeats against its odd repeats"), std::string::npos);
  const auto& row = table.rows.at(0);
  EXPECT_TRUE(std::isnan(row.between_share));
  const std::vector<double> even = {100.0, 98.0, 99.0};
  const std::vector<double> odd = {102.0, 101.0, 100.5};
  EXPECT_NEAR(row.aa.p_value, kbench::stats::welch_t_test(even, odd).p_value, 1e-12);
}

TEST(Noise, SessionNoisyRowsGetTheFloorOfTheirSessionMeans) {
  std::vector<SampleRow> rows;
  add_sessions(rows, "base", 1, {{100.0, 100.1, 99.9}, {103.0, 103.1, 102.9}, {99.0, 99.1, 98.9}, {102.0, 102.1, 101.9}});
  kbench::analysis::NoiseOptions options;
  options.profile = "base";
  const auto aware = kbench::analysis::build_noise_report(rows, options).tables.at(0).rows.at(0);
  EXPECT_TRUE(aware.floor_on_session_means);
  EXPECT_EQ(aware.floor_count, 4u);
  const std::vector<double> means = {100.0, 103.0, 99.0, 102.0};
  EXPECT_NEAR(aware.floor_pct, kbench::stats::noise_floor_percent(4, kbench::stats::summarize(means).cv), 1e-12);
  EXPECT_GT(aware.between_share, 0.9);
  options.compare.sessions = SessionMode::Pooled;
  const auto pooled = kbench::analysis::build_noise_report(rows, options).tables.at(0).rows.at(0);
  EXPECT_FALSE(pooled.floor_on_session_means);
  EXPECT_EQ(pooled.floor_count, 12u);
  EXPECT_LT(pooled.floor_pct, aware.floor_pct);  // pooling pretends to see smaller changes
}
