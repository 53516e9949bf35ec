// compare --adjust canary (analysis/canary_adjustment.h): which values it
// scales and how, what it refuses, and what it does to a verdict across
// separate runs whose drift the canary saw; the canary read from a real store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/canary_adjustment.h"
#include "analysis/compare.h"
#include "common/errors.h"
#include "store/result_store.h"
#include "support/test_files.h"

namespace kbench::analysis {
namespace {

using report::Verdict;
using store::SampleRow;
using ::testing::HasSubstr;

SampleRow sample(const std::string& profile, std::int64_t session, const std::string& benchmark,
                 const ResultClass& result_class, double value, int repeat = 0) {
  SampleRow row;
  row.sut = "vm";
  row.swprofile = profile;
  row.session = session;
  row.session_index = static_cast<int>(session) - 1;
  row.benchmark = benchmark;
  row.result_class = result_class;
  row.repeat = repeat;
  row.value = value;
  return row;
}

const ResultClass kMeanNs{"mean", "ns", Better::Lower};
const ResultClass kOpsPerSec{"basic", "ops/sec", Better::Higher};
const ResultClass kPercent{"loss", "%", Better::Lower};
const ResultClass kCanaryMedian{"median", "ns", Better::Lower};

TEST(CanaryAdjustment, TimesAndRatesScaleWithTheCoreOtherUnitsDoNot) {
  EXPECT_EQ(speed_scaling("ns"), SpeedScaling::Time);
  EXPECT_EQ(speed_scaling("usec"), SpeedScaling::Time);
  EXPECT_EQ(speed_scaling("seconds"), SpeedScaling::Time);
  EXPECT_EQ(speed_scaling("ticks"), SpeedScaling::Time);
  EXPECT_EQ(speed_scaling("ops/sec"), SpeedScaling::Rate);
  EXPECT_EQ(speed_scaling("Mbps"), SpeedScaling::Rate);
  EXPECT_EQ(speed_scaling("%"), SpeedScaling::None);
  EXPECT_EQ(speed_scaling("bytes"), SpeedScaling::None);
}

TEST(CanaryAdjustment, ScalesEachSessionAgainstTheGeometricMeanOfItsSut) {
  // Session 2 ran on a core 21 % slower than session 1 (canary 1.1 vs 1/1.1,
  // geometric mean 1): its time halves to the mean's footing, its rate grows.
  std::vector<SampleRow> samples{
      sample("A", 1, "syscall/getpid", kMeanNs, 100), sample("A", 2, "syscall/getpid", kMeanNs, 121),
      sample("A", 1, "perf/syscall", kOpsPerSec, 1000), sample("A", 2, "perf/syscall", kOpsPerSec, 1000),
      sample("A", 2, "sock/loss", kPercent, 3), sample("A", 2, std::string(kCanaryBenchmark), kCanaryMedian, 1.1)};
  const SessionCanary canary{{1, 1 / 1.1}, {2, 1.1}};
  const CanaryAdjusted adjusted = adjust_by_canary(samples, canary, {"A"});
  EXPECT_EQ(adjusted.sessions, 2);
  EXPECT_EQ(adjusted.dropped_sessions, 0);
  EXPECT_NEAR(samples[0].value, 110, 1e-9);
  EXPECT_NEAR(samples[1].value, 110, 1e-9);
  EXPECT_NEAR(samples[2].value, 1000 / 1.1, 1e-9);
  EXPECT_NEAR(samples[3].value, 1100, 1e-9);
  EXPECT_EQ(samples[4].value, 3) << "a percentage does not scale with the core";
  EXPECT_EQ(samples[5].value, 1.1) << "the canary's own rows show the machine's speed as measured";
  EXPECT_THAT(describe(adjusted), HasSubstr("2 sessions"));
}

TEST(CanaryAdjustment, AComparedSessionWithoutACanaryIsBadInputAndNothingChanges) {
  std::vector<SampleRow> samples{sample("A", 1, "syscall/getpid", kMeanNs, 100),
                                 sample("B", 2, "syscall/getpid", kMeanNs, 100),
                                 sample("B", 3, "syscall/getpid", kMeanNs, 100)};
  const auto before = samples;
  try {
    adjust_by_canary(samples, {{1, 1.0}}, {"A", "B"});
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("B session 2, 3"));
    EXPECT_THAT(error.what(), HasSubstr("canary/loop"));
  }
  for (std::size_t i = 0; i < samples.size(); ++i) EXPECT_EQ(samples[i].value, before[i].value);
}

TEST(CanaryAdjustment, SessionsOfOtherProfilesWithoutACanaryAreLeftOut) {
  std::vector<SampleRow> samples{sample("A", 1, "syscall/getpid", kMeanNs, 100),
                                 sample("old", 2, "syscall/getpid", kMeanNs, 100),
                                 sample("old", 2, "syscall/getpid", kMeanNs, 100, 1)};
  const CanaryAdjusted adjusted = adjust_by_canary(samples, {{1, 1.0}}, {"A"});
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].swprofile, "A");
  EXPECT_EQ(adjusted.dropped_sessions, 1);
  EXPECT_THAT(describe(adjusted), HasSubstr("1 sessions of other swprofiles without a canary left out"));
}

