#include "timing/clock.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "common/errors.h"
#include "timing/cycle_counter.h"

namespace kbench::timing {

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

namespace {

struct Stamp {
  double seconds;
  std::uint64_t ticks;
};

// A (clock, counter) pair read as close together as possible: of a few
// attempts, the one whose two clock reads are nearest each other, with the
// counter attributed to their midpoint.
Stamp paired_stamp() {
  Stamp best{0, 0};
  double best_gap = INFINITY;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const double before = monotonic_seconds();
    const std::uint64_t ticks = counter::begin();
    const double after = monotonic_seconds();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = {(before + after) / 2, ticks};
    }
  }
  return best;
}

std::optional<Calibration> cached;
std::once_flag cached_once;

}  // namespace

Calibration calibrate(double window_seconds) {
  constexpr int kWindows = 3;
  std::vector<double> rates;
  for (int i = 0; i < kWindows; ++i) {
    const Stamp start = paired_stamp();
    // Spinning, not sleeping: the CPU stays awake, as it is while benchmarks run.
    while (monotonic_seconds() - start.seconds < window_seconds) {
    }
    const Stamp stop = paired_stamp();
    const double seconds = stop.seconds - start.seconds;
    if (stop.ticks <= start.ticks || seconds <= 0) {
      throw RunError(std::string("cycle counter ") + counter::kName +
                     " does not advance with CLOCK_MONOTONIC");
    }
    rates.push_back(double(stop.ticks - start.ticks) / seconds);
  }
  std::sort(rates.begin(), rates.end());
  Calibration result;
  result.ticks_per_second = rates[rates.size() / 2];
  result.nominal_hz = double(counter::nominal_hz());
  result.seconds_measured = window_seconds * kWindows;
  if (!std::isfinite(result.ticks_per_second) || result.ticks_per_second <= 0) {
    throw RunError("cycle counter calibration gave no usable rate");
  }
  return result;
}

const Calibration& calibration() {
  std::call_once(cached_once, [] { cached = calibrate(); });
  return *cached;
}

std::optional<Calibration> calibration_if_done() { return cached; }

TimerOverhead measure_timer_overhead(std::uint64_t pairs) {
  // Small brackets are counted exactly; the rare disturbed ones only need to
  // be excluded from the mode, so they share one overflow count.
  constexpr std::uint64_t kTracked = 4096;
  std::vector<std::uint64_t> counts(kTracked, 0);
  std::uint64_t min_ticks = UINT64_MAX;
  for (std::uint64_t i = 0; i < pairs; ++i) {
    const std::uint64_t start = counter::begin();
    const std::uint64_t stop = counter::end();
    const std::uint64_t ticks = stop - start;
    min_ticks = std::min(min_ticks, ticks);
    if (ticks < kTracked) ++counts[ticks];
  }
  return summarize_timer_brackets(counts, min_ticks, pairs);
}

TimerOverhead summarize_timer_brackets(const std::vector<std::uint64_t>& counts_by_ticks, std::uint64_t min_ticks,
                                       std::uint64_t pairs) {
  TimerOverhead result;
  result.pairs = pairs;
  result.min_ticks = min_ticks;
  const auto mode = std::max_element(counts_by_ticks.begin(), counts_by_ticks.end());
  if (mode == counts_by_ticks.end() || *mode == 0) {
    // No bracket short enough to be counted (a trapping counter): the
    // minimum is the best estimate left.
    result.ticks = min_ticks;
    result.cost_ticks = double(min_ticks);
    return result;
  }
  result.ticks = std::uint64_t(mode - counts_by_ticks.begin());
  result.cost_ticks = double(result.ticks);
  if (result.ticks < kCoarseCounterTicks) {
    // The counter's step: the shortest non-zero bracket. A counter may
    // advance by more than one tick at a time (qemu-user derives
    // cntvct_el0 from a microsecond clock: 62 or 63 ticks of 62.5 MHz at
    // once); brackets of a step or two are undisturbed ones that straddled a
    // step boundary, and leaving them out would make the cost 0.
    std::uint64_t step = 1;
    for (std::uint64_t t = 1; t < counts_by_ticks.size(); ++t) {
      if (counts_by_ticks[t] > 0) {
        step = t;
        break;
      }
    }
    result.step_ticks = step;
    const std::uint64_t limit =
        std::min<std::uint64_t>(std::max(2 * result.ticks + 2, result.ticks + 2 * step), counts_by_ticks.size() - 1);
    double sum = 0, count = 0;
    for (std::uint64_t t = 0; t <= limit; ++t) {
      sum += double(t) * double(counts_by_ticks[t]);
      count += double(counts_by_ticks[t]);
    }
    result.cost_ticks = sum / count;
    result.statistic = "mean";
  }
  return result;
}

}  // namespace kbench::timing
