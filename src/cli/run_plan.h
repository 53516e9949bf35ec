#pragma once
// The implicit plan of `kbench run`, shared with `kbench calibrate`: the
// suite's benchmarks (or those matching --benchmark) with the command line's
// overrides, measured on the running kernel as sessions of one swprofile.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "runner/plan_executor.h"

namespace kbench::cli {

struct RunOptions {
  std::string swprofile;
  std::string suite = "default";
  std::string benchmark_glob;
  std::optional<int> warmups;
  std::optional<int> repeats;
  std::optional<int> sessions;  // --sessions N (none: the suite's)
  std::string timeout;
  std::string cpus;
  std::string sut_name;
  std::string store_url;
  bool strict = false;
  std::vector<std::string> params;  // --param key=value, for every benchmark selected
  std::optional<std::string> size;  // --size quick|default (none: the suite's)
  bool resume = false;
  // --spread: the pause between sessions; each paused session is then a run
  // of its own (plan.block), so a run teaches the run-to-run noise itself.
  std::string spread;
  bool kernel_profile = false;  // --kernel-profile: every benchmark's repeats sampled
};

struct RunDone {
  std::string store_url;
  runner::ExecResult result;
};

// Checks every input, then opens the store and measures; progress on
// stderr, the run's table on stdout, the exit status set (session_report.h).
// `session_gap`: the pause between sessions (kbench calibrate --spread).
RunDone measure_running_kernel(const RunOptions& options,
                               std::chrono::milliseconds session_gap = std::chrono::milliseconds(0));

// The command that resumes this run: the same options (they decide the
// implicit plan, which --resume checks) with the store made explicit.
std::string resume_command(const RunOptions& options, const std::string& store_url);

}  // namespace kbench::cli
