// The fleet driver (execute_fleet) with stand-in workers: each a process
// forked from this test that measures its SUT's plan as `kbench plan exec
// --fleet-worker` would, through a recording connection (the real agent on
// this machine, selftest/sleep), into the SQLite store the fleet reads its
// summary from, and lists the connection's starts on its stdout. What the
// fleet promises: a worker per SUT with the parent's options, each SUT's
// sessions under its own plan key and class, a SUT that fails failing alone
// and named with the command that continues it, and a resume that measures
// only what that SUT lacks. A crossover's two workers measure the two
// swprofiles side by side, in pairs, and the one whose partner dies goes on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/fleet.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "process/process.h"
#include "runner/catalogue.h"
#include "runner/plan_executor.h"
#include "runner/progress.h"
#include "store/result_store.h"
#include "support/recording_connection.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kPlanText = R"(suts:
  - {name: alpha, class: aws-m7g}
  - {name: beta, class: AmpereOne}
swprofiles:
  - {name: A, wrapper: [env, KBENCH_TEST_SIDE=A]}
  - {name: B, wrapper: [env, KBENCH_TEST_SIDE=B]}
benchmarks:
  - {name: selftest/sleep, params: {ms: "1"}}
defaults:
  benchmark: {warmups: 0, repeats: 2, sessions: 2, timeout: 30s}
)";

// Two SUTs of one class swapping two swprofiles, in step.
constexpr const char* kCrossoverText = R"(design: crossover
suts:
  - {name: alpha, class: lab}
  - {name: beta, class: lab}
swprofiles:
  - {name: A, wrapper: [env, KBENCH_TEST_SIDE=A]}
  - {name: B, wrapper: [env, KBENCH_TEST_SIDE=B]}
benchmarks:
  - {name: selftest/sleep, params: {ms: "1"}}
  - {name: selftest/sleep, params: {ms: "2"}}
defaults:
  benchmark: {warmups: 0, repeats: 2, sessions: 3, timeout: 10m}
)";

// The value of `option` in a worker's argv; empty when absent.
std::string option_value(const std::vector<std::string>& argv, const std::string& option) {
  const auto it = std::ranges::find(argv, option);
  return it == argv.end() || it + 1 == argv.end() ? std::string() : *(it + 1);
}

struct FleetRun {
  int status = -1;
  std::string out;
  std::string err;
};

// A SUT's sessions in the store.
struct Stored {
  int sessions = 0;
  int complete = 0;
  std::set<std::string> classes;
  std::set<std::string> plan_keys;
};

class FleetDriver : public ::testing::Test {
 protected:
  explicit FleetDriver(const char* plan_text = kPlanText)
      : plan_(plan::parse_plan(plan_text, "fleet.yaml")),
        store_(store::open_store(url(), store::OpenMode::CreateIfMissing)) {
    options_.plan_path = "fleet.yaml";
    options_.plan_key = "/plans/fleet.yaml";
    options_.store_url = url();
    options_.cpus = "0";
    testing::RecordingConnection catalogue;
    runs_ = runner::resolve_benchmarks(plan_, runner::fetch_catalogue(catalogue));
  }

  std::string url() const { return "sqlite://" + (dir_.path() / "store.db").string(); }

  // execute_fleet on the SUTs `names` selects, its stdout and stderr captured.
  FleetRun execute(const std::vector<std::string>& names = {}) {
    const auto suts = app::select_suts(plan_, names);
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    FleetRun run;
    run.status = app::execute_fleet(plan_, suts, runs_, options_, *store_,
                                    [this](const plan::SutSpec& sut, const std::vector<std::string>& argv) {
                                      return start_worker(sut, argv);
                                    });
    run.out = ::testing::internal::GetCapturedStdout();
    run.err = ::testing::internal::GetCapturedStderr();
    return run;
  }

