#include "timing/bracket_cost.h"

#include <algorithm>

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

}  // namespace kbench::timing
