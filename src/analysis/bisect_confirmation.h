#pragma once
// Confirming a bisect's culprit: git bisect names the first bad commit from
// one bit per commit, each bit an error with probability up to alpha, so the
// answer is re-tested on sessions of its own. The culprit C and its parent P
// are measured alternately, P C P C ... P (an A/B/A sandwich: P's sessions
// surround C's, so a drift linear in time adds the same to both means), and
// every row is tested with compare's session test (build_comparison). The
// culprit is confirmed only when every row is a regression (R) there
// (docs/bisect.md). A sandwich whose rows are regressions or undecided
// grows by one session a side and is tested again, each look at alpha over
// the looks it may take, as a bisect step is.
#include <string>
#include <vector>

#include "analysis/report_model.h"

namespace kbench::analysis {

// One row's verdict in the sandwich: the culprit's sessions against the
// parent's. Verdict::None: not tested (`note` says why).
struct SandwichRow {
  std::string name;
  Verdict verdict = Verdict::None;
  std::string note;
};

struct SandwichVerdict {
  bool confirmed = false;
  // Not confirmed only for want of sessions: every row a regression (R) or
  // undecided, one at least undecided. An unchanged, improved or untested
  // row decides against the culprit, however many sessions follow.
  bool more_sessions_may_decide = false;
  // One line for the report: which rows are a regression, or, not
  // confirmed, which rows are undecided, unchanged, improved or not tested.
  std::string why;
};

SandwichVerdict judge_sandwich(const std::vector<SandwichRow>& rows);

}  // namespace kbench::analysis