  // In place of argv (`kbench plan exec --fleet-worker --sut NAME ...`), which
  // is written down without its program. The child opens a store connection
  // of its own, as a worker does; it never touches the one it inherits.
  process::Child start_worker(const plan::SutSpec& sut, const std::vector<std::string>& argv) {
    worker_args_[sut.name] = std::vector<std::string>(argv.begin() + 1, argv.end());
    const bool resume = std::ranges::find(argv, "--resume") != argv.end();
    const auto fail = fail_at_.find(sut.name);
    const int fail_at = fail == fail_at_.end() ? 0 : fail->second;
    const auto die = die_at_.find(sut.name);
    const int die_at = die == die_at_.end() ? 0 : die->second;
    // What plan exec makes of a crossover worker's options.
    std::optional<runner::Pairing> pairing;
    if (const std::string dir = option_value(argv, "--pair-dir"); !dir.empty()) {
      pairing = runner::Pairing{dir, std::stoi(option_value(argv, "--pair-position")), option_value(argv, "--pair-id"),
                                sut.name};
    }
    const int first_round = plan_.design == plan::Design::Crossover
                                ? static_cast<int>(std::ranges::find(plan_.suts, sut.name, &plan::SutSpec::name) -
                                                   plan_.suts.begin())
                                : 0;
    // What this process has buffered would reach the child's pipes too.
    std::fflush(nullptr);
    return process::fork_relay(
        [&](int out_fd, int err_fd) {
          dup2(out_fd, STDOUT_FILENO);
          dup2(err_fd, STDERR_FILENO);
          testing::RecordingConnection connection;
          if (fail_at > 0) connection.fail_at(fail_at);
          if (die_at > 0) connection.die_at(die_at);
          connection.journal = journal_;
          connection.journal_tag = sut.name;
          if (slow_.contains(sut.name)) connection.delay = std::chrono::milliseconds(50);
          runner::ExecOptions exec;
          exec.resume = resume;
          exec.pairing = pairing;
          exec.first_round = first_round;
          exec.plan_key = app::fleet_plan_key(options_.plan_key, sut.name);
          exec.announce_steps = true;
          auto store = store::open_store(options_.store_url, store::OpenMode::MustExist);
          runner::Progress progress(stderr, false, 0);
          runner::execute_plan(
              plan_.for_sut(sut), runs_, [&](const plan::SwprofileSpec&) -> sut::Connection& { return connection; },
              *store, exec, progress);
          for (const auto& start : connection.starts) std::cout << start << "\n";
          std::cout.flush();
          return 0;
        },
        "worker");
  }

  // beta's connection fails at its `start`-th start (the rest of the plan
  // measured), then a --resume of beta alone.
  FleetRun resume_beta_after_failing_at(int start) {
    fail_at_["beta"] = start;
    EXPECT_EQ(execute().status, kExitFailure);
    fail_at_.clear();
    worker_args_.clear();
    options_.resume = true;
    return execute({"beta"});
  }

  std::map<std::string, Stored> stored() const {
    std::map<std::string, Stored> by_sut;
    for (const auto& listing : store_->list_sessions({})) {
      Stored& sut = by_sut[listing.sut];
      ++sut.sessions;
      if (listing.complete()) ++sut.complete;
      sut.classes.insert(listing.sut_class);
      sut.plan_keys.insert(store_->session(listing.id)->fingerprint["plan"]["key"].get<std::string>());
    }
    return by_sut;
  }

  testing::ScopedEnv selftest_{"KBENCH_SELFTEST", "1"};
  testing::TempDir dir_;
  plan::Plan plan_;
  std::unique_ptr<store::ResultStore> store_;
  app::FleetOptions options_;
  std::vector<runner::BenchmarkRun> runs_;
  std::map<std::string, std::vector<std::string>> worker_args_;
  std::map<std::string, int> fail_at_;  // SUT: its connection's start that fails
  std::map<std::string, int> die_at_;   // SUT: its connection's start that kills its worker
  std::set<std::string> slow_;          // SUTs whose every start waits 50 ms
  std::string journal_ = (dir_.path() / "starts").string();  // every worker's starts, in order
};

class CrossoverDriver : public FleetDriver {
 protected:
  CrossoverDriver() : FleetDriver(kCrossoverText) {}

