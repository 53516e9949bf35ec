// Renderer tests: models built by hand (no store), every format compared byte
// for byte with tests/golden/. KBENCH_UPDATE_GOLDEN=1 rewrites the golden
// files instead of comparing; review the diff by eye before committing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tuple>
#include <sstream>
#include <string>
#include <vector>

#include "common/errors.h"
#include "report/format.h"
#include "report/model.h"
#include "support/report_fixtures.h"
#include "support/test_files.h"
#include "support/test_paths.h"

namespace kbench::report {

using analysis::Cell;
using analysis::ColumnSummary;
using analysis::ProfileTable;
using analysis::Report;
using analysis::Row;
using analysis::SignConvention;
using analysis::signed_change;
using analysis::SutScope;
using analysis::Table;
using analysis::Verdict;

namespace {

using kbench::testing::read_file;
using kbench::testing::expect_golden;

std::string render(const Report& report, const std::string& format) {
  std::ostringstream out;
  make_renderer(format)->render(report, out);
  return out.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

using fixtures::summary_with_mean;

ResultClass result_class(const std::string& name, const std::string& unit, Better better) {
  return ResultClass{name, unit, better};
}

// A cell whose raw change is `raw_pct`; the test mean follows from it.
Cell cell_with_change(double base_mean, double raw_pct, Verdict verdict = Verdict::None) {
  Cell cell;
  cell.present = true;
  cell.test = summary_with_mean(base_mean * (1 + raw_pct / 100));
  cell.change_pct = raw_pct;
  cell.change_ci = {true, raw_pct - 0.5, raw_pct + 0.5};
  cell.p_value = verdict == Verdict::None ? 0.4 : 0.001;
  cell.q_value = verdict == Verdict::None ? 0.6 : 0.004;
  cell.verdict = verdict;
  return cell;
}

// ---------------------------------------------------------------------------
// The seed: rows of the aws-m7g.metal table of
// tests/golden/grid-seed-aws-m7g.txt (the lmbench, micromm,
// mmtests/sysbench-thread, perf/futex, perf/mem and perf/sched groups; the
// sysbench-thread and vmalloc groups hold the widest cells, so the column
// widths equal the seed's). Base means and the printed change (better is
// positive) are the seed's; marks are the seed's.
struct SeedRow {
  const char* benchmark;
  const char* name;
  const char* unit;
  char better;  // 'L' lower is better, 'H' higher
  double base;
  double change;  // as printed: positive = better
  char mark;      // 'I', 'R', 'N'
};
const SeedRow kSeedRows[] = {
    {"lmbench/lat-mem-rd", "size:4MB P:1 stride:128B rnd_read_lat", "ns", 'L', 25.36, -3.89, 'N'},
    {"lmbench/lat-mem-rd", "size:4MB P:1 stride:128B seq_read_lat", "ns", 'L', 3.00, 0.61, 'N'},
    {"lmbench/lat-mem-rd", "size:16MB P:1 stride:128B rnd_read_lat", "ns", 'L', 28.17, -4.00, 'N'},
    {"lmbench/lat-mem-rd", "size:16MB P:1 stride:128B seq_read_lat", "ns", 'L', 2.89, -1.95, 'N'},
    {"lmbench/lat-mem-rd", "size:64MB P:1 stride:128B rnd_read_lat", "ns", 'L', 102.19, 0.29, 'N'},
    {"lmbench/lat-mem-rd", "size:64MB P:1 stride:128B seq_read_lat", "ns", 'L', 5.42, -1.17, 'N'},
    {"lmbench/lat-mem-rd", "size:256MB P:1 stride:128B rnd_read_lat", "ns", 'L', 113.45, -0.66, 'N'},
    {"lmbench/lat-mem-rd", "size:256MB P:1 stride:128B seq_read_lat", "ns", 'L', 5.56, -0.59, 'N'},
    {"micromm/fork", "fork: p:1, d:10", "seconds", 'L', 0.0076, -2.29, 'N'},
    {"micromm/fork", "fork: p:512, d:10", "seconds", 'L', 0.0055, 0.32, 'N'},
    {"micromm/munmap", "munmap: p:1, d:10", "seconds", 'L', 0.061, 40.50, 'I'},
    {"micromm/munmap", "munmap: p:512, d:10", "seconds", 'L', 0.0046, 2.64, 'I'},
    {"micromm/vmalloc", "fix_align_alloc_test: p:1, h:0, l:500000", "usec", 'L', 635669.17, 8.06, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:1, h:0, l:500000", "usec", 'L', 374395.50, 4.24, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:4, h:0, l:500000", "usec", 'L', 454288.83, 7.98, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:16, h:0, l:500000", "usec", 'L', 870184.17, 19.28, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:16, h:1, l:500000", "usec", 'L', 813688.83, 15.82, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:64, h:0, l:100000", "usec", 'L', 500721.33, 28.32, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:64, h:1, l:100000", "usec", 'L', 465855.33, 22.94, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:256, h:0, l:100000", "usec", 'L', 1820499.17, 31.59, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:256, h:1, l:100000", "usec", 'L', 1706893.17, 25.98, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:512, h:0, l:100000", "usec", 'L', 3566528.17, 32.81, 'I'},
    {"micromm/vmalloc", "fix_size_alloc_test: p:512, h:1, l:100000", "usec", 'L', 2626046.67, 36.14, 'I'},
    {"micromm/vmalloc", "full_fit_alloc_test: p:1, h:0, l:500000", "usec", 'L', 558588.00, -0.07, 'N'},
    {"micromm/vmalloc", "kvfree_rcu_1_arg_vmalloc_test: p:1, h:0, l:500000", "usec", 'L', 359429.83, 0.20, 'N'},
    {"micromm/vmalloc", "kvfree_rcu_2_arg_vmalloc_test: p:1, h:0, l:500000", "usec", 'L', 359256.33, 1.15, 'N'},
    {"micromm/vmalloc", "long_busy_list_alloc_test: p:1, h:0, l:500000", "usec", 'L', 4388243.50, 25.27, 'I'},
    {"micromm/vmalloc", "pcpu_alloc_test: p:1, h:0, l:500000", "usec", 'L', 197834.17, 0.40, 'N'},
    {"micromm/vmalloc", "random_size_align_alloc_test: p:1, h:0, l:500000", "usec", 'L', 758328.83, 8.63, 'I'},
    {"micromm/vmalloc", "random_size_alloc_test: p:1, h:0, l:500000", "usec", 'L', 2306188.50, 24.32, 'I'},
    {"micromm/vmalloc", "vm_map_ram_test: p:1, h:0, l:500000", "usec", 'L', 81248.50, 0.80, 'N'},
    {"mmtests/sysbench-thread", "sysbenchthread-1", "usec", 'L', 0.37, 6.16, 'I'},
    {"mmtests/sysbench-thread", "sysbenchthread-4", "usec", 'L', 0.55, 7.19, 'I'},
    {"mmtests/sysbench-thread", "sysbenchthread-7", "usec", 'L', 2.68, -19.77, 'N'},
    {"mmtests/sysbench-thread", "sysbenchthread-12", "usec", 'L', 5.89, 11.27, 'N'},
    {"mmtests/sysbench-thread", "sysbenchthread-21", "usec", 'L', 11.84, -0.66, 'N'},
    {"mmtests/sysbench-thread", "sysbenchthread-30", "usec", 'L', 19.81, 24.87, 'N'},
    {"mmtests/sysbench-thread", "sysbenchthread-48", "usec", 'L', 33.30, 21.51, 'N'},
    {"mmtests/sysbench-thread", "sysbenchthread-79", "usec", 'L', 57.47, -7.01, 'N'},
    {"mmtests/sysbench-thread", "sysbenchthread-110", "usec", 'L', 92.38, -3.64, 'N'},
    {"mmtests/sysbench-thread", "sysbenchthread-128", "usec", 'L', 115.79, 7.20, 'N'},
    {"perf/futex", "hash", "ops/sec", 'H', 2655172.83, 2.83, 'I'},
    {"perf/futex", "lock-pi", "ops/sec", 'H', 281.00, 0.00, 'N'},
    {"perf/futex", "requeue", "ms", 'L', 0.027, 3.30, 'N'},
    {"perf/futex", "wake", "ms", 'L', 0.071, -2.87, 'N'},
    {"perf/futex", "wake-parallel", "ms", 'L', 0.0042, 0.08, 'N'},
    {"perf/mem", "memset -k 1GB -f default -s 16GB", "bytes/sec", 'H', 65213616658.81, -0.28, 'N'},
    {"perf/mem", "mmap -p 1GB -f demand -s 32GB -l 5", "bytes/sec", 'H', 64303069991.32, -0.35, 'N'},
    {"perf/mem", "mmap -p 4KB -f demand -s 32GB -l 5", "bytes/sec", 'H', 49764611027.28, 0.10, 'N'},
    {"perf/sched", "messaging -l 10000", "sec", 'L', 1.32, 0.67, 'N'},
    {"perf/sched", "pipe", "ops/sec", 'H', 543170.30, 7.68, 'N'},
    {"perf/sched", "seccomp-notify", "ops/sec", 'H', 243035.63, -4.65, 'R'},
};

Report seed_report() {
  Table table;
  table.sut = "aws-m7g.metal";
  table.sut_scope = SutScope::SutClass;  // the seed pools a class of machines
  table.base_profile = "arm64-core-no-mark21-20260929-m7g";
  table.test_profiles = {"arm64-core-mark21-20260929-m7g"};
  ColumnSummary column;
  double log_sum = 0;
  double log_raw_sum = 0;
  for (const SeedRow& seed : kSeedRows) {
    Row row;
    row.benchmark = seed.benchmark;
    row.result_class = result_class(seed.name, seed.unit, seed.better == 'L' ? Better::Lower : Better::Higher);
    row.base_present = true;
    row.base = summary_with_mean(seed.base);
    const double raw = seed.better == 'L' ? -seed.change : seed.change;
    const Verdict verdict =
        seed.mark == 'I' ? Verdict::Improvement : seed.mark == 'R' ? Verdict::Regression : Verdict::None;
    row.cells.push_back(cell_with_change(seed.base, raw, verdict));
    column.improvements += verdict == Verdict::Improvement;
    column.regressions += verdict == Verdict::Regression;
    log_sum += std::log1p(seed.change / 100);
    log_raw_sum += std::log1p(raw / 100);
    ++column.geomean_rows;
    table.rows.push_back(row);
  }
  column.geomean_change_pct = std::expm1(log_sum / column.geomean_rows) * 100;
  column.geomean_raw_change_pct = std::expm1(log_raw_sum / column.geomean_rows) * 100;
  table.columns.push_back(column);
  Report report;
  report.tables.push_back(table);
  report.legend.method = kbench::analysis::TestMethod::Welch;
  report.legend.fdr = 0.05;
  report.legend.rows_tested = column.geomean_rows;
  return report;
}

// A small model with two test columns and every irregular case: a test
// profile without data, a base without data, a note, a session-noisy row, a
// long result class, tiny and huge values.
Report two_column_report() {
  Table table;
  table.sut = "qemu-x86_64";
  table.base_profile = "v6.19-rc1";
  table.test_profiles = {"inline-el0-svc", "inline-el0-svc-lto"};
  auto add = [&](const std::string& benchmark, ResultClass rc, bool base_present, double base,
                 std::vector<Cell> cells) {
    Row row;
    row.benchmark = benchmark;
    row.result_class = std::move(rc);
    row.base_present = base_present;
    if (base_present) row.base = summary_with_mean(base);
    row.cells = std::move(cells);
    table.rows.push_back(row);
  };
  Cell absent;
  Cell few = cell_with_change(145.83, 0.8);
  few.note = "n<2: too few samples for welch";
  few.test.count = 1;
  few.p_value = few.q_value = stats::kNaN;
  Cell noisy = cell_with_change(359256.33, 6.2, Verdict::Regression);
  noisy.session_noisy = true;
  Cell untested_base = cell_with_change(1, 0);
  untested_base.test = summary_with_mean(150);
  untested_base.change_pct = stats::kNaN;
  add("perf/futex", result_class("wake-parallel", "ms", Better::Lower), true, 0.0042,
      {cell_with_change(0.0042, -2.5), cell_with_change(0.0042, 3.75)});
  add("perf/mem", result_class("memset -k 1GB -f default -s 16GB", "bytes/sec", Better::Higher), true,
      65213616658.81, {cell_with_change(65213616658.81, -0.28), cell_with_change(65213616658.81, 0.004)});
  add("perf/syscall", result_class("basic", "ops/sec", Better::Higher), true, 4554260,
      {cell_with_change(4554260, 1.0971, Verdict::Improvement), cell_with_change(4554260, -1.19)});
  add("perf/syscall", result_class("fork", "ops/sec", Better::Higher), true, 2393.27,
      {absent, cell_with_change(2393.27, -3.9, Verdict::Regression)});
  add("syscall/getpid", result_class("mean", "ns", Better::Lower), true, 145.83,
      {cell_with_change(145.83, -1.25, Verdict::Improvement), few});
  add("syscall/getpid", result_class("p99", "ns", Better::Lower), false, 0, {untested_base, untested_base});
  add("micromm/vmalloc", result_class("kvfree_rcu_2_arg_vmalloc_test: p:1, h:0, l:500000", "usec", Better::Lower),
      true, 359256.33, {noisy, cell_with_change(359256.33, -0.0004)});
  table.columns = {ColumnSummary{1, 1, 0.54, 5}, ColumnSummary{0, 1, -0.31, 5}};
  table.columns[0].geomean_raw_change_pct = 1.06;  // raw: the rows that went up outweigh those that went down
  table.columns[1].geomean_raw_change_pct = 0.37;
  Report report;
  report.tables.push_back(table);
  report.legend.method = kbench::analysis::TestMethod::Welch;
  report.legend.fdr = 0.05;
  report.legend.rows_tested = 11;
  return report;
}

Report one_column_report() {
  Report report = two_column_report();
  Table& table = report.tables[0];
  table.test_profiles.resize(1);
  table.columns.resize(1);
  for (Row& row : table.rows) row.cells.resize(1);
  return report;
}

// ---------------------------------------------------------------------------
// Number formatting

TEST(ReportFormat, NumbersFollowTheSeedPrecision) {
  // Values as the seed prints them.
  EXPECT_EQ(format_number(25.36), "25.36");
  EXPECT_EQ(format_number(3.0), "3.00");
  EXPECT_EQ(format_number(635669.1666), "635669.17");
  EXPECT_EQ(format_number(65213616658.81), "65213616658.81");
  EXPECT_EQ(format_number(999999999999999.9), "999999999999999.88");
  EXPECT_EQ(format_number(1.697e308), "1.697e+308");
  EXPECT_EQ(format_number(-1.1e300), "-1.100e+300");
  EXPECT_EQ(format_number(0.0076), "0.0076");
  EXPECT_EQ(format_number(0.061), "0.061");
  EXPECT_EQ(format_number(0.15), "0.15");
  EXPECT_EQ(format_number(0.0042), "0.0042");
  EXPECT_EQ(format_number(0.027), "0.027");
  EXPECT_EQ(format_number(0.99), "0.99");
  EXPECT_EQ(format_number(0.0), "0.00");
  EXPECT_EQ(format_number(-0.0), "0.00");
}

TEST(ReportFormat, SmallNumbersKeepTwoSignificantDigits) {
  EXPECT_EQ(format_number(0.00763), "0.0076");
  EXPECT_EQ(format_number(0.5), "0.50");
  EXPECT_EQ(format_number(-0.0076), "-0.0076");
  EXPECT_EQ(format_number(-25.364), "-25.36");
  // Rounding that carries into the next decade keeps two significant digits.
  EXPECT_EQ(format_number(0.00999), "0.010");
  EXPECT_EQ(format_number(0.0999), "0.10");
  EXPECT_EQ(format_number(0.996), "1.00");
  EXPECT_EQ(format_number(1.2e-7), "1.2e-07");
  EXPECT_EQ(format_number(stats::kNaN), "");
  EXPECT_EQ(format_number(INFINITY), "inf");
}

TEST(ReportFormat, PercentsAndMarks) {
  EXPECT_EQ(format_percent(-3.89), "-3.89%");
  EXPECT_EQ(format_percent(0.0), "0.00%");
  EXPECT_EQ(format_percent(-0.001), "0.00%");
  EXPECT_EQ(format_percent(40.5), "40.50%");
  EXPECT_EQ(format_percent(-11.05, 1), "-11.1%");  // fmt rounds the exact binary value: -11.050000000000000711
  EXPECT_EQ(format_percent(stats::kNaN), "");
  EXPECT_EQ(std::string(mark_prefix(Verdict::Improvement)) + format_percent(40.5), "(I) 40.50%");
  EXPECT_EQ(std::string(mark_prefix(Verdict::Regression)) + format_percent(-4.65), "(R) -4.65%");
  EXPECT_EQ(mark_prefix(Verdict::None), "");
  EXPECT_EQ(count_noun(1, "regression", "regressions"), "1 regression");
  EXPECT_EQ(count_noun(0, "regression", "regressions"), "0 regressions");
  EXPECT_EQ(display_width("↑1.1%"), 5u);
}

TEST(ReportModel, SignedChangeFlipsLowerIsBetter) {
  Row row;
  row.base_present = true;
  row.result_class = result_class("mean", "ns", Better::Lower);
  Cell cell = cell_with_change(100, -4);
  EXPECT_DOUBLE_EQ(signed_change(row, cell, SignConvention::Better), 4);
  EXPECT_DOUBLE_EQ(signed_change(row, cell, SignConvention::Raw), -4);
  row.result_class.better = Better::Higher;
  EXPECT_DOUBLE_EQ(signed_change(row, cell, SignConvention::Better), -4);
  cell.present = false;
  EXPECT_TRUE(std::isnan(signed_change(row, cell, SignConvention::Better)));
}

// ---------------------------------------------------------------------------
// grid

TEST(ReportGrid, ReproducesTheSeedTableByteForByte) {
  const std::string rendered = render(seed_report(), "grid");
  // The fragment file holds lines copied verbatim from the seed (sed -n
  // '57,95p;179,203p' of report-preemptible-this-cpu.txt): heading, header and
  // the groups above. kbench adds a geomean group, the legend and the summary
  // after them, so the seed lines are a prefix of kbench's output.
  const std::string seed = read_file(std::string(KBENCH_GOLDEN_DIR) + "/grid-seed-aws-m7g-fragment.txt");
  ASSERT_GE(rendered.size(), seed.size());
  EXPECT_EQ(rendered.substr(0, seed.size()), seed);
  expect_golden("grid-seed-aws-m7g.txt", rendered);
}

TEST(ReportGrid, SummaryCountsLikeTheSeed) {
  const std::vector<std::string> lines = split_lines(render(seed_report(), "grid"));
  const std::vector<std::string> tail(lines.end() - 3, lines.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"aws-m7g.metal:", "19 improvements", "1 regression"}));
}

TEST(ReportGrid, TwoColumnsEmptyCellsAndNotes) {
  const std::string rendered = render(two_column_report(), "grid");
  expect_golden("grid-two-columns.txt", rendered);
  // The row without base data has an empty base cell and empty change cells.
  bool found = false;
  for (const std::string& line : split_lines(rendered)) {
    if (line.find("| p99 (ns)") == std::string::npos) continue;
    found = true;
    EXPECT_EQ(line.find_first_not_of("| ", line.find("(ns)") + 4), std::string::npos) << line;
  }
  EXPECT_TRUE(found);
  EXPECT_NE(rendered.find("[1] n<2: too few samples for welch"), std::string::npos);
  EXPECT_NE(rendered.find("inline-el0-svc: 1 improvement, 1 regression"), std::string::npos);
}

TEST(ReportGrid, RawSignConventionIsStated) {
  Report report = seed_report();
  report.legend.sign = SignConvention::Raw;
  report.legend.fdr.reset();
  const std::string rendered = render(report, "grid");
  EXPECT_NE(rendered.find("raw: positive = larger value"), std::string::npos);
  EXPECT_NE(rendered.find("FDR off, alpha=0.05"), std::string::npos);
  // lmbench rnd_read_lat (ns) is -3.89% better-is-positive: +3.89% raw.
  EXPECT_NE(rendered.find("|                            3.89% |"), std::string::npos);
}

TEST(ReportGrid, LegendVariants) {
  Report report = two_column_report();
  report.legend.method = kbench::analysis::TestMethod::CiOverlap;
  report.legend.min_change_pct = 2;
  std::string rendered = render(report, "grid");
  EXPECT_NE(rendered.find("Method: disjoint 95% confidence intervals of the means (ci-overlap), 11 rows compared."),
            std::string::npos);
  // Its cells carry no three-valued verdict: a blank is "not significant".
  EXPECT_NE(rendered.find("No mark: no significant change of at least 2.00%."), std::string::npos);
  report.legend.method = kbench::analysis::TestMethod::MannWhitney;
  report.legend.fdr = 0.1;
  rendered = render(report, "grid");
  EXPECT_NE(rendered.find("Method: Mann-Whitney U test, Benjamini-Hochberg FDR q=0.1 over 11 rows tested."),
            std::string::npos);
}

TEST(ReportGrid, NoteShowsWithoutAChange) {
  // A zero base has no relative change; the reason must still show, in every text format.
  Report report = one_column_report();
  Row& row = report.tables[0].rows[0];
  row.base.mean = 0;
  row.cells[0].change_pct = stats::kNaN;
  row.cells[0].note = "base mean is 0: no relative change";
  for (const std::string format : {"grid", "markdown", "delta", "mail"}) {
    const std::string rendered = render(report, format);
    EXPECT_NE(rendered.find(" [1]"), std::string::npos) << format << "\n" << rendered;
    EXPECT_NE(rendered.find("[1] base mean is 0: no relative change"), std::string::npos) << format;
  }
}

TEST(ReportGrid, OneTablePerSut) {
  Report report = seed_report();
  report.tables.push_back(two_column_report().tables[0]);
  const std::string rendered = render(report, "grid");
  const std::size_t first = rendered.find("Results for SUT Class aws-m7g.metal:\n");
  const std::size_t second = rendered.find("\n\nResults for SUT qemu-x86_64:\n");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
  // Each table has its own legend and summary.
  EXPECT_LT(rendered.find("aws-m7g.metal:\n19 improvements\n1 regression\n"), second);
  EXPECT_NE(rendered.find("qemu-x86_64:\ninline-el0-svc: 1 improvement, 1 regression\n", second), std::string::npos);
  // Column widths are per table: the second table is not padded to the first's.
  EXPECT_NE(rendered.find("| Benchmark       | Result Class ", second), std::string::npos);
}

// ---------------------------------------------------------------------------
// markdown, delta

TEST(ReportMarkdown, OneAndTwoColumns) {
  const std::string one = render(one_column_report(), "markdown");
  expect_golden("markdown-one-column.txt", one);
  EXPECT_NE(one.find("| Metric "), std::string::npos);
  EXPECT_NE(one.find("| ↑1.1% (I) "), std::string::npos);  // raw change, arrow = direction of the value
  EXPECT_NE(one.find("| ↓1.2% (I) "), std::string::npos);  // lower ns is better: down arrow, improvement (1.25 rounds to even)
  expect_golden("markdown-two-columns.txt", render(two_column_report(), "markdown"));
}

TEST(ReportMarkdown, PipesInNamesAreEscaped) {
  Report report = one_column_report();
  report.tables[0].rows[0].result_class.name = "read|write";
  EXPECT_NE(render(report, "markdown").find("| perf/futex read\\|write (ms) "), std::string::npos);
  EXPECT_NE(render(report, "delta").find("| perf/futex read\\|write (ms) "), std::string::npos);
}

TEST(ReportDelta, SeedCellsAndLayout) {
  // The seed's rows: 24.78 -> 13.70 is "11.08 (-44.7%)", 2.00 -> 1.68 "0.32 (-16.0%)".
  Report report;
  Table table;
  table.sut = "x86";
  table.base_profile = "old-kernel";
  table.test_profiles = {"new-kernel"};
  for (auto [name, old_value, new_value] : {std::tuple{"gcc+spectre_v2", 24.78, 13.70}, {"rpi3-gcc", 2.00, 1.68}}) {
    Row row;
    row.benchmark = "sched/finish_task_switch";
    row.result_class = result_class(name, "tsc", Better::Lower);
    row.base_present = true;
    row.base = summary_with_mean(old_value);
    Cell cell = cell_with_change(old_value, (new_value / old_value - 1) * 100);
    cell.test.mean = new_value;
    row.cells.push_back(cell);
    table.rows.push_back(row);
  }
  table.columns.push_back({});
  report.tables.push_back(table);
  report.legend.method = kbench::analysis::TestMethod::Welch;
  const std::string rendered = render(report, "delta");
  EXPECT_NE(rendered.find("| 24.78 | 13.70 | 11.08 (-44.7%) |"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("| 2.00  | 1.68  | 0.32 (-16.0%)  |"), std::string::npos) << rendered;
  expect_golden("delta-one-column.txt", render(one_column_report(), "delta"));
  expect_golden("delta-two-columns.txt", render(two_column_report(), "delta"));
}

// ---------------------------------------------------------------------------
// mail

void expect_fits_80_columns(const std::string& text) {
  for (const std::string& line : split_lines(text)) EXPECT_LE(display_width(line), 80u) << "'" << line << "'";
}

// Every word of `label` appears in `text`: wrapping may move words, never drop them.
void expect_not_truncated(const std::string& text, const std::string& label) {
  std::istringstream words(label);
  for (std::string word; words >> word;) EXPECT_NE(text.find(word), std::string::npos) << word;
}

TEST(ReportMail, SeedSizedTableFits80Columns) {
  const Report report = seed_report();
  const std::string rendered = render(report, "mail");
  expect_golden("mail-seed-aws-m7g.txt", rendered);
  expect_fits_80_columns(rendered);
  for (const Row& row : report.tables[0].rows) expect_not_truncated(rendered, row.result_class.label());
  EXPECT_NE(rendered.find("A: arm64-core-mark21-20260929-m7g"), std::string::npos);
}

TEST(ReportMail, ManyColumnsAndLongNamesStillFit) {
  Report report = two_column_report();
  Table& table = report.tables[0];
  const std::string long_name =
      "kvfree_rcu_2_arg_vmalloc_test_with_an_unreasonably_long_identifier_that_has_no_spaces_at_all_anywhere";
  table.rows[0].result_class.name = long_name;
  table.test_profiles = {"a", "b", "c", "d", "e", "f"};
  table.columns.resize(6);
  for (Row& row : table.rows)
    while (row.cells.size() < 6) row.cells.push_back(row.cells.back());
  const std::string rendered = render(report, "mail");
  expect_golden("mail-six-columns.txt", rendered);
  expect_fits_80_columns(rendered);
  for (const std::string& line : split_lines(rendered)) EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing space: " << line;
  // The long name is split across lines, so glue the lines back and look for it.
  std::string glued;
  for (const std::string& line : split_lines(rendered)) {
    const std::size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos) glued += line.substr(start, line.find("  ", start) - start);
  }
  EXPECT_NE(glued.find(long_name), std::string::npos);
  EXPECT_NE(rendered.find("F: f"), std::string::npos);
}

// ---------------------------------------------------------------------------
// csv, json

// RFC 4180 reader for the test: quoted fields, doubled quotes, commas inside.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += text[++i];
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      records.back().push_back(field);
      field.clear();
      records.emplace_back();
    } else {
      field += c;
    }
  }
  if (records.back().empty()) records.pop_back();
  return records;
}

