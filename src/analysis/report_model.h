#pragma once
// The report model: what a comparison computes (src/analysis/ builds it from
// stored samples) and what every renderer of src/report/ reads. It lives here,
// below the renderers, so that the dependency points one way (report ->
// analysis).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/test_method.h"
#include "common/params.h"
#include "common/result_class.h"
#include "stats/stats.h"

namespace kbench::analysis {

// None: not tested (Cell::note says why). Improvement/Regression: the change
// is real (q <= level) and at least --min-change. Unchanged: the CI of the
// change lies inside +-min-change. Undecided: tested, and neither yet.
enum class Verdict { None, Improvement, Regression, Unchanged, Undecided };
enum class SignConvention { Better, Raw };  // Better: positive change = better

// One test profile's side of one row.
struct Cell {
  bool present = false;  // false: the test profile has no data for this row
  stats::Summary test;
  double change_pct = stats::kNaN;  // raw: (mean_test - mean_base) / mean_base * 100
  stats::ChangeInterval change_ci;  // raw, percent
  double p_value = stats::kNaN;
  double q_value = stats::kNaN;  // after multiple-comparison control
  Verdict verdict = Verdict::None;
  std::string note;  // why a row has no mark although it could, e.g. "n<2"
  bool session_noisy = false;
  // The session-level test (docs/statistics.md): sessions per side, and the
  // df borrowed from the SUT's noise model (0: none).
  std::size_t base_sessions = 0;
  std::size_t test_sessions = 0;
  double prior_df = 0;
  // The sides came from different runs: the df of the SUT's run-to-run noise
  // model added to the test (0: the sides share runs, or runs not modelled).
  double run_df = 0;
  // Undecided: more sessions per side that would settle it if the change
  // stayed as it is; > kSessionsToDecideLimit means "more than that".
  int sessions_to_decide = 0;
  // Rows that are not what they seem: footnoted, never marked silently.
  bool heavy_tail = false;  // a side's mean lies above its p99, or is carried by a few extreme repeats
  bool bimodal = false;     // a side's samples fall into two separate groups
  // A class table's cell tested across its machines (one change per
  // machine, docs/statistics.md "Machines"): how many; 0 for any other cell.
  std::size_t machines = 0;
  // Tested on pairs of sessions measured at the same moment (a paired
  // design, docs/statistics.md "Paired designs"): how many; 0 for any other
  // cell, and for a row with too few pairs, tested as without them.
  std::size_t pairs = 0;
};
inline constexpr int kSessionsToDecideLimit = 50;

// One session's (boot's) repeats of one row: what the html report plots so
// that an outlier boot or two modes show.
struct SessionSamples {
  std::string sut;
  int session = 0;  // its number within (sut, swprofile), from 1, as `kbench list` counts them
  std::vector<double> values;
};

struct Row {
  std::string benchmark;
  ResultClass result_class;
  bool base_present = false;
  stats::Summary base;
  std::vector<Cell> cells;  // one per test profile, in Table::test_profiles order
  // The effective parameters the row was measured with: part of its identity
  // (the same benchmark with other parameters is another row). RowNames
  // (report/format.h) says how a report names it.
  Params params{};
  // The samples by session: the base's first, then one entry per test
  // profile (Table::test_profiles order); a side without data has none.
  // Only with analysis::CompareOptions::keep_samples (the html report), so
  // the other formats do not pay for copying every sample.
  std::vector<std::vector<SessionSamples>> samples;
};

// Change in percent as the report prints it, under the legend's convention.
double signed_change(const Row& row, const Cell& cell, SignConvention sign);

// Raw change in percent; NaN when either side is missing.
double raw_change(const Row& row, const Cell& cell);

struct ColumnSummary {
  int improvements = 0;
  int regressions = 0;
  // The geometric mean of the rows' test/base ratios, printed the way the
  // rows print a change (docs/reports.md "Geometric mean"): under --sign
  // better, and raw (positive = larger) for --sign raw and the layouts that
  // always print raw changes (markdown, delta). One row: that row's change.
  double geomean_change_pct = stats::kNaN;
  int geomean_rows = 0;
  int unchanged = 0;   // CI inside +-min-change
  int undecided = 0;
  int untested = 0;    // cells with a base and a test side but no test (note says why)
  double geomean_raw_change_pct = stats::kNaN;  // same rows, raw sense
};

// One kernel function's part of two sides' kernel profiles
// (docs/kernel-profile.md): A is the base (or first) side, B the other.
struct FunctionShift {
  std::string function;  // "name", or "name [module]" for a module's function
  std::uint64_t samples_a = 0;
  std::uint64_t samples_b = 0;
  double share_a = 0;  // of all of A's kernel samples, 0..1
  double share_b = 0;
  double change() const { return share_b - share_a; }
  // Its own time per call, when the same table has kfunc/<function> driven
  // by the profiled benchmark's workload on both sides: the raw change in
  // percent and its verdict.
  struct Timing {
    double change_pct = 0;
    Verdict verdict = Verdict::None;
  };
  std::optional<Timing> timed{};
};

// Where the kernel time of a marked benchmark went: its kernel profiles in
// the base's and a test profile's sessions on the table's machines, summed
// per side. A regression lists the functions that gained the most share
// (the extra time went there), an improvement those that lost the most
// (the time saved came from there).
struct KernelTimeShift {
  std::string benchmark;
  Params params{};
  std::size_t column = 0;  // the test profile: an index into Table::test_profiles
  Verdict verdict = Verdict::Regression;  // Regression or Improvement
  int base_sessions = 0;  // sessions with a profile
  int test_sessions = 0;
  std::uint64_t base_samples = 0;
  std::uint64_t test_samples = 0;
  // At most kKernelTimeShiftFunctions, the largest move first; empty when no
  // function moved that way or a side's profile is unavailable.
  std::vector<FunctionShift> functions{};
  // Non-empty: no side-by-side profile, and why ("patched: perf_event_open
  // refused ...").
  std::string unavailable{};
  // The commands that time the first function (kfunc/<function>) on the
  // base, on the test profile, and compare the two (kfunc_commands); empty
  // when there is none.
  std::vector<std::string> kfunc_commands{};
};
inline constexpr std::size_t kKernelTimeShiftFunctions = 3;

// What a table's `sut` names: one SUT (every table kbench builds from its
// store), or a class of machines pooled together, as in the seed report
// ("Results for SUT Class aws-m7g.metal:"). The heading says which.
enum class SutScope { Sut, SutClass };

struct Table {
  std::string sut;
  std::string base_profile;
  std::vector<std::string> test_profiles;
  std::vector<Row> rows;                // sorted by benchmark, then parameters, then result class
  std::vector<ColumnSummary> columns;   // one per test profile
  // Fingerprint differences between the base and a test profile's sessions
  // that the swprofiles do not declare: "thp: base madvise, patched always".
  std::vector<std::string> environment_differences;
  SutScope sut_scope = SutScope::Sut;
  // The class of the table's machines ("" when their sessions name none; for
  // a per-SUT table of a SUT in several classes, their names joined by ',').
  std::string sut_class;
  // The machines (SUT names) whose samples the table holds: one for a
  // per-SUT table, those of the class for a class table.
  std::vector<std::string> suts;
  // Per marked cell whose benchmark both sides profiled: where the kernel
  // time went. In row order, then column order.
  std::vector<KernelTimeShift> kernel_time;