  // A session as its fingerprint's plan object records it.
  struct Paired {
    std::string sut;
    std::string swprofile;
    std::string pair;
    std::string unit;
    std::string run;
    nlohmann::json order;
    bool complete = false;
  };
  std::vector<Paired> paired() const {
    std::vector<Paired> sessions;
    for (const auto& listing : store_->list_sessions({})) {
      const nlohmann::json plan = store_->session(listing.id)->fingerprint["plan"];
      sessions.push_back({listing.sut, listing.swprofile, plan.value("pair", std::string()),
                          plan.value("pair_unit", std::string()), plan.value("run", std::string()),
                          plan.value("order", nlohmann::json()), listing.complete()});
    }
    return sessions;
  }
};

TEST_F(FleetDriver, EachSutIsMeasuredByAWorkerOfItsOwnUnderItsOwnKeyAndClass) {
  const FleetRun run = execute();
  EXPECT_EQ(run.status, kExitOk) << run.err;
  EXPECT_THAT(worker_args_["alpha"], ElementsAre("plan", "exec", "fleet.yaml", "--fleet-worker", "--sut", "alpha",
                                                 "--store", url(), "--cpus", "0"));
  EXPECT_THAT(worker_args_["beta"], ElementsAre("plan", "exec", "fleet.yaml", "--fleet-worker", "--sut", "beta",
                                                "--store", url(), "--cpus", "0"));
  // Each worker's output under its SUT's heading, in the plan's order; each
  // measured the whole plan: two sessions of each swprofile.
  const auto alpha = run.out.find("== SUT alpha (class aws-m7g)\nA fingerprint\nA run selftest/sleep\n");
  const auto beta = run.out.find("== SUT beta (class AmpereOne)\nA fingerprint\nA run selftest/sleep\n");
  ASSERT_NE(alpha, std::string::npos) << run.out;
  ASSERT_NE(beta, std::string::npos) << run.out;
  EXPECT_LT(alpha, beta);
  const std::string alpha_out = run.out.substr(alpha, beta - alpha);
  EXPECT_EQ(std::count(alpha_out.begin(), alpha_out.end(), '\n'), 1 + 4 * 3) << alpha_out;
  const auto by_sut = stored();
  ASSERT_EQ(by_sut.size(), 2u);
  EXPECT_EQ(by_sut.at("alpha").sessions, 4);
  EXPECT_EQ(by_sut.at("alpha").complete, 4);
  EXPECT_THAT(by_sut.at("alpha").classes, ElementsAre("aws-m7g"));
  EXPECT_THAT(by_sut.at("alpha").plan_keys, ElementsAre("/plans/fleet.yaml#sut=alpha"));
  EXPECT_EQ(by_sut.at("beta").complete, 4);
  EXPECT_THAT(by_sut.at("beta").classes, ElementsAre("AmpereOne"));
  EXPECT_THAT(by_sut.at("beta").plan_keys, ElementsAre("/plans/fleet.yaml#sut=beta"));
  // Progress off a terminal: every line named by its SUT. The summary counts
  // each SUT's sessions from the store.
  EXPECT_THAT(run.err, HasSubstr("kbench: 2 SUTs in parallel, one worker each: alpha, beta\n"));
  EXPECT_THAT(run.err, HasSubstr("\nbeta: [1/"));
  EXPECT_THAT(run.err, HasSubstr("SUT    class      status       complete  failed  resumable\n"
                                 "alpha  aws-m7g    ok                4/4       0          0\n"
                                 "beta   AmpereOne  ok                4/4       0          0\n"));
}

