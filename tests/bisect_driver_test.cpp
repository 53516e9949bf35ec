// kbench bisect run's driver (app::Bisector) on a fake kernel tree
// (tests/data/fake-kernel-tree, whose Makefile "builds" by copying files) in
// a git history of five commits, one of which raises the delay the commit's
// DELAY_MS holds from 20 to 200 ms. The plan's SUT boots a kernel per agent
// run (method qemu); the test connects it through recording connections, one
// per commit's swprofile, which run the real agent on this machine
// (selftest/value-file reports DELAY_MS from the commit's checkout,
// $KBENCH_BISECT_TREE, spread by at most 1 %, no timing in it) and can
// refuse their first start as a kernel that does not come up would. Nothing
// measured is a time, so no decision depends on the machine being quiet: a
// sleep's wake-up delays on a loaded machine leave commits unsettled. What the driver promises: the commits
// measured and their order, the first bad commit named and confirmed (or
// not) by the A/B/A sandwich, and a commit whose kernel does not boot
// skipped, not fatal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/bisect.h"
#include "common/errors.h"
#include "process/git.h"
#include "store/result_store.h"
#include "support/recording_connection.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kRow = "selftest/value-file:value (ms)";

// A commit's kernel as the driver reaches it: the test's recording
// connection, which outlives the driver for the test to read. With `trees`
// given, the benchmark's n-th run reads its delay in the n-th of them (the
// last from then on) whatever commit the kernel was built from: a culprit
// whose slowdown does not come back in fresh boots, or comes back unsteadily.
class Guest final : public sut::Connection {
 public:
  Guest(std::shared_ptr<testing::RecordingConnection> recording, std::vector<std::string> trees)
      : recording_(std::move(recording)), trees_(std::move(trees)) {}
  std::string describe() const override { return recording_->describe(); }
  sut::AgentProcess start_agent(const std::vector<std::string>& args) override {
    std::vector<std::string> words;
    if (!trees_.empty() && !args.empty() && args.front() == "run") {
      words = {"env", "KBENCH_BISECT_TREE=" + trees_[std::min(runs_++, trees_.size() - 1)]};
    }
    words.insert(words.end(), wrapper_.begin(), wrapper_.end());
    recording_->set_wrapper(words);
    return recording_->start_agent(args);
  }

 private:
  std::shared_ptr<testing::RecordingConnection> recording_;
  std::vector<std::string> trees_;
  std::size_t runs_ = 0;
};

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

class BisectDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(agent_path().c_str(), X_OK), 0) << agent_path() << " is not built: the recording connections run it";
  }
  static std::string agent_path() { return KBENCH_BINARY_DIR + "/kbench-agent"; }

  // base (20 ms), c1 .. c5; `planted` (c1 .. c5) and its descendants 200 ms.
  // `kernel_profile`: the plan has every session profiled.
  void make_history(int planted, bool kernel_profile = false) {
    fs::copy(KBENCH_TEST_DATA_DIR + "/fake-kernel-tree", tree_, fs::copy_options::recursive);
    std::ofstream(tree_ / "DELAY_MS") << "20\n";
    git({"init", "-q"});
    git({"add", "-A"});
    commit("base");
    for (int i = 1; i <= 5; ++i) {
      const std::string name = "c" + std::to_string(i);
      if (i == planted) {
        std::ofstream(tree_ / "DELAY_MS") << "200\n";
        commit(name + ": the planted delay");
      } else {
        std::ofstream(tree_ / "kernel" / "syscall.c", std::ios::app) << "/* " << name << " */\n";
        commit(name + ": a comment");
      }
    }
    std::ofstream(dir_.path() / "bisect.yaml") << "sut: {name: vm, connection: {method: qemu}}\n"
                                                  "swprofiles:\n"
                                                  "  - name: fake\n"
                                                  "    build: {source: " << tree_.string() << ", config: tinyconfig}\n"
                                                  "benchmarks:\n"
                                                  "  - {name: selftest/value-file, params: {file: DELAY_MS}}\n"
                                                  "defaults: {benchmark: {warmups: 0, repeats: 4, timeout: 1m"
                                                << (kernel_profile ? ", kernel_profile: true" : "") << "}}\n";
  }

  void commit(const std::string& subject) {
    git({"-c", "user.name=kbench", "-c", "user.email=kbench@test.invalid", "commit", "-qam", subject});
    const std::string name = subject.substr(0, subject.find(':'));
    git({"tag", name});
    sha_[name] = git({"rev-parse", "HEAD"});
    label_["bisect-" + sha_[name].substr(0, 12)] = name;
    label_["bisect-confirm-" + sha_[name].substr(0, 12)] = "confirm " + name;
  }

  std::string git(const std::vector<std::string>& args) { return process::git_output(tree_.string(), args); }

  std::string profile_of(const std::string& name) const { return "bisect-" + sha_.at(name).substr(0, 12); }
  // c3 for bisect-<c3's 12 hex>, "confirm c3" for bisect-confirm-<...>.
  std::string name_of(const std::string& profile) const {
    const auto it = label_.find(profile);
    return it == label_.end() ? profile : it->second;
  }

  // kbench bisect run PLAN --good base --bad c5 --row ROW, its stdout and
  // stderr captured; every SUT connection made by connect().
  Outcome bisect() {
    app::BisectArguments arguments;
    arguments.plan_path = (dir_.path() / "bisect.yaml").string();
    arguments.good = "base";
    arguments.bad = "c5";
    arguments.rows = {kRow};
    arguments.alpha = "0.05";
    arguments.max_sessions = "8";
    arguments.store_url = store_url();
    arguments.build_cache = (dir_.path() / "build-cache").string();
    const app::BisectRequest request = app::parse_bisect_request(arguments);
    Outcome outcome;
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    try {
      app::Bisector bisector(request, [this](const plan::SutSpec&, const plan::SwprofileSpec* swprofile) {
        return connect(swprofile);
      });
      outcome.status = bisector.run();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "bisect run threw: " << e.what();
    }
    outcome.out = ::testing::internal::GetCapturedStdout();
    outcome.err = ::testing::internal::GetCapturedStderr();
    return outcome;
  }

  std::unique_ptr<sut::Connection> connect(const plan::SwprofileSpec* swprofile) {
    EXPECT_NE(swprofile, nullptr) << "a SUT that boots kernels connected without a kernel";
    const std::string name = swprofile ? swprofile->name : "";
    connected_.push_back(name_of(name));
    auto recording = std::make_shared<testing::RecordingConnection>();
    if (refuse_.count(name)) recording->fail_at(1);
    recorded_[name] = recording;
    const auto trees = delay_from_.find(name);
    return std::make_unique<Guest>(recording, trees == delay_from_.end() ? std::vector<std::string>{} : trees->second);
  }

  std::string store_url() const { return "sqlite://" + (dir_.path() / "store.db").string(); }

  // The commits whose sessions the store holds, in the order measured, a
  // name for each session.
  std::vector<std::string> measured() {
    auto store = store::open_store(store_url(), store::OpenMode::MustExist);
    auto sessions = store->list_sessions({});
    std::sort(sessions.begin(), sessions.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    std::vector<std::string> names;
    for (const auto& session : sessions) {
      names.push_back(name_of(session.swprofile));
    }
    return names;
  }

  // Runs of the same commit as one name: the search measures a commit as
  // many sessions as its decision needs.
  static std::vector<std::string> collapsed(const std::vector<std::string>& names) {
    std::vector<std::string> runs;
    for (const auto& name : names) {
      if (runs.empty() || runs.back() != name) runs.push_back(name);
    }
    return runs;
  }

  testing::ScopedEnv selftest_{"KBENCH_SELFTEST", "1"};
  // The driver asks the agent next to kbench for the catalogue.
  testing::ScopedEnv agent_{"KBENCH_AGENT", agent_path().c_str()};
  testing::TempDir dir_{"bisect-driver-test"};
  testing::ScopedEnv state_{"KBENCH_STATE_DIR", (dir_.path() / "state").c_str()};
  // The driver sets these for the agents it starts.
  testing::ScopedEnv tree_env_{"KBENCH_BISECT_TREE", nullptr};
  testing::ScopedEnv commit_env_{"KBENCH_BISECT_COMMIT", nullptr};
  fs::path tree_ = dir_.path() / "linux";
  std::map<std::string, std::string> sha_;    // c3 -> its sha
  std::map<std::string, std::string> label_;  // bisect-<12 hex> -> c3, bisect-confirm-<12 hex> -> confirm c3
  std::set<std::string> refuse_;              // swprofiles whose kernel does not come up
  std::map<std::string, std::vector<std::string>> delay_from_;  // swprofile -> the trees its runs read in turn

  // A directory whose DELAY_MS holds `ms`, for delay_from_.
  std::string delay_tree(int ms) {
    const fs::path tree = dir_.path() / ("delay-" + std::to_string(ms));
    fs::create_directories(tree);
    std::ofstream(tree / "DELAY_MS") << ms << "\n";
    return tree.string();
  }
  std::vector<std::string> connected_;
  std::map<std::string, std::shared_ptr<testing::RecordingConnection>> recorded_;
};

