#pragma once
// What the cycle-counter bracket really adds around the code it times.
//
// An empty begin()/end() bracket (measure_timer_overhead) is a stand-in for
// the cost of the same reads around real code: their fences wait for what is
// still in flight, which differs between an empty bracket and one around a
// system call, so the two need not cost the same (on the x86-64 VM of the
// study they differ by ~1 ns; docs/benchmarks/syscall.md, "Timer-cost study").
//
// measure_bracket_cost_in_call() measures it where it is paid: the same
// operation run `calls` times bare, timed as one block, against `calls` times
// each in its own bracket, alternating over `rounds`. The bracket's cost per
// call is (mean bracketed length) - (block length / calls); the median over
// the rounds is used so a round hit by an interrupt does not move it.
//
// Many short rounds rather than a few long ones: a half of 20,000 calls is
// several milliseconds, long enough that on a busy CPU (another agent beside
// it) nearly every half is preempted and the median is too. With 2,000 calls
// a half lasts a few hundred microseconds and most halves run undisturbed;
// the total number of calls stays the same. (11 x 20,000 measured 537 ticks
// against a 207-tick call in CI's two-SUT e2e_fleet run.)
#include <cstdint>
#include <string>
#include <vector>

#include "timing/cycle_counter.h"

namespace kbench::timing {

// One round: both halves over the same number of calls, in ticks.
struct BracketRound {
  double bare_ticks_per_call = 0;       // block length / calls
  double bracketed_ticks_per_call = 0;  // mean of the per-call brackets
};

struct BracketCostInCall {
  double cost_ticks = 0;       // what a bracket adds per call: median over rounds, >= 0
  double raw_median_ticks = 0; // the median before clamping at 0 (noise can make it negative)
  double bare_ticks_per_call = 0;       // median over rounds, for the record
  double bracketed_ticks_per_call = 0;  // median over rounds
  std::uint64_t rounds = 0;
  std::uint64_t calls_per_round = 0;
};

// The summary of measured rounds (pure, unit-tested). A bracket cannot make a
// call cheaper, so a negative median (noise, or a counter too coarse to see
// the difference) gives cost 0; raw_median_ticks keeps what was measured.
BracketCostInCall summarize_bracket_rounds(const std::vector<BracketRound>& rounds, std::uint64_t calls_per_round);

// What a benchmark subtracts: the in-call cost, unless the measurement is
// implausible. A bracket is two counter reads; when it measures as costing
// more than the bare call it surrounds, the halves of the rounds were
// disturbed (a busy machine preempting them), and subtracting that figure
// would turn every call's time negative; likewise when it measures as far
// more than the empty bracket. Then the empty bracket's cost is
// subtracted instead, and `reason` says why for the session's notes.
// Two counter reads cost about as much around a call as empty: 1.1-1.2x the
// empty bracket on the x86-64 and arm64 machines studied
// (docs/benchmarks/syscall.md). A figure beyond 2x (plus 2 ticks, for a
// coarse counter where the empty bracket reads 0 or 1 tick) is a calibration
// that a busy machine disturbed, even when it stays below the bare call.
inline constexpr double kInCallPlausibleFactor = 2.0;
inline constexpr double kInCallPlausibleTicks = 2.0;
struct BracketCostChoice {
  double cost_ticks = 0;
  bool in_call = true;  // false: fell back to the empty bracket
  std::string reason;   // empty when the in-call cost is used
};
BracketCostChoice choose_bracket_cost(const BracketCostInCall& in_call, double empty_bracket_ticks);

// `bare(n)` runs the operation n times with no timing inside;
// `bracketed(n)` runs it n times, each call in its own begin()/end(), and
// returns the sum of the n bracket lengths in ticks. Both should be the very
// code the benchmark runs (not inlined copies), so that they compile alike.
// `block_bracket_ticks` (the empty bracket) is taken off the bare block, which
// is itself timed by one begin()/end().
template <typename Bare, typename Bracketed>
BracketCostInCall measure_bracket_cost_in_call(Bare bare, Bracketed bracketed, double block_bracket_ticks,
                                               std::uint64_t rounds = 101, std::uint64_t calls_per_round = 2000) {
  std::vector<BracketRound> measured;
  measured.reserve(rounds);
  // One of each first, unrecorded: caches, branch predictors, the CPU's clock.
  bare(calls_per_round);
  bracketed(calls_per_round);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    BracketRound round;
    // Alternate which half runs first, so a drift within the round (the CPU
    // clock settling) does not favour one.
    auto run_bare = [&] {
      const std::uint64_t start = counter::begin();
      bare(calls_per_round);
      const std::uint64_t stop = counter::end();
      round.bare_ticks_per_call = (double(stop - start) - block_bracket_ticks) / double(calls_per_round);
    };
    auto run_bracketed = [&] {
      round.bracketed_ticks_per_call = double(bracketed(calls_per_round)) / double(calls_per_round);
    };
    if (r % 2 == 0) {
      run_bare();
      run_bracketed();
    } else {
      run_bracketed();
      run_bare();
    }
    measured.push_back(round);
  }
  return summarize_bracket_rounds(measured, calls_per_round);
}

}  // namespace kbench::timing
