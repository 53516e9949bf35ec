#pragma once
// Cycle-counter calibration against CLOCK_MONOTONIC and the cost of the
// timer itself, so that benchmarks can convert ticks to ns and subtract the
// bracket's own cost.
#include <cstdint>
#include <optional>

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
};

// The cost of an empty begin()/end() bracket on the calling CPU. The mode is
// used, not the mean: interrupts inflate a few brackets by orders of
// magnitude, while the mode is the cost every undisturbed bracket pays.
TimerOverhead measure_timer_overhead(std::uint64_t pairs = 200000);

// CLOCK_MONOTONIC in seconds.
double monotonic_seconds();

}  // namespace kbench::timing