TEST_F(BisectDriver, MeasuresTheEndpointsAlternatedThenGitsCommitsAndConfirmsTheCulprit) {
  make_history(3);
  const Outcome outcome = bisect();
  EXPECT_EQ(outcome.status, kExitOk) << outcome.err;
  EXPECT_THAT(outcome.out, HasSubstr("first bad commit: " + sha_["c3"] +
                                     " c3: the planted delay — confirmed by A/B/A (4 sessions of the parent, 3 of "
                                     "the culprit, alternated"));
  EXPECT_THAT(outcome.out, HasSubstr("A/B/A sandwich: culprit vs parent +"));
  EXPECT_THAT(outcome.out, Not(HasSubstr("Where the kernel time went"))) << "no session was profiled";

  const std::vector<std::string> sessions = measured();
  // The endpoints a session each in turn, so drift falls on both; then the
  // commits git bisect checks out in a linear history (c2 good, c4 bad, c3
  // bad); then the sandwich, the parent's sessions around the culprit's.
  ASSERT_GE(sessions.size(), 6u);
  EXPECT_THAT(std::vector<std::string>(sessions.begin(), sessions.begin() + 6),
              ElementsAre("base", "c5", "base", "c5", "base", "c5"));
  EXPECT_THAT(collapsed(std::vector<std::string>(sessions.begin() + 6, sessions.end())),
              ElementsAre("c2", "c4", "c3", "confirm c2", "confirm c3", "confirm c2", "confirm c3", "confirm c2",
                          "confirm c3", "confirm c2"));
  for (const std::string name : {"c2", "c4", "c3"}) {
    const auto count = std::count(sessions.begin(), sessions.end(), name);
    EXPECT_GE(count, 3) << name << ": fewer sessions than --sessions";
    EXPECT_LE(count, 8) << name << ": more sessions than --max-sessions";
  }
  // One connection per commit's kernel, made when the commit is first
  // measured; the endpoints are not measured again in the search.
  EXPECT_THAT(connected_, ElementsAre("base", "c5", "c2", "c4", "c3", "confirm c2", "confirm c3"));
  // Every agent run is a boot of the commit's kernel: per session its
  // fingerprint and the benchmark (no fingerprint at the end, which would
  // come from a boot of its own).
  std::vector<std::string> per_session;
  for (auto n = std::count(sessions.begin(), sessions.end(), "c2"); n > 0; --n) {
    per_session.insert(per_session.end(), {"- fingerprint", "- run selftest/value-file"});
  }
  EXPECT_EQ(recorded_.at(profile_of("c2"))->starts, per_session);

  // The log is stored, ending with the report.
  auto store = store::open_store(store_url(), store::OpenMode::MustExist);
  const auto logs = store->logs("bisect");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].name, "base..c5");
  EXPECT_THAT(logs[0].text, HasSubstr("first bad commit: " + sha_["c3"] + " c3: the planted delay — confirmed"));
  // The user's checkout is left as it was.
  EXPECT_EQ(git({"rev-parse", "HEAD"}), sha_["c5"]);
  // (the build cache keeps a worktree of its own; the bisect's are kbench-bisect-*)
  EXPECT_THAT(git({"worktree", "list"}), Not(HasSubstr("kbench-bisect-")));
}

