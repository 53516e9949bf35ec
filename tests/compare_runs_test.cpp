// Runs in compare (docs/statistics.md, "Runs"): sides measured by separate
// runs are tested against the SUT's run-to-run noise; without it they are not
// tested; sides that share runs are not charged for it. And where runs and
// kernels come from: analysis/runs.h, and the agent's seccomp state.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "analysis/runs.h"
#include "sysinfo/fingerprint.h"

namespace {

using kbench::Better;
using kbench::analysis::build_comparison;
using kbench::analysis::CompareOptions;
using kbench::analysis::SessionOrigins;
using kbench::analysis::Verdict;
using kbench::store::SampleRow;

struct Store {
  std::vector<SampleRow> rows;
  SessionOrigins origins;
  std::int64_t next_session = 1;

  // One session of `profile`: three repeats around `mean`.
  void session(const std::string& profile, const std::string& run, const std::string& kernel, double mean,
               const std::string& benchmark = "syscall/getpid", const std::string& round = "") {
    const std::int64_t id = next_session++;
    origins[id] = {run, kernel, round, {}, {}};
    int repeat = 0;
    for (const double wobble : {-0.002, 0.0, 0.002}) {
      SampleRow row;
      row.sut = "vm";
      row.swprofile = profile;
      row.session = id;
      row.benchmark = benchmark;
      row.result_class = {"mean", "ns", Better::Lower};
      row.repeat = repeat++;
      row.value = mean * (1 + wobble);
      rows.push_back(row);
    }
  }
  // A run of `profile`: sessions at these means.
  void run(const std::string& profile, const std::string& run, const std::string& kernel,
           const std::vector<double>& means, const std::string& benchmark = "syscall/getpid") {
    for (const double m : means) session(profile, run, kernel, m, benchmark);
  }
};

CompareOptions a_vs_b() {
  CompareOptions options;
  options.base = "A";
  options.tests = {"B"};
  return options;
}

const kbench::analysis::Cell& only_cell(const kbench::analysis::Report& report) {
  return report.tables.at(0).rows.at(0).cells.at(0);
}

// Sessions of one run agree to 0.5 %; a 6 % change between two runs.
Store two_runs() {
  Store store;
  store.run("A", "run-a", "kernel-a", {100.0, 100.4, 99.7, 100.2, 99.9});
  store.run("B", "run-b", "kernel-b", {106.0, 106.3, 105.8, 106.1, 105.9});
  return store;
}

TEST(CompareRuns, SidesFromDifferentRunsWithoutRunNoiseAreNotTested) {
  Store store = two_runs();
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  const auto& cell = only_cell(report);
  EXPECT_EQ(cell.verdict, Verdict::None);
  EXPECT_NE(cell.note.find("different runs"), std::string::npos) << cell.note;
  EXPECT_NE(cell.note.find("kbench calibrate"), std::string::npos) << cell.note;
  EXPECT_EQ(report.tables[0].columns.at(0).untested, 1);
  // Without origins (runs not modelled) the same sessions are marked: the
  // session test alone sees only the 0.5 % wobble inside each run.
  const auto alone = build_comparison(store.rows, a_vs_b());
  EXPECT_EQ(only_cell(alone).verdict, Verdict::Regression);
}

// Another kernel, C, measured in three runs at these levels (three sessions
// each, within 0.2 % of the level): the SUT's run noise.
void kernel_c_in_runs(Store& store, const std::vector<double>& levels) {
  int run = 0;
  for (const double level : levels) {
    store.run("C", "run-c" + std::to_string(++run), "kernel-c", {level, level * 1.002, level * 0.998});
  }
}

TEST(CompareRuns, RunsThatDifferByTenPercentOutweighASixPercentChange) {
  Store store = two_runs();
  kernel_c_in_runs(store, {200.0, 220.0, 181.0});
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  const auto& cell = only_cell(report);
  EXPECT_EQ(cell.run_df, 2);
  EXPECT_EQ(cell.verdict, Verdict::Undecided);
  EXPECT_GT(cell.sessions_to_decide, kbench::analysis::kSessionsToDecideLimit)
      << "more sessions in the same two runs cannot decide it";
}

TEST(CompareRuns, RunsThatAgreeLetASixPercentChangeBeMarked) {
  Store store = two_runs();
  kernel_c_in_runs(store, {200.0, 200.6, 199.5});
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  const auto& cell = only_cell(report);
  EXPECT_EQ(cell.run_df, 2);
  EXPECT_EQ(cell.verdict, Verdict::Regression) << cell.note;
}

// One plan exec of A and B, 6 rounds: each round's two sessions share the
// machine's speed of the moment, which moves by up to 8 % between rounds;
// inside a round B is `change` slower, give or take 0.3 %.
Store plan_rounds(double change) {
  Store store;
  const double speed[] = {100.0, 106.0, 97.0, 104.0, 99.0, 108.0};
  const double wobble[] = {0.002, -0.003, 0.001, 0.003, -0.002, -0.001};
  for (int round = 0; round < 6; ++round) {
    const std::string number = std::to_string(round);
    store.session("A", "plan-run", "kernel-a", speed[round] * (1 + wobble[round]), "syscall/getpid", number);
    store.session("B", "plan-run", "kernel-b", speed[round] * (1 + change) * (1 - wobble[round]), "syscall/getpid",
                  number);
  }
  return store;
}

TEST(CompareRuns, RoundsOfAPlanCancelTheMachinesFastDrift) {
  Store store = plan_rounds(0.04);
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  const auto& cell = only_cell(report);
  EXPECT_EQ(cell.verdict, Verdict::Regression) << cell.note;
  EXPECT_NEAR(cell.change_pct, 4.0, 0.3);
  EXPECT_LT(cell.change_ci.high - cell.change_ci.low, 2.0);
  // The same sessions with their rounds unknown: the drift between rounds is
  // noise, and a 4 % change stays undecided.
  for (auto& [session, origin] : store.origins) origin.round.clear();
  const auto flat = build_comparison(store.rows, a_vs_b(), store.origins);
  EXPECT_EQ(only_cell(flat).verdict, Verdict::Undecided) << only_cell(flat).note;
}

TEST(CompareRuns, RoundsOfAnAAPlanMarkNothing) {
  // The same kernel on both sides: the rounds' drift must not become a mark.
  Store store = plan_rounds(0.0);
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  const auto& cell = only_cell(report);
  EXPECT_NE(cell.verdict, Verdict::Regression) << cell.note;
  EXPECT_NE(cell.verdict, Verdict::Improvement) << cell.note;
  EXPECT_LT(cell.change_ci.high - cell.change_ci.low, 2.0);
}

TEST(CompareRuns, RankTestsAcrossRunsAreRefusedWithAReason) {
  Store store = two_runs();
  kernel_c_in_runs(store, {200.0, 200.6});
  for (const auto method : {kbench::analysis::TestMethod::MannWhitney, kbench::analysis::TestMethod::CiOverlap}) {
    CompareOptions options = a_vs_b();
    options.method = method;
    // The report must outlive the reference into it.
    const auto report = build_comparison(store.rows, options, store.origins);
    const auto& cell = only_cell(report);
    EXPECT_EQ(cell.verdict, Verdict::None);
    EXPECT_NE(cell.note.find("cannot carry the run-to-run noise"), std::string::npos) << cell.note;
  }
}

TEST(CompareRuns, OneProfileInOneRunIsOneRunAndOtherKernelsDoNotPool) {
  Store store = two_runs();
  // Two profiles of one kernel in one run are one run, not two; a kernel in
  // one run teaches nothing about runs.
  store.run("C", "run-c", "kernel-c", {200.0, 230.0});
  store.run("D", "run-c", "kernel-c", {170.0, 190.0});
  store.run("E", "run-e", "kernel-e", {50.0, 60.0});
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  EXPECT_EQ(only_cell(report).verdict, Verdict::None);
}

TEST(CompareRuns, ABaseMeasuredInTwoRunsTeachesItsOwnComparison) {
  Store store;
  // The base measured twice, 20 % apart: its own runs give the run noise
  // (df 1), and a 10 % change against it is not marked.
  store.run("A", "run-a1", "kernel-a", {100.0, 100.2});
  store.run("A", "run-a2", "kernel-a", {120.0, 120.2});
  store.run("B", "run-b", "kernel-b", {121.0, 121.1});
  auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  EXPECT_EQ(only_cell(report).run_df, 1);
  EXPECT_EQ(only_cell(report).verdict, Verdict::Undecided);
  // A compared profile is never pooled with another profile of its kernel:
  // B's run would then count as a run of A's kernel.
  Store same_kernel;
  same_kernel.run("A", "run-a1", "kernel-x", {100.0, 100.2});
  same_kernel.run("B", "run-b", "kernel-x", {121.0, 121.1});
  report = build_comparison(same_kernel.rows, a_vs_b(), same_kernel.origins);
  EXPECT_EQ(only_cell(report).verdict, Verdict::None) << "no profile was measured in 2 runs";
}

TEST(CompareRuns, SidesInterleavedInOneRunShareItsDrift) {
  Store store;
  // plan exec alternates A and B in one run: no run term, and no run noise
  // needed.
  for (int i = 0; i < 5; ++i) {
    store.session("A", "run-1", "kernel-a", 100.0 + 0.1 * i);
    store.session("B", "run-1", "kernel-b", 106.0 + 0.1 * i);
  }
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  const auto& cell = only_cell(report);
  EXPECT_EQ(cell.run_df, 0);
  EXPECT_EQ(cell.verdict, Verdict::Regression) << cell.note;
}

TEST(SessionOrigins, PausedSessionsAreRunsOfTheirOwn) {
  nlohmann::json fingerprint = {{"plan", {{"run", "2026-12-01T01:35:40Z-31368"}}}};
  EXPECT_EQ(kbench::analysis::run_of(7, fingerprint), "2026-12-01T01:35:40Z-31368");
  fingerprint["plan"]["block"] = "2026-12-01T01:35:40Z-31368/2";
  EXPECT_EQ(kbench::analysis::run_of(7, fingerprint), "2026-12-01T01:35:40Z-31368/2");
  EXPECT_EQ(kbench::analysis::run_of(7, nlohmann::json::object()), "session:7");
}

TEST(SessionOrigins, ARoundIsThePlansSessionNumber) {
  nlohmann::json fingerprint = {{"plan", {{"run", "2026-12-01T01:35:40Z-31368"}, {"session", 3}}}};
  EXPECT_EQ(kbench::analysis::round_of(fingerprint), "3");
  fingerprint["plan"]["session"] = "3";  // not a plan's number: no round
  EXPECT_EQ(kbench::analysis::round_of(fingerprint), "");
  EXPECT_EQ(kbench::analysis::round_of(nlohmann::json::object()), "");
}

TEST(SessionOrigins, AKernelIsItsBuildCmdlineSettingsAndSeccomp) {
  const nlohmann::json base = {{"kernel_release", "6.18.44"},
                               {"kernel_version", "#1 SMP"},
                               {"cmdline", "quiet"},
                               {"sysctl", nlohmann::json::object()},
                               {"seccomp", "none"},
                               {"hostname", "vm"},
                               {"loadavg", {0.1, 0.2, 0.3}}};
  nlohmann::json same = base;
  same["loadavg"] = {2.0, 1.0, 0.5};  // the moment, not the kernel
  EXPECT_EQ(kbench::analysis::kernel_of(base), kbench::analysis::kernel_of(same));
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"kernel_version", "#2 SMP"},
           {"cmdline", "quiet mitigations=off"},
           {"sysctl", {{"kernel.sched_autogroup_enabled", "0"}}},
           {"seccomp", "filter x 5"}}) {
    nlohmann::json other = base;
    other[key] = value;
    EXPECT_NE(kbench::analysis::kernel_of(base), kbench::analysis::kernel_of(other)) << key;
  }
}