TEST_F(FleetDriver, ASutThatFailsFailsAloneAndIsNamedWithTheCommandThatContinuesIt) {
  // beta's SUT goes away at the 5th start: its first session done (a
  // fingerprint, the benchmark, a fingerprint), the second begun.
  fail_at_["beta"] = 5;
  const FleetRun run = execute();
  EXPECT_EQ(run.status, kExitFailure);
  const auto by_sut = stored();
  EXPECT_EQ(by_sut.at("alpha").complete, 4);
  EXPECT_EQ(by_sut.at("beta").sessions, 2);
  EXPECT_EQ(by_sut.at("beta").complete, 1);
  EXPECT_THAT(run.out, HasSubstr("== SUT alpha (class aws-m7g)\n"));
  EXPECT_THAT(run.err, HasSubstr("alpha  aws-m7g    ok                4/4       0          0\n"
                                 "beta   AmpereOne  FAILED            1/4       0          3\n"));
  EXPECT_THAT(run.err, HasSubstr("kbench: SUT beta: exit status 1: worker: recording: the SUT went away at start 5\n"));
  EXPECT_THAT(run.err, HasSubstr("kbench: 1 of 2 SUTs failed: beta; the others went on. Continue the failed ones "
                                 "with: kbench plan exec 'fleet.yaml' --resume --sut 'beta' --cpus '0' --store '" +
                                 url() + "'\n"));
}

TEST_F(FleetDriver, AResumeOfOneSutMeasuresOnlyWhatThatSutLacks) {
  const FleetRun run = resume_beta_after_failing_at(5);
  EXPECT_EQ(run.status, kExitOk) << run.err;
  EXPECT_FALSE(worker_args_.contains("alpha"));
  EXPECT_THAT(worker_args_["beta"], ElementsAre("plan", "exec", "fleet.yaml", "--fleet-worker", "--sut", "beta",
                                                "--store", url(), "--resume", "--cpus", "0"));
  // The begun session goes on with what it lacks; the finished one is not
  // measured again.
  EXPECT_THAT(run.out, HasSubstr("== SUT beta (class AmpereOne)\nB fingerprint\nB run selftest/sleep\n"));
  EXPECT_THAT(run.out, Not(HasSubstr("== SUT alpha")));
  const auto by_sut = stored();
  EXPECT_EQ(by_sut.at("alpha").sessions, 4);
  EXPECT_EQ(by_sut.at("beta").sessions, 4);
  EXPECT_EQ(by_sut.at("beta").complete, 4);
  EXPECT_THAT(run.err, HasSubstr("beta  AmpereOne  ok                4/4       0          0\n"));
}

TEST_F(CrossoverDriver, TheTwoSutsMeasureTheOtherSwprofileSideBySideInPairsThatSwap) {
  const FleetRun run = execute();
  ASSERT_EQ(run.status, kExitOk) << run.err;
  // Both workers met at every point: neither went on alone.
  EXPECT_THAT(run.err, Not(HasSubstr("unpaired"))) << run.err;
  EXPECT_THAT(run.err, HasSubstr("kbench: crossover: alpha and beta measure the other swprofile at the same moment\n"));
  const std::string alpha_dir = option_value(worker_args_["alpha"], "--pair-dir");
  ASSERT_FALSE(alpha_dir.empty());
  EXPECT_EQ(option_value(worker_args_["alpha"], "--pair-position"), "0");
  EXPECT_EQ(option_value(worker_args_["beta"], "--pair-position"), "1");
  EXPECT_EQ(option_value(worker_args_["beta"], "--pair-dir"), alpha_dir);
  const std::string id = option_value(worker_args_["alpha"], "--pair-id");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(option_value(worker_args_["beta"], "--pair-id"), id);
  // The fleet removes the meeting place once both have ended.
  EXPECT_FALSE(std::filesystem::exists(alpha_dir));

  const auto sessions = paired();
  ASSERT_EQ(sessions.size(), 12u);  // 3 rounds x 2 swprofiles x 2 SUTs
  std::map<std::string, std::vector<const Paired*>> by_pair;
  for (const auto& session : sessions) {
    EXPECT_TRUE(session.complete);
    EXPECT_EQ(session.unit, session.sut);
    // One run for both: each round's benchmarks shuffled alike.
    EXPECT_EQ(session.run, id);
    by_pair[session.pair].push_back(&session);
  }
  // Round r's slot s is the pair "<id>/r/s", for r < 3 and s < 2.
  std::set<std::string> expected;
  for (int round = 0; round < 3; ++round) {
    for (int slot = 0; slot < 2; ++slot) expected.insert(fmt::format("{}/{}/{}", id, round, slot));
  }
  std::set<std::string> found;
  for (const auto& [pair, members] : by_pair) found.insert(pair);
  EXPECT_EQ(found, expected);
  // Each pair: one session of each swprofile, on different SUTs, in the
  // same benchmark order.
  std::map<std::string, std::string> alpha_profile;  // pair: alpha's swprofile in it
  for (const auto& [pair, members] : by_pair) {
    ASSERT_EQ(members.size(), 2u) << pair;
    EXPECT_NE(members[0]->sut, members[1]->sut) << pair;
    EXPECT_NE(members[0]->swprofile, members[1]->swprofile) << pair;
    EXPECT_EQ(members[0]->order, members[1]->order) << pair;
    for (const auto* member : members) {
      if (member->sut == "alpha") alpha_profile[pair] = member->swprofile;
    }
  }
  // Within a round the two slots swap the swprofiles between the SUTs, and
  // alpha starts the rounds in the balanced order A B, B A, A B.
  for (int round = 0; round < 3; ++round) {
    const std::string first = alpha_profile[fmt::format("{}/{}/0", id, round)];
    const std::string second = alpha_profile[fmt::format("{}/{}/1", id, round)];
    EXPECT_NE(first, second) << "round " << round;
    EXPECT_EQ(first, round % 2 == 0 ? "A" : "B") << "round " << round;
  }
}