// The sandwich's sessions carry kernel profiles: the confirmed culprit's
// report says where its kernel time went. Whether this machine lets the
// agent sample the kernel or not, the row gets its block: the functions, or
// why there is no profile.
TEST_F(BisectDriver, AConfirmedCulpritsProfilesSayWhereTheKernelTimeWent) {
  make_history(3, true);
  const Outcome outcome = bisect();
  EXPECT_EQ(outcome.status, kExitOk) << outcome.err;
  EXPECT_THAT(outcome.out, HasSubstr("c3: the planted delay — confirmed by A/B/A"));
  EXPECT_THAT(outcome.out, HasSubstr("\n  Where the kernel time went (kernel profiles: "));
  EXPECT_THAT(outcome.out, HasSubstr("\n    selftest/value-file (R) in bisect-confirm-" + sha_["c3"].substr(0, 12) +
                                     ": "));
  EXPECT_THAT(outcome.out, HasSubstr("bisect-confirm-" + sha_["c2"].substr(0, 12) + ": 4 sessions"))
      << "the parent's four sandwich sessions, not more";
  // Where the agent could sample, the functions are listed, and kfunc/ has
  // no workload for selftest/value-file: said, and no session spent on it.
  if (outcome.out.find("the functions that gained the most share") != std::string::npos) {
    EXPECT_THAT(outcome.out, HasSubstr("Functions timed with kfunc/ on the parent and the culprit, alternated:\n"
                                       "    selftest/value-file: not timed, kfunc/ has no workload that drives its "
                                       "path\n"));
  }
  EXPECT_THAT(outcome.out, Not(HasSubstr("timing: ")));
}

TEST_F(BisectDriver, ACommitWhoseKernelDoesNotComeUpIsSkippedAndTheSearchGoesOn) {
  // c4 planted: c2, the commit git checks out first, is not next to the
  // step, so the search can do without it.
  make_history(4);
  ASSERT_EQ(git({"rev-list", "--bisect", "c5", "^base"}), sha_["c2"]);
  refuse_.insert(profile_of("c2"));
  const Outcome outcome = bisect();
  EXPECT_EQ(outcome.status, kExitOk) << outcome.err;
  EXPECT_THAT(outcome.out, HasSubstr("first bad commit: " + sha_["c4"] +
                                     " c4: the planted delay — confirmed by A/B/A"));
  EXPECT_THAT(outcome.out, HasSubstr("step 1: " + sha_["c2"].substr(0, 12) + " \"c2: a comment\""));
  EXPECT_THAT(outcome.out, HasSubstr("-> skip: the kernel did not boot as asked"));
  EXPECT_THAT(outcome.out, HasSubstr("step 1 " + sha_["c2"].substr(0, 12) + " \"c2: a comment\": skip, 0 sessions"));

  // Its one boot was refused and never tried again; nothing of it is stored
  // but the failed boot.
  EXPECT_EQ(std::count(connected_.begin(), connected_.end(), "c2"), 1);
  EXPECT_TRUE(recorded_.at(profile_of("c2"))->starts.empty()) << "the kernel that failed was started again";
  const std::vector<std::string> sessions = measured();
  EXPECT_EQ(std::count(sessions.begin(), sessions.end(), "c2"), 0);
  auto store = store::open_store(store_url(), store::OpenMode::MustExist);
  std::vector<std::string> failed;
  for (const auto& boot : store->list_boots("", "")) {
    if (!boot.ok) failed.push_back(name_of(boot.swprofile));
  }
  EXPECT_THAT(failed, ElementsAre("c2"));
  // The search went on to the commits beside the step and measured them.
  EXPECT_GE(std::count(sessions.begin(), sessions.end(), "c3"), 3);
  EXPECT_GE(std::count(sessions.begin(), sessions.end(), "c4"), 3);
}