  // Whether a session on machine `session_sut`, of class `session_class`,
  // is one of the table's: of one of its machines, and of its class when
  // the table is a class's.
  bool holds(const std::string& session_sut, const std::string& session_class) const;
};

struct Legend {
  TestMethod method = TestMethod::Welch;
  std::optional<double> fdr;           // BH q level; nullopt: off
  double alpha = 0.05;                 // per-row level when fdr is off
  SignConvention sign = SignConvention::Better;
  int rows_tested = 0;
  double min_change_pct = 0;
  std::string sessions = "auto";    // --sessions: auto, pooled or means
  int cells_on_session_means = 0;   // cells tested on session means, not on pooled repeats
  double ci_level = 0.95;           // of every change CI printed; per row, not adjusted for the BH level
  int looks = 1;                    // --until-decided: the level of each look is level / looks (Bonferroni)
};

struct Report {
  std::vector<Table> tables;  // one per SUT
  Legend legend;
  // The shell command that reproduces the report ("kbench compare base
  // patched --format html"); "" when not known. The html report shows it.
  std::string command;
  // Failed benchmarks and incomplete sessions, one per line, for the formats
  // that carry them inside the document (html); the others print them below.
  std::vector<std::string> notes;
};

// Single-profile view (kbench run / kbench show).
struct ProfileRow {
  std::string benchmark;
  ResultClass result_class;
  stats::Summary summary;
  Params params{};  // part of the row's identity, as in Row
};
struct ProfileTable {
  std::string sut;
  std::string swprofile;
  std::vector<ProfileRow> rows;
  std::vector<std::string> skipped;  // "benchmark: reason"
  std::vector<std::string> failed;   // "benchmark: reason"
  SutScope sut_scope = SutScope::Sut;
};

}  // namespace kbench::analysis
