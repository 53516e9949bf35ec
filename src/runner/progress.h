#pragma once
// Where a plan execution is: on a terminal one live line (plan step, current
// benchmark, repeat, elapsed, ETA), off a terminal one plain line per step.
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

namespace kbench::runner {

class Progress {
 public:
  // `live`: redraw one line in place (stderr is a terminal).
  Progress(std::FILE* out, bool live, int total_steps);

  void step_started(const std::string& label, const std::string& benchmark, int repeats);
  void repeat_done(int repeat_index);
  // `result`: "3 repeats", "skipped: reason", "FAILED: reason".
  void step_finished(const std::string& result);
  void message(const std::string& line);  // a line that must not be overwritten
  // Off a terminal, also a line when a step starts ("[2/8] label ..."): a
  // fleet worker's, so its SUT's line shows what runs now.
  void announce_starts(bool on) { announce_starts_ = on; }

 private:
  void redraw();
  std::chrono::seconds eta() const;

  std::FILE* out_;
  bool live_;
  bool announce_starts_ = false;
  int total_;
  int done_ = 0;
  std::string label_;
  std::string benchmark_;
  int repeats_ = 0;
  int repeat_ = 0;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point step_started_at_;
  // Durations measured so far: per benchmark (the best guess for its next
  // session) and over all steps (for benchmarks not yet seen).
  std::map<std::string, double> seconds_by_benchmark_;
  double seconds_all_ = 0;
  std::map<std::string, int> pending_by_benchmark_;

 public:
  // The executor announces every step up front so the ETA can use them.
  void plan_step(const std::string& benchmark) { ++pending_by_benchmark_[benchmark]; }
};

std::string format_seconds(double seconds);  // "1m02s", "45s", "1h03m"

}  // namespace kbench::runner
