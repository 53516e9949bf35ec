#include "timing/bracket_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/median.h"

namespace kbench::timing {

BracketCostInCall summarize_bracket_rounds(const std::vector<BracketRound>& rounds, std::uint64_t calls_per_round) {
  BracketCostInCall result;
  result.rounds = rounds.size();
  result.calls_per_round = calls_per_round;
  if (rounds.empty()) return result;
  std::vector<double> differences, bare, bracketed;
  for (const BracketRound& round : rounds) {
    // Per round, not difference of medians: the two halves of a round ran
    // back to back under the same conditions.
    differences.push_back(round.bracketed_ticks_per_call - round.bare_ticks_per_call);
    bare.push_back(round.bare_ticks_per_call);
    bracketed.push_back(round.bracketed_ticks_per_call);
  }
  result.raw_median_ticks = median_of(differences);
  result.cost_ticks = std::max(0.0, result.raw_median_ticks);
  result.bare_ticks_per_call = median_of(bare);
  result.bracketed_ticks_per_call = median_of(bracketed);
  return result;
}

BracketCostChoice choose_bracket_cost(const BracketCostInCall& in_call, double empty_bracket_ticks) {
  BracketCostChoice choice;
  const bool measured = in_call.rounds > 0 && std::isfinite(in_call.cost_ticks) &&
                        std::isfinite(in_call.bare_ticks_per_call) && in_call.bare_ticks_per_call > 0;
  const double plausible_limit = kInCallPlausibleFactor * empty_bracket_ticks + kInCallPlausibleTicks;
  if (measured && in_call.cost_ticks < in_call.bare_ticks_per_call && in_call.cost_ticks <= plausible_limit) {
    choice.cost_ticks = in_call.cost_ticks;
    return choice;
  }
  choice.in_call = false;
  choice.cost_ticks = empty_bracket_ticks;
  // snprintf, not fmt: the static aarch64 agent links no formatting library.
  char text[320];
  if (measured && in_call.cost_ticks >= in_call.bare_ticks_per_call) {
    std::snprintf(text, sizeof text,
                  "the bracket's cost in a call measured %.1f ticks, not below the bare call's %.1f: the "
                  "calibration was disturbed (a busy machine), so the empty bracket's %.1f ticks are subtracted",
                  in_call.cost_ticks, in_call.bare_ticks_per_call, empty_bracket_ticks);
  } else if (measured) {
    std::snprintf(text, sizeof text,
                  "the bracket's cost in a call measured %.1f ticks, more than %.0fx the empty bracket's %.1f: the "
                  "calibration was disturbed (a busy machine), so the empty bracket's cost is subtracted",
                  in_call.cost_ticks, kInCallPlausibleFactor, empty_bracket_ticks);
  } else {
    std::snprintf(text, sizeof text,
                  "the bracket's cost in a call could not be measured, so the empty bracket's %.1f ticks are "
                  "subtracted",
                  empty_bracket_ticks);
  }
  choice.reason = text;
  return choice;
}

}  // namespace kbench::timing