TEST_F(CrossoverDriver, TheTwoSidesRunEachBenchmarkInStepEvenWhenOneIsSlower) {
  slow_ = {"beta"};
  const FleetRun run = execute();
  ASSERT_EQ(run.status, kExitOk) << run.err;
  // A side starts its next benchmark only once the other has come to it,
  // that is, after the other started the one before: however slow beta is,
  // the two sides' counts of benchmark runs started never differ by more
  // than one.
  std::ifstream in(journal_);
  std::map<std::string, int> runs;
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    if (line.find(" run ") == std::string::npos) continue;
    ++runs[line.substr(0, line.find(' '))];
    EXPECT_LE(std::abs(runs["alpha"] - runs["beta"]), 1) << "at line " << lines + 1 << ": " << line;
  }
  EXPECT_EQ(runs["alpha"], 12);
  EXPECT_EQ(runs["beta"], 12);
}

TEST_F(CrossoverDriver, AWorkerWhosePartnerDiesGoesOnAloneAndFinishes) {
  // beta's worker is killed (SIGKILL, no word from it) at its 6th start: in
  // its second session, the first benchmark's agent.
  die_at_["beta"] = 6;
  const FleetRun run = execute();
  EXPECT_EQ(run.status, kExitFailure) << run.err;
  EXPECT_THAT(run.err, HasSubstr("kbench: SUT beta: stopped by signal 9"));
  // alpha noticed the death (the fleet's gone marker), not a timeout, and
  // said so once.
  const std::string notice = "alpha: kbench: paired: the other worker has ended; going on unpaired\n";
  ASSERT_THAT(run.err, HasSubstr(notice));
  EXPECT_EQ(run.err.find(notice), run.err.rfind(notice));
  const auto by_sut = stored();
  EXPECT_EQ(by_sut.at("alpha").complete, 6);
  // alpha's sessions after beta's death keep their pair: compare uses only
  // the complete ones.
  for (const auto& session : paired()) {
    if (session.sut == "alpha") {
      EXPECT_FALSE(session.pair.empty());
    }
  }
}

TEST_F(CrossoverDriver, AResumedCrossoverMeasuresEachSutAloneWithoutPairs) {
  // beta stops at its 6th start: its second session begun, not finished.
  const FleetRun run = resume_beta_after_failing_at(6);
  EXPECT_EQ(run.status, kExitOk) << run.err;
  EXPECT_EQ(option_value(worker_args_["beta"], "--pair-dir"), "");
  EXPECT_EQ(stored().at("beta").complete, 6);
  // The sessions begun under the pairing keep their pairs; those the resume
  // began have none.
  int unpaired = 0;
  for (const auto& session : paired()) {
    if (session.sut == "beta" && session.pair.empty()) ++unpaired;
  }
  EXPECT_EQ(unpaired, 4);
}

}  // namespace
}  // namespace kbench