TEST(ReportCsv, GoldenAndUnroundedNumbers) {
  const std::string rendered = render(two_column_report(), "csv");
  expect_golden("csv-two-columns.csv", rendered);
  const auto records = parse_csv(rendered);
  ASSERT_EQ(records.size(), 1 + 7 * 2u);
  for (const auto& record : records) EXPECT_EQ(record.size(), records[0].size());
  EXPECT_EQ(records[0][8], "base_mean");
  EXPECT_EQ(std::stod(records[1][8]), 0.0042);
  // 4554260 * 1.010971 is not a short decimal: it must come back bit for bit.
  const double expected_test_mean = 4554260 * (1 + 1.0971 / 100);
  EXPECT_EQ(records[5][17], fmt::format("{}", expected_test_mean));
  EXPECT_EQ(std::stod(records[5][17]), expected_test_mean);
}

TEST(ReportCsv, QuotesNamesWithCommasAndQuotes) {
  Report report = one_column_report();
  report.tables[0].rows[0].benchmark = "stress-ng/\"fork\", vfork";
  report.tables[0].rows[0].result_class.name = "fork: p:1, d:10";
  report.tables[0].rows[0].cells[0].note = "line one\nline two";
  const std::string rendered = render(report, "csv");
  EXPECT_NE(rendered.find("\"stress-ng/\"\"fork\"\", vfork\",\"fork: p:1, d:10\""), std::string::npos);
  const auto records = parse_csv(rendered);
  ASSERT_EQ(records.size(), 8u);
  EXPECT_EQ(records[1][3], "stress-ng/\"fork\", vfork");
  EXPECT_EQ(records[1][4], "fork: p:1, d:10");
  const auto note = std::find(records[0].begin(), records[0].end(), "note") - records[0].begin();
  EXPECT_EQ(records[1][note], "line one\nline two");
}

