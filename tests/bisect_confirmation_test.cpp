// The A/B/A sandwich's judgement of a bisect's culprit: confirmed only when
// every row is a regression (R) in compare's verdicts on the sandwich.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/bisect_confirmation.h"

namespace {

using kbench::analysis::judge_sandwich;
using kbench::analysis::SandwichRow;
using kbench::analysis::Verdict;

TEST(BisectConfirmation, EveryRowARegressionConfirms) {
  const auto one = judge_sandwich({{"syscall/getppid:mean (ns)", Verdict::Regression, ""}});
  EXPECT_TRUE(one.confirmed);
  EXPECT_EQ(one.why, "syscall/getppid:mean (ns) a regression (R)");
  const auto two = judge_sandwich({{"a:mean (ns)", Verdict::Regression, ""}, {"b:p99 (ns)", Verdict::Regression, ""}});
  EXPECT_TRUE(two.confirmed);
  EXPECT_EQ(two.why, "every row a regression (R): a:mean (ns), b:p99 (ns)");
}

TEST(BisectConfirmation, OneRowNotARegressionDoesNotConfirm) {
  for (const Verdict other : {Verdict::Undecided, Verdict::Unchanged, Verdict::Improvement, Verdict::None}) {
    const auto verdict = judge_sandwich({{"a:mean (ns)", Verdict::Regression, ""}, {"b:mean (ns)", other, ""}});
    EXPECT_FALSE(verdict.confirmed) << static_cast<int>(other);
    EXPECT_NE(verdict.why.find("b:mean (ns)"), std::string::npos) << verdict.why;
    EXPECT_NE(verdict.why.find("a regression (R): a:mean (ns)"), std::string::npos) << verdict.why;
  }
}

TEST(BisectConfirmation, OnlyUndecidedRowsAskForMoreSessions) {
  EXPECT_TRUE(judge_sandwich({{"a:mean (ns)", Verdict::Regression, ""}, {"b:mean (ns)", Verdict::Undecided, ""}})
                  .more_sessions_may_decide);
  EXPECT_TRUE(judge_sandwich({{"a:mean (ns)", Verdict::Undecided, ""}}).more_sessions_may_decide);
  EXPECT_FALSE(judge_sandwich({{"a:mean (ns)", Verdict::Regression, ""}}).more_sessions_may_decide) << "confirmed";
  for (const Verdict decided : {Verdict::Unchanged, Verdict::Improvement, Verdict::None}) {
    const auto verdict = judge_sandwich({{"a:mean (ns)", Verdict::Undecided, ""}, {"b:mean (ns)", decided, ""}});
    EXPECT_FALSE(verdict.more_sessions_may_decide) << static_cast<int>(decided);
  }
  EXPECT_FALSE(judge_sandwich({}).more_sessions_may_decide);
}

TEST(BisectConfirmation, TheReasonNamesEachKindOfRowMostTellingFirst) {
  const auto verdict = judge_sandwich({{"u:mean (ns)", Verdict::Undecided, ""},
                                       {"s:mean (ns)", Verdict::Unchanged, ""},
                                       {"i:mean (ns)", Verdict::Improvement, ""},
                                       {"n:mean (ns)", Verdict::None, "n<2"}});
  EXPECT_FALSE(verdict.confirmed);
  EXPECT_EQ(verdict.why,
            "improved (I): i:mean (ns); unchanged: s:mean (ns); undecided (?): u:mean (ns); "
            "not tested: n:mean (ns) (n<2)");
}

TEST(BisectConfirmation, NoRowsConfirmNothing) {
  const auto verdict = judge_sandwich({});
  EXPECT_FALSE(verdict.confirmed);
  EXPECT_EQ(verdict.why, "no rows to test");
}

}  // namespace