// Separate runs on a host whose speed drifts: kernel C measured in three
// runs, each at the machine's speed of the moment (its canary), A in one run
// and B in another. B is `change` slower than A at equal speed; B's run
// happened on a core 5 % slower.
struct DriftingRuns {
  std::vector<SampleRow> samples;
  SessionOrigins origins;
  SessionCanary canary;
  std::int64_t next = 1;

  void run(const std::string& profile, const std::string& kernel, double cost, double slowness) {
    const std::string run_name = "run" + std::to_string(next);
    for (const double wobble : {-0.003, 0.0, 0.003, 0.001, -0.001}) {
      const std::int64_t session = next++;
      origins[session] = {run_name, kernel, ""};
      canary[session] = 2.0 * slowness * (1 + wobble / 3);
      for (int repeat = 0; repeat < 2; ++repeat)
        samples.push_back(sample(profile, session, "syscall/getpid", kMeanNs, cost * slowness * (1 + wobble), repeat));
    }
  }
};

DriftingRuns drifting_runs(double change) {
  DriftingRuns runs;
  for (const double slowness : {1.0, 1.10, 0.92}) runs.run("C", "kernel-c", 300, slowness);
  runs.run("A", "kernel-a", 100, 1.0);
  runs.run("B", "kernel-b", 100 * (1 + change), 1.05);
  return runs;
}

const report::Cell& getpid_cell(const report::Report& report) {
  return report.tables.at(0).rows.at(0).cells.at(0);
}

CompareOptions a_vs_b() {
  CompareOptions options;
  options.base = "A";
  options.tests = {"B"};
  return options;
}

TEST(CanaryAdjustment, ADriftTheCanarySawNoLongerHidesAChange) {
  DriftingRuns runs = drifting_runs(0.06);
  const auto raw = build_comparison(runs.samples, a_vs_b(), runs.origins);
  EXPECT_EQ(getpid_cell(raw).verdict, Verdict::Undecided) << "runs 10 % apart outweigh a 6 % change";
  adjust_by_canary(runs.samples, runs.canary, {"A", "B"});
  const auto adjusted = build_comparison(runs.samples, a_vs_b(), runs.origins);
  EXPECT_EQ(getpid_cell(adjusted).verdict, Verdict::Regression) << getpid_cell(adjusted).note;
  EXPECT_NEAR(getpid_cell(adjusted).change_pct, 6.0, 0.5) << "B takes 6 % longer at equal speed";
}

TEST(CanaryAdjustment, ADriftTheCanarySawIsNotMarkedAsAChange) {
  DriftingRuns runs = drifting_runs(0.0);
  adjust_by_canary(runs.samples, runs.canary, {"A", "B"});
  const auto adjusted = build_comparison(runs.samples, a_vs_b(), runs.origins);
  EXPECT_NE(getpid_cell(adjusted).verdict, Verdict::Regression);
  EXPECT_NE(getpid_cell(adjusted).verdict, Verdict::Improvement);
  EXPECT_NEAR(getpid_cell(adjusted).change_pct, 0.0, 0.5);
}

// The canary of a session is the mean of its median repeats, read from a real
// SQLite store; sessions whose canary did not end ok, and other classes, are not.
TEST(CanaryAdjustment, ASessionsCanaryIsTheMeanOfItsSettledMedianRepeats) {
  kbench::testing::TempDir dir;
  auto store = store::open_store("sqlite://" + (dir.path() / "store.db").string(), store::OpenMode::CreateIfMissing);
  store::SessionStart start;
  start.sut.name = "vm";
  start.swprofile = "A";
  start.fingerprint = {{"kernel_release", "6.1.0-test"}};
  start.started_at = "2026-12-05T00:00:00Z";
  const store::BenchmarkKey canary_loop{std::string(kCanaryBenchmark), {{"iterations", "50000000"}}};
  const auto settled = store->begin_session(start);
  store->add_repeat(settled, canary_loop, 0, {{"", kCanaryMedian, 0, 1.2}, {"", {"mean", "ns", Better::Lower}, 0, 9}});
  store->add_repeat(settled, canary_loop, 1, {{"", kCanaryMedian, 0, 1.4}, {"", {"mean", "ns", Better::Lower}, 0, 9}});
  store->record_outcome(settled, canary_loop, {});
  const auto interrupted = store->begin_session(start);
  store->add_repeat(interrupted, canary_loop, 0, {{"", kCanaryMedian, 0, 5.0}});
  const SessionCanary canary = session_canary(*store);
  ASSERT_EQ(canary.size(), 1u);
  EXPECT_NEAR(canary.at(settled), 1.3, 1e-12);
}

}  // namespace
}  // namespace kbench::analysis