TEST(ReportJson, ParsesBackUnrounded) {
  Report report = one_column_report();
  Row& row = report.tables[0].rows[0];
  row.base.mean = 1.0 / 3.0;
  row.base.stddev = 0.1 + 0.2;
  row.cells[0].p_value = 1e-300;
  row.cells[0].change_ci = {true, -2.0 / 7.0, 5.0 / 7.0};
  const std::string rendered = render(report, "json");
  const nlohmann::json doc = nlohmann::json::parse(rendered);
  const auto& parsed = doc["tables"][0]["rows"][0];
  EXPECT_EQ(parsed["base"]["mean"].get<double>(), 1.0 / 3.0);
  EXPECT_EQ(parsed["base"]["stddev"].get<double>(), 0.1 + 0.2);
  EXPECT_EQ(parsed["base"]["n"].get<int>(), 6);
  EXPECT_EQ(parsed["cells"][0]["p_value"].get<double>(), 1e-300);
  EXPECT_EQ(parsed["cells"][0]["change_ci95_pct"]["low"].get<double>(), -2.0 / 7.0);
  EXPECT_EQ(parsed["cells"][0]["verdict"], "none");
  EXPECT_EQ(doc["tables"][0]["rows"][2]["cells"][0]["verdict"], "improvement");
  EXPECT_EQ(parsed["result_class"]["better"], "lower");
  // Missing data is null, never a made-up number.
  const auto& no_base = doc["tables"][0]["rows"][5];
  EXPECT_TRUE(no_base["base"].is_null());
  EXPECT_TRUE(no_base["cells"][0]["change_pct"].is_null());
  EXPECT_EQ(doc["legend"]["fdr"].get<double>(), 0.05);
  expect_golden("json-two-columns.json", render(two_column_report(), "json"));
}

