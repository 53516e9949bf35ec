// The plan executor on its own, with the real agent on this machine (the
// selftest/* benchmarks, which sleep a millisecond or fail on purpose), a
// connection that writes down what it starts, and a SQLite store in a
// temporary directory: the order of the swprofiles within rounds, what a
// failing benchmark leaves, and a resume after the SUT went away mid-plan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "common/errors.h"
#include "plan/plan.h"
#include "runner/catalogue.h"
#include "runner/plan_executor.h"
#include "store/result_store.h"
#include "support/recording_connection.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

constexpr const char* kPlanText = R"(order: listed
swprofiles:
  - {name: A, wrapper: [env, KBENCH_TEST_SIDE=A]}
  - {name: B, wrapper: [env, KBENCH_TEST_SIDE=B]}
benchmarks:
  - {name: selftest/sleep, params: {ms: "1"}}
  - {name: selftest/exit, params: {ms: "1", at: "0"}}
defaults:
  benchmark: {warmups: 0, repeats: 2, sessions: 4, timeout: 30s}
)";

class PlanExecutor : public ::testing::Test {
 protected:
  PlanExecutor()
      : plan_(plan::parse_plan(kPlanText, "executor.yaml")),
        store_(store::open_store((dir_.path() / "store.db").string(), store::OpenMode::CreateIfMissing)) {
    options_.plan_key = "executor.yaml";
    benchmarks_ = runner::resolve_benchmarks(plan_, runner::fetch_catalogue(connection_));
  }

  runner::ExecResult execute(bool resume = false) {
    options_.resume = resume;
    connection_.starts.clear();
    runner::Progress progress(quiet_, false, 0);
    return runner::execute_plan(
        plan_, benchmarks_, [&](const plan::SwprofileSpec&) -> sut::Connection& { return connection_; }, *store_,
        options_, progress);
  }

  // The side of each session, in order: the sides that ran selftest/exit,
  // the plan's last benchmark, once a session.
  std::vector<std::string> session_sides() const {
    std::vector<std::string> sides;
    for (const auto& start : connection_.starts) {
      if (start.ends_with(" run selftest/exit")) sides.push_back(start.substr(0, start.find(' ')));
    }
    return sides;
  }

  testing::ScopedEnv selftest_{"KBENCH_SELFTEST", "1"};
  testing::TempDir dir_;
  std::FILE* quiet_ = std::fopen("/dev/null", "w");
  plan::Plan plan_;
  std::unique_ptr<store::ResultStore> store_;
  testing::RecordingConnection connection_;
  runner::ExecOptions options_;
  std::vector<runner::BenchmarkRun> benchmarks_;

  ~PlanExecutor() override { std::fclose(quiet_); }
};