TEST_F(BisectDriver, ACulpritWhoseSlowdownDoesNotComeBackInTheSandwichIsNotConfirmed) {
  make_history(3);
  // The sandwich's boots of c3 report 2 ms, a tenth of its parent's: the
  // fresh sessions contradict the search.
  delay_from_["bisect-confirm-" + sha_["c3"].substr(0, 12)] = {delay_tree(2)};
  const Outcome outcome = bisect();
  EXPECT_EQ(outcome.status, kExitFailure) << outcome.err;
  // An improvement decides at the first look: no session is added.
  EXPECT_THAT(outcome.out, HasSubstr("first bad commit: " + sha_["c3"] +
                                     " c3: the planted delay — NOT confirmed: A/B/A (4 sessions of the parent, 3 "
                                     "of the culprit, alternated; look 1 of 6, compare at false discovery rate "
                                     "0.00833 = alpha 0.05 / 6 looks): improved (I): " + kRow));
  EXPECT_THAT(outcome.out, Not(HasSubstr("confirmed by A/B/A")));
  const std::vector<std::string> sessions = measured();
  EXPECT_EQ(std::count(sessions.begin(), sessions.end(), "confirm c3"), 3);
  EXPECT_EQ(std::count(sessions.begin(), sessions.end(), "confirm c2"), 4);
}

// The culprit's first sandwich session reads its parent's delay, the rest
// the planted one: undecided at the first look, the sandwich grows by C P
// until the regression is decided, the parent's sessions still around the
// culprit's.
TEST_F(BisectDriver, AnUndecidedSandwichGrowsUntilItDecides) {
  make_history(3);
  delay_from_["bisect-confirm-" + sha_["c3"].substr(0, 12)] = {delay_tree(20), delay_tree(200)};
  const Outcome outcome = bisect();
  EXPECT_EQ(outcome.status, kExitOk) << outcome.err;
  EXPECT_THAT(outcome.out, HasSubstr("c3: the planted delay — confirmed by A/B/A"));
  EXPECT_THAT(outcome.out, HasSubstr("confirmation: look 1 of 6 (4 sessions of the parent, 3 of the culprit): "
                                     "undecided (?): " + std::string(kRow)));
  EXPECT_THAT(outcome.out, Not(HasSubstr("look 1 of 6, compare"))) << "confirmed at the first look";
  const std::vector<std::string> sessions = measured();
  const auto culprit = std::count(sessions.begin(), sessions.end(), "confirm c3");
  const auto parent = std::count(sessions.begin(), sessions.end(), "confirm c2");
  EXPECT_GT(culprit, 3);
  EXPECT_LE(culprit, 8) << "--confirm-max-sessions";
  EXPECT_EQ(parent, culprit + 1);
  const auto first = std::find(sessions.begin(), sessions.end(), "confirm c2");
  std::vector<std::string> expected;
  for (auto i = 0; i < culprit; ++i) expected.insert(expected.end(), {"confirm c2", "confirm c3"});
  expected.push_back("confirm c2");
  EXPECT_EQ(std::vector<std::string>(first, sessions.end()), expected);
  EXPECT_THAT(outcome.out, HasSubstr(fmt::format("look {} of 6, compare at false discovery rate 0.00833", culprit - 2)));
}

// A culprit that reads the planted and the parent's delay in turn stays
// undecided: the sandwich stops at --confirm-max-sessions, NOT confirmed.
TEST_F(BisectDriver, ASandwichUndecidedAtItsLastLookIsNotConfirmed) {
  make_history(3);
  std::vector<std::string> unsteady;
  for (int i = 0; i < 10; ++i) unsteady.push_back(delay_tree(i % 2 == 0 ? 200 : 20));
  delay_from_["bisect-confirm-" + sha_["c3"].substr(0, 12)] = unsteady;
  const Outcome outcome = bisect();
  EXPECT_EQ(outcome.status, kExitFailure) << outcome.err;
  EXPECT_THAT(outcome.out, HasSubstr("c3: the planted delay — NOT confirmed: A/B/A (9 sessions of the parent, 8 "
                                     "of the culprit, alternated; look 6 of 6, compare at false discovery rate "
                                     "0.00833 = alpha 0.05 / 6 looks): undecided (?): " + std::string(kRow)));
  const std::vector<std::string> sessions = measured();
  EXPECT_EQ(std::count(sessions.begin(), sessions.end(), "confirm c3"), 8);
  EXPECT_EQ(std::count(sessions.begin(), sessions.end(), "confirm c2"), 9);
}

}  // namespace
}  // namespace kbench
