#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "common/errors.h"
#include "timing/affinity.h"
#include "timing/bracket_cost.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"
#include "timing/histogram.h"

using kbench::timing::Histogram;

namespace {

// Nearest-rank percentile of the exact data, the definition Histogram uses.
std::uint64_t exact_percentile(std::vector<std::uint64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const auto rank = std::max<std::size_t>(1, std::size_t(std::ceil(p / 100.0 * double(values.size()))));
  return values[rank - 1];
}

// Half a bucket's width relative to its lowest value: 1/256.
constexpr double kRelativeTolerance = 1.0 / 256.0;

void expect_percentiles_match(const std::vector<std::uint64_t>& values) {
  Histogram histogram;
  for (auto v : values) histogram.record(v);
  for (double p : {0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    const double exact = double(exact_percentile(values, p));
    const double approx = histogram.percentile(p);
    EXPECT_LE(std::abs(approx - exact), exact * kRelativeTolerance + 0.5)
        << "p" << p << " exact " << exact << " histogram " << approx;
  }
  const double exact_mean =
      double(std::accumulate(values.begin(), values.end(), 0.0L) / (long double)values.size());
  EXPECT_DOUBLE_EQ(histogram.mean(), exact_mean);
  EXPECT_EQ(histogram.count(), values.size());
  EXPECT_EQ(histogram.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(histogram.max(), *std::max_element(values.begin(), values.end()));
}

}  // namespace

TEST(Histogram, SmallValuesAreExact) {
  Histogram histogram;
  for (std::uint64_t v = 0; v < 200; ++v) histogram.record(v);
  EXPECT_EQ(histogram.percentile(50), 99);  // rank 100 of 0..199
  EXPECT_EQ(histogram.percentile(99), 197);
  EXPECT_EQ(histogram.percentile(100), 199);
  EXPECT_EQ(histogram.percentile(0), 0);
  EXPECT_DOUBLE_EQ(histogram.mean(), 99.5);
}

TEST(Histogram, UniformRangeMatchesExactPercentiles) {
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 1; v <= 100000; ++v) values.push_back(v);
  expect_percentiles_match(values);
}

TEST(Histogram, SkewedLatenciesWithOutliersMatchExactPercentiles) {
  // Syscall-like: a tight body near 600 ticks, a tail, and rare huge outliers
  // (interrupts, preemption); a fixed LCG keeps the data set reproducible.
  std::vector<std::uint64_t> values;
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t r = next();
    std::uint64_t v = 550 + r % 100;
    if (r % 100 == 0) v = 2000 + r % 20000;
    if (r % 5000 == 0) v = 10000000 + r % 1000000;
    values.push_back(v);
  }
  expect_percentiles_match(values);
}

TEST(Histogram, EmptyIsZeroAndHugeValuesFit) {
  Histogram histogram;
  EXPECT_EQ(histogram.percentile(99), 0);
  EXPECT_EQ(histogram.mean(), 0);
  histogram.record(UINT64_MAX);
  histogram.record(1ull << 40);
  EXPECT_EQ(histogram.max(), UINT64_MAX);
  EXPECT_NEAR(histogram.percentile(50), double(1ull << 40), double(1ull << 40) * kRelativeTolerance);
  EXPECT_NEAR(histogram.percentile(100), double(UINT64_MAX), double(UINT64_MAX) * kRelativeTolerance);
  // The sum must not wrap: the mean of the two is about 2^63.
  EXPECT_GT(histogram.mean(), double(1ull << 62));
}

TEST(Histogram, BucketsTileTheValueRange) {
  std::size_t index = 0;
  while (true) {
    const std::uint64_t lowest = Histogram::bucket_lowest(index);
    const std::uint64_t width = Histogram::bucket_width(index);
    ASSERT_EQ(Histogram::bucket_index(lowest), index);
    ASSERT_EQ(Histogram::bucket_index(lowest + (width - 1)), index);
    if (lowest + (width - 1) == UINT64_MAX) break;
    ASSERT_EQ(Histogram::bucket_index(lowest + width), index + 1);
    // Relative width bounded by 1/128 above the exact range.
    if (lowest >= 256) {
      ASSERT_LE(double(width) / double(lowest), 1.0 / 128.0);
    }
    ++index;
  }
}