// ---------------------------------------------------------------------------
// single profile

TEST(ReportProfileGrid, TableSkippedAndFailed) {
  ProfileTable table;
  table.sut = "qemu-x86_64";
  table.swprofile = "v6.19-rc1";
  stats::Summary one = summary_with_mean(146.67, 1);
  one.stddev = one.cv = one.ci95_low = one.ci95_high = stats::kNaN;  // n = 1: no spread, no CI
  table.rows = {{"syscall/getpid", result_class("mean", "ns", Better::Lower), summary_with_mean(145.83, 10)},
                {"syscall/getpid", result_class("p99", "ns", Better::Lower), summary_with_mean(160, 10)},
                {"syscall/getppid", result_class("mean", "ns", Better::Lower), one},
                {"perf/syscall", result_class("basic", "ops/sec", Better::Higher), summary_with_mean(7377677.9, 5)}};
  table.skipped = {"perf/sched: perf not installed"};
  table.failed = {"syscall/invalid: agent exited with status 139"};
  std::ostringstream out;
  render_profile_grid(table, out);
  expect_golden("profile-grid.txt", out.str());
  EXPECT_NE(out.str().find("| 1.00% |      10 |"), std::string::npos);
  EXPECT_NE(out.str().find("skipped: perf/sched: perf not installed\n"), std::string::npos);
  EXPECT_NE(out.str().find("failed: syscall/invalid: agent exited with status 139\n"), std::string::npos);
}

}  // namespace
}  // namespace kbench::report
