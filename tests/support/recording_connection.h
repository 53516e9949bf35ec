#pragma once
// A SUT connection for executor tests: the real agent on this machine (the
// selftest/* benchmarks with KBENCH_SELFTEST=1), with every start written
// down as "<side> <agent command>", where the side is the value the
// swprofile's wrapper `env KBENCH_TEST_SIDE=<side>` sets. It can also refuse
// its n-th start as an unreachable SUT would, so a test can leave a plan
// half done and resume it, or end it with a chosen exit status. Header-only,
// shared by the test binaries.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "sut/connection.h"
#include "support/test_paths.h"

namespace kbench::testing {

class RecordingConnection final : public sut::Connection {
 public:
  RecordingConnection() : inner_(sut::make_local_connection(KBENCH_BINARY_DIR + "/kbench-agent")) {}

  std::string describe() const override { return "recording"; }

  sut::AgentProcess start_agent(const std::vector<std::string>& args) override {
    if (++starts_ == fail_at_start_) throw RunError("recording: the SUT went away at start " + std::to_string(starts_));
    if (starts_ == die_at_start_) kill(getpid(), SIGKILL);
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    starts.push_back(side() + " " + (args.empty() ? std::string() : args.front()) +
                     (args.size() > 2 && args.front() == "run" ? " " + args[2] : ""));
    if (!journal.empty()) std::ofstream(journal, std::ios::app) << journal_tag << " " << starts.back() << "\n";
    if (starts_ == exit_at_start_) {
      // The agent's words become arguments of a shell that ignores them.
      inner_->set_wrapper({"sh", "-c", "exit " + std::to_string(exit_status_), "sh"});
    } else {
      inner_->set_wrapper(wrapper_);
    }
    return inner_->start_agent(args);
  }

  // The `n`-th start from now (1-based) throws RunError instead of starting
  // the agent.
  void fail_at(int n) { fail_at_start_ = starts_ + n; }
  // The `n`-th start from now kills this process (SIGKILL): a worker that
  // dies without a word, as one the OOM killer took.
  void die_at(int n) { die_at_start_ = starts_ + n; }
  // The `n`-th start from now runs no agent and exits with `status`, as a
  // relay does whose lab failed the run (kExitInfrastructure).
  void exit_at(int n, int status) {
    exit_at_start_ = starts_ + n;
    exit_status_ = status;
  }

  std::string run_account_prefix() const override { return account_prefix; }

  std::vector<std::string> starts;
  std::string account_prefix;  // as a relay that names its runs (lava) has
  // Each start also appended to this file as "<journal_tag> <start>": one
  // file several processes' connections write in the order they start.
  std::string journal;
  std::string journal_tag;
  std::chrono::milliseconds delay{0};  // before each start: a slower SUT

 private:
  std::string side() const {
    for (const auto& word : wrapper_) {
      if (word.rfind("KBENCH_TEST_SIDE=", 0) == 0) return word.substr(17);
    }
    return "-";
  }

  std::unique_ptr<sut::Connection> inner_;
  int starts_ = 0;
  int fail_at_start_ = 0;
  int die_at_start_ = 0;
  int exit_at_start_ = 0;
  int exit_status_ = 0;
};

}  // namespace kbench::testing