TEST(Histogram, MergeEqualsRecordingEverything) {
  Histogram a, b, all;
  for (std::uint64_t v = 1; v < 5000; v += 3) {
    (v % 2 ? a : b).record(v * 7);
    all.record(v * 7);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  for (double p : {10.0, 50.0, 99.0}) EXPECT_EQ(a.percentile(p), all.percentile(p));
  a.clear();
  EXPECT_EQ(a.count(), 0u);
  EXPECT_EQ(a.percentile(50), 0);
}

TEST(Calibration, GivesPositiveFiniteRate) {
  const auto calibration = kbench::timing::calibrate(0.01);
  EXPECT_TRUE(std::isfinite(calibration.ticks_per_second));
  EXPECT_GT(calibration.ticks_per_second, 0);
  EXPECT_GT(calibration.ticks_to_ns(calibration.ticks_per_second), 0);
  // calibration() caches: the same object every time.
  EXPECT_EQ(&kbench::timing::calibration(), &kbench::timing::calibration());
  EXPECT_TRUE(kbench::timing::calibration_if_done().has_value());
}

TEST(TimerOverhead, ModeIsNotBelowTheMinimum) {
  const auto overhead = kbench::timing::measure_timer_overhead(10000);
  EXPECT_EQ(overhead.pairs, 10000u);
  EXPECT_GE(overhead.ticks, overhead.min_ticks);
}

#if defined(__x86_64__)
namespace counter = kbench::timing::counter;

TEST(CycleCounterEndRead, RdtscpOnlyWhenCpuidBit27IsSet) {
  EXPECT_EQ(counter::end_read_for(0), counter::EndRead::kLfenceRdtsc);
  EXPECT_EQ(counter::end_read_for(std::uint32_t(1) << 27), counter::EndRead::kRdtscp);
  EXPECT_EQ(counter::end_read_for(0xffffffffu), counter::EndRead::kRdtscp);
  // Every other feature present (nx, long mode, syscall), rdtscp not: qemu64.
  EXPECT_EQ(counter::end_read_for(~(std::uint32_t(1) << 27)), counter::EndRead::kLfenceRdtsc);
}

TEST(CycleCounterEndRead, NamesTheSequenceEachReadExecutes) {
  EXPECT_STREQ(counter::end_sequence_of(counter::EndRead::kRdtscp), "rdtscp; lfence");
  EXPECT_STREQ(counter::end_sequence_of(counter::EndRead::kLfenceRdtsc), "lfence; rdtsc; lfence");
  EXPECT_STREQ(counter::kBeginSequence, "lfence; rdtsc");
}

TEST(CycleCounterEndRead, ThisProcessUsesWhatThisCpuReports) {
  const auto expected = counter::end_read_for(counter::extended_features_edx());
  EXPECT_STREQ(counter::end_sequence(), counter::end_sequence_of(expected));
  EXPECT_EQ(counter::kEndUsesRdtscp, expected == counter::EndRead::kRdtscp);
  // Whichever read was chosen, it runs here without SIGILL and the TSC has advanced.
  const std::uint64_t start = counter::begin();
  EXPECT_GE(counter::end(), start);
}
#endif

TEST(Affinity, PinsToAnAllowedCpuAndRefusesOthers) {
  const auto before = kbench::timing::current_affinity();
  ASSERT_FALSE(before.empty());
  const auto pinned = kbench::timing::pin_to_cpu(before.back());
  EXPECT_EQ(pinned, std::vector<int>{before.back()});
  EXPECT_THROW(kbench::timing::pin_to_cpu(-1), kbench::InputError);
  EXPECT_THROW(kbench::timing::pin_to_cpu(100000), kbench::InputError);
}

// A constant duration read by a counter of whole steps, at a random phase:
// floor(d / step + U) steps. The mean of those readings is d; the plain median
// is a whole step; the interpolated median is within a tenth of a step.
kbench::timing::Histogram quantised(double duration_ticks, std::uint64_t step, int count) {
  kbench::timing::Histogram h;
  for (int i = 0; i < count; ++i) {
    const double phase = (i + 0.5) / count;  // evenly spread: no randomness needed
    h.record(std::uint64_t(std::floor(duration_ticks / double(step) + phase)) * step);
  }
  return h;
}

TEST(Histogram, InterpolatedMedianResolvesAFractionOfACoarseTick) {
  // arm64's 25 MHz cntvct_el0: a syscall of 5.3 ticks (212 ns) reads 5 or 6.
  for (double d : {5.0, 5.3, 5.5, 5.8}) {
    const auto h = quantised(d, 1, 10000);
    EXPECT_NEAR(h.interpolated_median(1), d, 0.1) << d;
    EXPECT_NEAR(h.mean(), d, 1e-3) << d;
  }
  EXPECT_EQ(quantised(5.3, 1, 10000).percentile(50), 5.0);  // the plain median: a whole tick off
}

TEST(Histogram, InterpolatedMedianOfASteppedCounter) {
  // qemu-user: 62 ticks a step. 31 ticks reads 0 or 62, half each; the plain
  // median is one of them, the interpolated one is 31.
  const auto h = quantised(31, 62, 10000);
  EXPECT_NEAR(h.interpolated_median(62), 31, 6.2);
  EXPECT_NEAR(quantised(100, 62, 10000).interpolated_median(62), 100, 6.2);
}

TEST(Histogram, InterpolatedMedianOfFineValuesIsTheMedian) {
  kbench::timing::Histogram h;
  for (std::uint64_t v : {200, 201, 203, 207, 250, 9000, 1000000}) h.record(v);
  EXPECT_NEAR(h.interpolated_median(1), 207, 0.5);
  EXPECT_EQ(kbench::timing::Histogram().interpolated_median(1), 0);
}

TEST(BracketCost, MedianOfTheRoundsDifferences) {
  // Eleven rounds: bracketed calls 4 ticks dearer than bare ones, one round
  // hit by an interrupt in its bracketed half (ignored by the median).
  std::vector<kbench::timing::BracketRound> rounds;
  for (int r = 0; r < 11; ++r) rounds.push_back({300.0 + r, 304.0 + r + (r == 3 ? 500 : 0)});
  const auto cost = kbench::timing::summarize_bracket_rounds(rounds, 20000);
  EXPECT_DOUBLE_EQ(cost.cost_ticks, 4.0);
  EXPECT_DOUBLE_EQ(cost.raw_median_ticks, 4.0);
  EXPECT_DOUBLE_EQ(cost.bare_ticks_per_call, 305.0);
  EXPECT_EQ(cost.rounds, 11u);
  EXPECT_EQ(cost.calls_per_round, 20000u);
}

TEST(BracketCost, ANegativeMedianIsNoiseAndGivesZero) {
  const auto cost = kbench::timing::summarize_bracket_rounds({{300.0, 299.5}, {300.0, 299.0}, {300.0, 300.2}}, 100);
  EXPECT_DOUBLE_EQ(cost.cost_ticks, 0.0);
  EXPECT_DOUBLE_EQ(cost.raw_median_ticks, -0.5);
  EXPECT_EQ(kbench::timing::summarize_bracket_rounds({}, 100).rounds, 0u);
}

TEST(BracketCost, MeasuresWhatTheBracketedHalfAddsOverTheBareBlock) {
  // An operation that costs nothing bare and whose brackets report 7 ticks
  // each: the cost in the call is 7 ticks, less a bare block of (almost) no
  // length spread over 20000 calls.
  const auto cost = kbench::timing::measure_bracket_cost_in_call(
      [](std::int64_t) {}, [](std::int64_t n) { return 7.0 * double(n); },
      kbench::timing::measure_timer_overhead(10000).cost_ticks);
  EXPECT_EQ(cost.rounds, 101u);
  EXPECT_EQ(cost.calls_per_round, 2000u);
  EXPECT_DOUBLE_EQ(cost.bracketed_ticks_per_call, 7.0);
  EXPECT_NEAR(cost.cost_ticks, 7.0, 1.0);
}

TEST(BracketCostChoice, UsesTheInCallCostWhenBelowTheBareCall) {
  const auto choice = kbench::timing::choose_bracket_cost(
      kbench::timing::summarize_bracket_rounds({{300.0, 340.0}, {302.0, 341.0}, {301.0, 343.0}}, 2000), 25.0);
  EXPECT_TRUE(choice.in_call);
  EXPECT_DOUBLE_EQ(choice.cost_ticks, 40.0);
  EXPECT_TRUE(choice.reason.empty());
}

TEST(BracketCostChoice, FallsBackToTheEmptyBracketWhenTheCalibrationWasDisturbed) {
  // The figures of a busy machine: a bracket "costing" 537 ticks around a
  // call of 207.
  const auto disturbed =
      kbench::timing::summarize_bracket_rounds({{207.0, 744.0}, {206.0, 743.0}, {208.0, 745.0}}, 2000);
  const auto choice = kbench::timing::choose_bracket_cost(disturbed, 25.0);
  EXPECT_FALSE(choice.in_call);
  EXPECT_DOUBLE_EQ(choice.cost_ticks, 25.0);
  EXPECT_NE(choice.reason.find("537.0 ticks, not below the bare call's 207.0"), std::string::npos) << choice.reason;
  // Below the bare call but far beyond two counter reads: the figures of an
  // agent beside stress-ng (2109 ticks "in the call" against an empty
  // bracket of 25, and a median call of 1851 ticks).
  const auto inflated =
      kbench::timing::summarize_bracket_rounds({{2500.0, 4609.0}, {2490.0, 4599.0}, {2510.0, 4619.0}}, 2000);
  const auto inflated_choice = kbench::timing::choose_bracket_cost(inflated, 25.0);
  EXPECT_FALSE(inflated_choice.in_call);
  EXPECT_DOUBLE_EQ(inflated_choice.cost_ticks, 25.0);
  EXPECT_NE(inflated_choice.reason.find("2109.0 ticks, more than 2x the empty bracket's 25.0"), std::string::npos)
      << inflated_choice.reason;
  // A coarse counter: the empty bracket reads 0 ticks, the in-call cost 1.9.
  const auto coarse = kbench::timing::choose_bracket_cost(
      kbench::timing::summarize_bracket_rounds({{5.0, 6.9}, {5.1, 7.0}, {4.9, 6.8}}, 2000), 0.0);
  EXPECT_TRUE(coarse.in_call) << coarse.reason;
  const auto unmeasured = kbench::timing::choose_bracket_cost(kbench::timing::summarize_bracket_rounds({}, 2000), 25.0);
  EXPECT_FALSE(unmeasured.in_call);
  EXPECT_DOUBLE_EQ(unmeasured.cost_ticks, 25.0);
  EXPECT_NE(unmeasured.reason.find("could not be measured"), std::string::npos) << unmeasured.reason;
}