TEST(Fingerprint, SeccompStateFromProcStatus) {
  using kbench::sysinfo::seccomp_from_status;
  EXPECT_EQ(seccomp_from_status("Name:\tkbench-agent\nSeccomp:\t0\nSeccomp_filters:\t0\n"), "none");
  EXPECT_EQ(seccomp_from_status("Seccomp:\t2\nSeccomp_filters:\t1\n"), "filter");
  EXPECT_EQ(seccomp_from_status("Seccomp:\t2\nSeccomp_filters:\t8\n"), "filter x 8");
  EXPECT_EQ(seccomp_from_status("Seccomp:\t1\n"), "strict");
  EXPECT_TRUE(seccomp_from_status("Name:\told-kernel\n").is_null());
  // Whatever this process runs under (a container may add a filter), the
  // fingerprint says it.
  const auto state = kbench::sysinfo::fingerprint().at("seccomp");
  EXPECT_TRUE(state.is_string()) << state.dump();
}

}  // namespace

namespace {

int marks(const kbench::analysis::Report& report) {
  int count = 0;
  for (const auto& table : report.tables) {
    for (const auto& column : table.columns) count += column.improvements + column.regressions;
  }
  return count;
}

TEST(CompareRuns, AMixedHistoryIsWeighedByItsRunsNotMarkedForTheOldRunsDrift) {
  // One kernel throughout: the base has 4 sessions in an old run 10 % slower
  // and 1 in the interleaved run it shares with the test. Counting the shared
  // run as "the sides share a run" dropped the run term and marked every row
  // about +7.8 %; the model weighs the base's old run by what its run
  // variance says (10 % between the base's own runs) and marks nothing.
  Store store;
  for (int row = 0; row < 6; ++row) {
    const std::string benchmark = "bench/" + std::to_string(row);
    const double level = 100.0 * (row + 1);
    store.run("A", "run-old", "kernel-a", {level * 1.10, level * 1.102, level * 1.098, level * 1.101}, benchmark);
    store.session("A", "run-plan", "kernel-a", level * 1.001, benchmark);
    store.run("B", "run-plan", "kernel-a", {level * 0.999, level * 1.002, level * 1.0, level * 0.998}, benchmark);
  }
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  EXPECT_EQ(marks(report), 0);
  for (const auto& row : report.tables.at(0).rows) {
    const auto& cell = row.cells.at(0);
    SCOPED_TRACE(row.benchmark);
    EXPECT_NEAR(cell.change_pct, 0.0, 1.0) << "the estimate leans on the shared run";
  }
}

TEST(CompareRuns, ABaseWhoseTwoRunsHappenToAgreeBorrowsTheMachinesRunNoise) {
  // The base measured twice and a same-kernel run a day later 8 % faster on
  // every row (the machine's drift). On five rows the base's two runs differ
  // as much as runs do here; on one they happen to agree. Believing that row
  // alone made its run noise ~0 and marked the drift; the machine's rows
  // share one drift, so that row is tested with their pooled run noise.
  Store store;
  const double drifts[] = {1.08, 0.93, 1.07, 0.92, 1.09, 1.0005};
  for (int row = 0; row < 6; ++row) {
    const std::string benchmark = "bench/" + std::to_string(row);
    const double level = 100.0 * (row + 1);
    store.run("A", "run-1", "kernel-a", {level, level * 1.002, level * 0.999}, benchmark);
    store.run("A", "run-2", "kernel-a", {level * drifts[row], level * drifts[row] * 1.001}, benchmark);
    store.run("B", "run-3", "kernel-a", {level * 0.92, level * 0.921, level * 0.919}, benchmark);
  }
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  EXPECT_EQ(marks(report), 0);
  const auto& agreeing = report.tables.at(0).rows.at(5).cells.at(0);
  EXPECT_EQ(agreeing.run_df, 1);
  EXPECT_EQ(agreeing.verdict, Verdict::Undecided) << agreeing.note;
}

TEST(CompareRuns, ACalibratedMachineDecidesARealChangeBetweenSeparateRuns) {
  // kbench calibrate measured the running kernel in 8 paused sessions (each
  // a run); runs differ by about 1 %. The base and the test come from a
  // run each, the test 12 % slower on every row: marked, with the run df the
  // calibration gave.
  Store store;
  const double calibration[] = {1.0, 1.012, 0.991, 1.004, 0.986, 1.009, 0.997, 1.015};
  for (int row = 0; row < 4; ++row) {
    const std::string benchmark = "bench/" + std::to_string(row);
    const double level = 100.0 * (row + 1);
    for (int c = 0; c < 8; ++c) {
      store.session("calibrate", "block-" + std::to_string(c), "kernel-a", level * calibration[(c + row) % 8],
                    benchmark);
    }
    store.run("A", "run-a", "kernel-a", {level * 1.003, level * 0.998, level * 1.001}, benchmark);
    store.run("B", "run-b", "kernel-b", {level * 1.12, level * 1.118, level * 1.123}, benchmark);
  }
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  for (const auto& row : report.tables.at(0).rows) {
    const auto& cell = row.cells.at(0);
    SCOPED_TRACE(row.benchmark);
    EXPECT_EQ(cell.run_df, 7);
    EXPECT_EQ(cell.verdict, Verdict::Regression) << cell.note;
  }
}

TEST(CompareRuns, TheMarksDirectionAgreesWithItsCi) {
  // Test sessions 100 / 100.1 / 200 against a base at 130 with a large
  // noise model: the arithmetic mean rose 2.6 %, the tested log means fell
  // 3.1 %. The mark, its direction, its CI and the margin use one change.
  Store store;
  store.run("A", "run-1", "kernel-a", {130.0, 130.1, 129.9});
  store.run("B", "run-1", "kernel-b", {100.0, 100.1, 200.0});
  for (int p = 0; p < 10; ++p) {
    const std::string number = std::to_string(p);  // named: GCC 12 misreads "P" + to_string(p) as an overflow
    store.run("P" + number, "run-1", "kernel-p" + number, {50.0, 80.0, 65.0});
  }
  const auto report = build_comparison(store.rows, a_vs_b(), store.origins);
  const auto& cell = only_cell(report);
  ASSERT_TRUE(cell.change_ci.valid);
  EXPECT_LT(cell.change_ci.low, cell.change_pct);
  EXPECT_GT(cell.change_ci.high, cell.change_pct);
  EXPECT_NEAR(cell.change_pct, (std::cbrt(100.0 * 100.1 * 200.0) / 130.0 - 1) * 100, 0.05);
  if (cell.verdict == Verdict::Regression) {
    EXPECT_GT(cell.change_ci.low, 0);
  }
  if (cell.verdict == Verdict::Improvement) {
    EXPECT_LT(cell.change_ci.high, 0);
  }
}

}  // namespace