TEST_F(PlanExecutor, RoundsAlternateTheSwprofilesInABalancedOrder) {
  const auto result = execute();
  // A B, B A, A B, B A: each side first and last equally often.
  EXPECT_THAT(session_sides(), ElementsAre("A", "B", "B", "A", "A", "B", "B", "A"));
  // Within a session the listed order, the same in every round, between the
  // fingerprint at its start and the one at its end (the load during it).
  EXPECT_THAT(std::vector<std::string>(connection_.starts.begin(), connection_.starts.begin() + 4),
              ElementsAre("A fingerprint", "A run selftest/sleep", "A run selftest/exit", "A fingerprint"));
  ASSERT_EQ(result.sessions.size(), 8u);
  // Every session records its round and the run it belongs to.
  std::map<std::string, std::vector<int>> rounds;
  std::set<std::string> runs;
  for (const auto& summary : result.sessions) {
    const auto stored = store_->session(summary.session);
    ASSERT_TRUE(stored);
    rounds[summary.swprofile].push_back(stored->fingerprint["plan"]["session"].get<int>());
    runs.insert(stored->fingerprint["plan"]["run"].get<std::string>());
    EXPECT_TRUE(stored->finished);
  }
  EXPECT_THAT(rounds["A"], ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(rounds["B"], ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(runs.size(), 1u);
}

TEST_F(PlanExecutor, AFailingBenchmarkIsCountedAndTheRestOfThePlanRuns) {
  const auto result = execute();
  EXPECT_EQ(result.failed, 8);  // selftest/exit, in every session
  EXPECT_EQ(result.interrupted_by, 0);
  for (const auto& summary : result.sessions) {
    ASSERT_EQ(summary.outcomes.size(), 2u);
    EXPECT_EQ(summary.outcomes[0].outcome.status, store::OutcomeStatus::Ok);
    EXPECT_EQ(summary.outcomes[0].repeats_stored, 2);
    EXPECT_EQ(summary.outcomes[1].outcome.status, store::OutcomeStatus::Failed);
    EXPECT_THAT(summary.outcomes[1].outcome.reason, ::testing::HasSubstr("status 3"));
    EXPECT_EQ(summary.outcomes[1].repeats_stored, 0);
  }
}

// A connection whose relay ends a run's stderr with its own line (lava's:
// the job and its URL): the stored reason keeps it, since the stderr tail is
// not shown. Stood in for by a wrapper that writes one; a connection that
// declares no such line has its stderr's last line left alone.
TEST_F(PlanExecutor, AnOutcomesReasonKeepsTheRelaysLastLine) {
  connection_.account_prefix = "kbench: relay: job ";
  for (auto& profile : plan_.swprofiles) {
    profile.wrapper.insert(profile.wrapper.end(),
                           {"sh", "-c", "\"$@\"; s=$?; echo 'kbench: relay: job 9 (http://farm/job/9)' >&2; exit $s", "sh"});
  }
  const auto result = execute();
  ASSERT_FALSE(result.sessions.empty());
  for (const auto& summary : result.sessions) {
    ASSERT_EQ(summary.outcomes.size(), 2u);
    EXPECT_EQ(summary.outcomes[0].outcome.status, store::OutcomeStatus::Ok);
    EXPECT_EQ(summary.outcomes[0].outcome.reason, "kbench: relay: job 9 (http://farm/job/9)");
    EXPECT_EQ(summary.outcomes[1].outcome.reason,
              "agent exited with status 3 (kbench: relay: job 9 (http://farm/job/9))");
    const auto stored = store_->outcome_of(summary.session, {"selftest/exit", benchmarks_[1].params});
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->reason, summary.outcomes[1].outcome.reason);
  }
  connection_.account_prefix = "";
  for (const auto& summary : execute(/*resume=*/false).sessions) {
    EXPECT_EQ(summary.outcomes[0].outcome.reason, "");
    EXPECT_EQ(summary.outcomes[1].outcome.reason, "agent exited with status 3");
  }
}

TEST_F(PlanExecutor, AResumeRunsOnlyWhatTheBrokenRunLeftUndone) {
  // The SUT goes away at the 11th start: round 0 done (4 starts a session),
  // round 1's first session has its fingerprint and selftest/sleep, not
  // selftest/exit.
  connection_.fail_at(11);
  EXPECT_THROW(execute(), RunError);
  ASSERT_THAT(session_sides(), ElementsAre("A", "B"));
  ASSERT_EQ(connection_.starts.back(), "B run selftest/sleep");

  const auto resumed = execute(/*resume=*/true);
  // The unfinished session: its fingerprint again, then only what it lacks.
  EXPECT_THAT(std::vector<std::string>(connection_.starts.begin(), connection_.starts.begin() + 2),
              ElementsAre("B fingerprint", "B run selftest/exit"));
  // Round 0 is not measured again, not even asked for a fingerprint (a boot,
  // on a qemu SUT); the rest follows in the same balanced order.
  EXPECT_THAT(session_sides(), ElementsAre("B", "A", "A", "B", "B", "A"));
  EXPECT_EQ(std::count_if(connection_.starts.begin(), connection_.starts.end(),
                          [](const std::string& start) { return start.ends_with(" fingerprint"); }),
            2 * 6);
  // Every swprofile ends with its four sessions of the one run.
  std::map<std::string, int> sessions;
  std::set<std::string> runs;
  for (const auto& listing : store_->list_sessions({})) {
    ++sessions[listing.swprofile];
    runs.insert(store_->session(listing.id)->fingerprint["plan"]["run"].get<std::string>());
    EXPECT_TRUE(listing.complete()) << listing.swprofile << " session " << listing.number();
  }
  EXPECT_THAT(sessions, ElementsAreArray(std::map<std::string, int>{{"A", 4}, {"B", 4}}));
  EXPECT_EQ(runs.size(), 1u);
}

TEST_F(PlanExecutor, ABenchmarkTheAgentRefusesIsBadInputAndLeavesNothingOfIt) {
  benchmarks_[0].params["ms"] = "-1";  // the agent's own check refuses it (exit status 2)
  EXPECT_THROW(execute(), InputError);
  for (const auto& listing : store_->list_sessions({})) {
    for (const auto& benchmark : store_->session_benchmarks(listing.id)) {
      if (benchmark.benchmark != "selftest/sleep") continue;
      EXPECT_FALSE(benchmark.outcome) << "a refused benchmark left an outcome";
      EXPECT_EQ(benchmark.samples, 0) << "a refused benchmark left samples";
    }
  }
}

// A SUT that boots the swprofile's kernel for every agent run (a VM, a LAVA
// job): the fingerprint run of a session is the boot. The recording
// connections stand in for two VMs: `first`'s swprofile, whose connection a
// test makes fail, then `boots`, each measured in two sessions.
class PlanExecutorBootsPerRun : public ::testing::Test {
 protected:
  runner::ExecResult execute(const std::string& first) {
    const std::string kernel = (dir_.path() / "vmlinuz").string();
    std::ofstream(kernel) << "not booted: the connections are the test's";
    const plan::Plan plan = plan::parse_plan("sut: {name: vm, connection: {method: qemu}}\n"
                                             "order: listed\n"
                                             "swprofiles:\n"
                                             "  - {name: " + first + ", kernel: " + kernel + "}\n"
                                             "  - {name: boots, kernel: " + kernel + "}\n"
                                             "benchmarks: [{name: selftest/sleep, params: {ms: \"1\"}}]\n"
                                             "defaults: {benchmark: {warmups: 0, repeats: 2, sessions: 2, timeout: 30s}}\n",
                                             "vm.yaml");
    store_ = store::open_store((dir_.path() / "store.db").string(), store::OpenMode::CreateIfMissing);
    runner::ExecOptions options;
    options.plan_key = "vm.yaml";
    const auto benchmarks = runner::resolve_benchmarks(plan, runner::fetch_catalogue(boots_));
    std::FILE* quiet = std::fopen("/dev/null", "w");
    runner::Progress progress(quiet, false, 0);
    const runner::ExecResult result = runner::execute_plan(
        plan, benchmarks,
        [&](const plan::SwprofileSpec& profile) -> sut::Connection& { return profile.name == first ? first_ : boots_; },
        *store_, options, progress);
    std::fclose(quiet);
    return result;
  }

  // Sessions stored per swprofile.
  std::map<std::string, int> sessions() const {
    std::map<std::string, int> counted;
    for (const auto& listing : store_->list_sessions({})) ++counted[listing.swprofile];
    return counted;
  }

  testing::ScopedEnv selftest_{"KBENCH_SELFTEST", "1"};
  testing::TempDir dir_;
  std::unique_ptr<store::ResultStore> store_;
  testing::RecordingConnection first_;
  testing::RecordingConnection boots_;
};

// `panics` refuses its first start as a panicked guest would.
TEST_F(PlanExecutorBootsPerRun, AKernelThatDoesNotComeUpIsAFailedBootAndThePlanGoesOn) {
  first_.fail_at(1);
  const runner::ExecResult result = execute("panics");

  EXPECT_EQ(result.failed_boots, 2) << "the failed boot and the session not booted again";
  EXPECT_EQ(result.failed, 2);
  EXPECT_TRUE(first_.starts.empty()) << "the kernel that failed was started again";
  std::vector<std::string> listed;
  for (const auto& boot : store_->list_boots("vm.yaml", "")) {
    listed.push_back(boot.swprofile + " " + std::to_string(boot.plan_session) + " " + boot.method + " " +
                     (boot.ok ? "ok" : "failed") + (boot.session ? " with its session" : ""));
    if (!boot.ok) {
      EXPECT_THAT(boot.reason, ::testing::HasSubstr("the SUT went away at start 1"));
    }
  }
  EXPECT_THAT(listed, ElementsAre("panics 0 qemu failed", "boots 0 qemu ok with its session",
                                  "boots 1 qemu ok with its session"));
  EXPECT_EQ(sessions(), (std::map<std::string, int>{{"boots", 2}}));
}

// A relay whose lab failed the fingerprint's run (a LAVA Infrastructure
// error on every try) exits with kExitInfrastructure: the session is not
// measured, but that is not the kernel's failure, so no failed boot is
// recorded and the kernel's next session boots it again.
TEST_F(PlanExecutorBootsPerRun, ASessionTheLabFailsIsNotAFailedBootOfItsKernel) {
  first_.exit_at(1, kExitInfrastructure);
  const runner::ExecResult result = execute("flaky");

  EXPECT_EQ(result.failed, 1);
  EXPECT_EQ(result.failed_boots, 0) << "the lab's failure was taken for the kernel's";
  EXPECT_EQ(first_.starts.size(), 3u) << "flaky's second session: a fingerprint and its benchmark";
  std::vector<std::string> listed;
  for (const auto& boot : store_->list_boots("vm.yaml", "")) {
    listed.push_back(boot.swprofile + " " + std::to_string(boot.plan_session) + " " + (boot.ok ? "ok" : "failed"));
  }
  EXPECT_THAT(listed, ::testing::UnorderedElementsAre("boots 0 ok", "boots 1 ok", "flaky 1 ok"));
  EXPECT_EQ(sessions(), (std::map<std::string, int>{{"boots", 2}, {"flaky", 1}}));
}

}  // namespace
}  // namespace kbench
