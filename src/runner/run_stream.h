#pragma once
// The records of one `kbench-agent run`, checked as they arrive against what
// the controller asked for and the benchmark's catalogue entry. A repeat is
// handed on to be stored only when its repeat_end closes a complete, valid
// repeat; at the first fault the stream is broken: the repeat in flight is
// dropped, everything after is ignored, and the fault is the one reason.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/params.h"
#include "common/records.h"
#include "common/result_class.h"

namespace kbench::runner {

struct ExpectedRun {
  std::string benchmark;
  Params params;  // the effective parameters the controller computed
  std::string size;
  int warmups = 0;
  int repeats = 1;
  // The catalogue's result classes of this benchmark (at its default
  // parameters): every class the agent declares must have the unit and
  // direction of one of these. Empty: no catalogue entry to hold it to.
  std::vector<ResultClass> catalogue_classes;
};

// Stores one complete repeat; may throw RunError (the store refused it).
using RepeatCommitter = std::function<void(int repeat, const std::vector<records::Sample>& samples)>;

// Keeps the run's kernel profile (`--kernel-profile`); may throw RunError.
using ProfileCommitter = std::function<void(const records::KernelProfile& profile)>;

class RunStream {
 public:
  // Without `keep_profile` a kernel_profile record is checked and dropped.
  RunStream(ExpectedRun expected, RepeatCommitter commit, ProfileCommitter keep_profile = {});

  // One record line as invoke_agent hands it on.
  void on_record(const nlohmann::json& record);
  void operator()(const nlohmann::json& record) { on_record(record); }
  // The agent exited by itself with status 0: a stream without its `end`
  // record (or any other unfinished business) is a fault now.
  void check_complete();

  // The first fault of the stream, in one line naming what was wrong.
  const std::optional<std::string>& fault() const { return fault_; }
  // The benchmark's own failure (its `error` record) and skip reason.
  const std::optional<std::string>& agent_error() const { return agent_error_; }
  const std::optional<std::string>& skip_reason() const { return skip_reason_; }
  bool ended() const { return end_.has_value(); }
  int repeats_committed() const { return next_repeat_; }

 private:
  void handle(const records::Record& record);
  void handle_start(const records::BenchmarkStart& start);
  void handle_sample(const records::Sample& sample);
  void handle_repeat_end(const records::RepeatEnd& end);
  void handle_end(const records::End& end);
  void handle_profile(const records::KernelProfile& profile);
  void fail(std::string reason);

  ExpectedRun expected_;
  RepeatCommitter commit_;
  ProfileCommitter keep_profile_;
  bool profile_seen_ = false;
  std::optional<records::BenchmarkStart> start_;
  std::vector<records::Sample> pending_;      // the repeat in flight
  std::set<std::string> pending_labels_;      // its result classes so far
  int next_repeat_ = 0;                       // the repeat the next sample belongs to
  std::optional<std::string> skip_reason_;
  std::optional<std::string> agent_error_;
  std::optional<records::EndStatus> end_;
  std::optional<std::string> fault_;
};

}  // namespace kbench::runner
