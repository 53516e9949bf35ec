#pragma once
// Cycle-counter calibration against CLOCK_MONOTONIC and the cost of the
// timer itself, so that benchmarks can convert ticks to ns and subtract the
// bracket's own cost.
#include <cstdint>
#include <optional>
#include <vector>

namespace kbench::timing {

struct Calibration {
  double ticks_per_second = 0;  // measured against CLOCK_MONOTONIC
  double nominal_hz = 0;        // what the architecture reports (0 on x86-64)
  double seconds_measured = 0;  // length of the calibration window

  double ticks_to_ns(double ticks) const { return ticks * 1e9 / ticks_per_second; }
};

// Measures the counter rate over `window_seconds` (a few windows, median).
// Throws RunError when the counter does not advance with CLOCK_MONOTONIC.
Calibration calibrate(double window_seconds = 0.05);

// calibrate() once per process; later calls return the same result.
const Calibration& calibration();
// The cached result if calibration() has run in this process.
std::optional<Calibration> calibration_if_done();

struct TimerOverhead {
  std::uint64_t ticks = 0;    // mode of `pairs` empty begin()/end() brackets
  std::uint64_t min_ticks = 0;
  std::uint64_t pairs = 0;
  // What benchmarks subtract: the mode, or on a coarse counter the mean of
  // the undisturbed brackets (see summarize_timer_brackets).
  double cost_ticks = 0;
  const char* statistic = "mode";  // "mode" or "mean"
  // The counter's step: 1, or on a coarse counter the shortest non-zero
  // bracket (qemu-user's cntvct_el0 advances 62 or 63 ticks at once).
  std::uint64_t step_ticks = 1;
};

// The cost of an empty begin()/end() bracket on the calling CPU.
TimerOverhead measure_timer_overhead(std::uint64_t pairs = 200000);

// Below this mode the counter is coarse: a tick is a large part of the
// bracket (arm64's generic timer runs at 19.2 MHz to 1 GHz, so an empty
// bracket of ~20 ns is 0 or 1 tick on a 25 MHz one), and the mode is off by
// up to a whole tick.
inline constexpr std::uint64_t kCoarseCounterTicks = 8;

// The bracket cost from the histogram of `pairs` empty brackets
// (counts_by_ticks[t]: how many took t ticks; longer ones are only in
// `pairs`). The mode is used, not the mean: interrupts inflate a few
// brackets by orders of magnitude, while the mode is the cost every
// undisturbed bracket pays. On a coarse counter each bracket reads 0, 1 or 2
// ticks depending on where it falls between two ticks, and the mean of those
// undisturbed brackets (up to 2 x mode + 2 ticks, or mode + 2 steps of a
// counter that advances several ticks at once) is the cost in fractions of a
// tick; the benchmarks' means, quantised alike, average out the same way.
TimerOverhead summarize_timer_brackets(const std::vector<std::uint64_t>& counts_by_ticks, std::uint64_t min_ticks,
                                       std::uint64_t pairs);

// CLOCK_MONOTONIC in seconds.
double monotonic_seconds();

}  // namespace kbench::timing
