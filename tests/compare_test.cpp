#include <gtest/gtest.h>

#include <cmath>

#include "analysis/compare.h"
#include "common/errors.h"

using kbench::Better;
using kbench::analysis::build_comparison;
using kbench::analysis::CompareOptions;
using kbench::analysis::natural_less;
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
  for (const std::string method : {"welch", "mwu", "ci-overlap"}) {
    auto options = base_vs_test();
    options.method = method;
    const auto report = build_comparison(rows, options);
    const auto& cell = report.tables[0].rows[0].cells[0];
    EXPECT_EQ(cell.verdict, Verdict::None) << method;
    EXPECT_FALSE(cell.note.empty()) << method;
    EXPECT_EQ(report.legend.rows_tested, 0) << method;
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
  options.method = "ci-overlap";
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
  EXPECT_NEAR(report.tables[0].columns[0].geomean_change_pct, 100.0, 1e-9);
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
  auto options = base_vs_test();
  options.method = "bayes";
  EXPECT_THROW(build_comparison({}, options), kbench::InputError);
}
