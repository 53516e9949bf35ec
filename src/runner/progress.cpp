#include "runner/progress.h"

#include <fmt/format.h>

namespace kbench::runner {

std::string format_seconds(double seconds) {
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (seconds < 10) return fmt::format("{:.1f}s", seconds < 0 ? 0.0 : seconds);
  return fmt::format("{}s", s);
}

Progress::Progress(std::FILE* out, bool live, int total_steps) : out_(out), live_(live), total_(total_steps) {}

void Progress::step_started(const std::string& label, const std::string& benchmark, int repeats) {
  label_ = label;
  benchmark_ = benchmark;
  repeats_ = repeats;
  repeat_ = 0;
  step_started_at_ = std::chrono::steady_clock::now();
  if (!live_ && announce_starts_) {
    std::fprintf(out_, "[%d/%d] %s ...\n", done_ + 1, total_, label_.c_str());
    std::fflush(out_);
  }
  redraw();
}

void Progress::repeat_done(int repeat_index) {
  repeat_ = repeat_index + 1;
  redraw();
}

void Progress::step_finished(const std::string& result) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - step_started_at_).count();
  seconds_by_benchmark_[benchmark_] = seconds;
  seconds_all_ += seconds;
  if (auto it = pending_by_benchmark_.find(benchmark_); it != pending_by_benchmark_.end() && it->second > 0) {
    --it->second;
  }
  ++done_;
  const std::string line = fmt::format("[{}/{}] {}: {} in {}", done_, total_, label_, result, format_seconds(seconds));
  if (live_) std::fprintf(out_, "\r\033[K%s\n", line.c_str());
  else std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Progress::message(const std::string& line) {
  if (live_) std::fprintf(out_, "\r\033[K%s\n", line.c_str());
  else std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

std::chrono::seconds Progress::eta() const {
  if (done_ == 0) return std::chrono::seconds(-1);
  const double average = seconds_all_ / done_;
  double left = 0;
  for (const auto& [benchmark, pending] : pending_by_benchmark_) {
    const auto seen = seconds_by_benchmark_.find(benchmark);
    left += pending * (seen != seconds_by_benchmark_.end() ? seen->second : average);
  }
  // The step in flight has already used part of its share.
  left -= std::chrono::duration<double>(std::chrono::steady_clock::now() - step_started_at_).count();
  return std::chrono::seconds(static_cast<long>(left > 0 ? left : 0));
}

void Progress::redraw() {
  if (!live_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const auto left = eta();
  std::fprintf(out_, "\r\033[K[%d/%d] %s  repeat %d/%d  elapsed %s  ETA %s", done_ + 1, total_, label_.c_str(),
               repeat_, repeats_, format_seconds(elapsed).c_str(),
               left.count() < 0 ? "?" : format_seconds(static_cast<double>(left.count())).c_str());
  std::fflush(out_);
}

}  // namespace kbench::runner
