// The paired test (src/stats/paired.cpp) against statsmodels' OLS and
// scipy's one-sample t-test. The reference values were computed once with
// /usr/bin/python3 (statsmodels 0.13.5, scipy 1.10) by:
//
//   import numpy as np, statsmodels.api as sm, scipy.stats as st
//   def ols(d, s, conf=0.95):
//       f = sm.OLS(np.array(d), sm.add_constant(np.array(s, float))).fit()
//       lo, hi = f.conf_int(alpha=1-conf)[0]
//       print(f.params[0], f.params[1], f.bse[0], f.df_resid, f.tvalues[0], f.pvalues[0],
//             np.expm1(lo)*100, np.expm1(hi)*100)
//   def one(d, conf=0.95):
//       t = st.ttest_1samp(d, 0); m = np.mean(d); se = st.sem(d); df = len(d)-1
//       lo, hi = st.t.interval(conf, df, loc=m, scale=se)
//       print(m, se, df, t.statistic, t.pvalue, np.expm1(lo)*100, np.expm1(hi)*100)
//   ols([0.081, 0.062, 0.095, 0.059, 0.088, 0.071, 0.079], [1,-1,1,-1,1,-1,1])
//   ols([0.081, 0.062, 0.095, 0.059, 0.088, 0.071, 0.079], [1,-1,1,-1,1,-1,1], 0.9)
//   ols([0.01, -0.02, 0.015, 0.03, -0.005], [1,1,-1,1,-1])
//   ols([0.004, -0.003, 0.011], [1,-1,1])
//   one([0.05, 0.07, 0.04, 0.065])
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stats/paired.h"

namespace {

namespace st = kbench::stats;

constexpr double kTolerance = 1e-9;

void expect_relative(double actual, double expected) {
  EXPECT_NEAR(actual, expected, kTolerance * std::max(1.0, std::abs(expected))) << "expected " << expected;
}

struct Reference {
  double delta, beta, se, df, t, p, ci_low_pct, ci_high_pct;
};

void expect_matches(const st::PairedTest& r, const Reference& ref) {
  ASSERT_TRUE(r.valid) << r.reason;
  expect_relative(r.log_change, ref.delta);
  if (std::isnan(ref.beta)) {
    EXPECT_TRUE(std::isnan(r.unit_effect));
  } else {
    expect_relative(r.unit_effect, ref.beta);
  }
  expect_relative(r.standard_error, ref.se);
  EXPECT_EQ(r.df, ref.df);
  expect_relative(r.statistic, ref.t);
  expect_relative(r.p_value, ref.p);
  expect_relative(r.ci_low_pct, ref.ci_low_pct);
  expect_relative(r.ci_high_pct, ref.ci_high_pct);
}

const std::vector<double> kSwapped = {0.081, 0.062, 0.095, 0.059, 0.088, 0.071, 0.079};
const std::vector<int> kAlternating = {1, -1, 1, -1, 1, -1, 1};

TEST(PairedTest, UnitsSwappingEveryPairMatchStatsmodelsOls) {
  const auto r = st::paired_test(kSwapped, kAlternating);
  EXPECT_TRUE(r.unit_term);
  EXPECT_EQ(r.pairs, 7u);
  expect_matches(r, {0.07487499999999998, 0.010875000000000001, 0.0026277763096072943, 5.0, 28.49367342503731,
                     9.973495621695078e-07, 7.049385202935741, 8.505417221213643});
}

TEST(PairedTest, TheConfidenceSetsTheInterval) {
  expect_matches(st::paired_test(kSwapped, kAlternating, 0.9),
                 {0.07487499999999998, 0.010875000000000001, 0.0026277763096072943, 5.0, 28.49367342503731,
                  9.973495621695078e-07, 7.205771907898713, 8.347134655192514});
  const auto r = st::paired_test(kSwapped, kAlternating);
  const auto ci = st::paired_change_ci(r, 0.9);
  ASSERT_TRUE(ci.valid);
  expect_relative(ci.low, 7.205771907898713);
  expect_relative(ci.high, 8.347134655192514);
}

TEST(PairedTest, UnbalancedSwapsMatchStatsmodelsOls) {
  expect_matches(st::paired_test(std::vector<double>{0.01, -0.02, 0.015, 0.03, -0.005}, std::vector<int>{1, 1, -1, 1, -1}),
                 {0.005833333333333334, 0.0008333333333333348, 0.010092167846991639, 3.0, 0.5780059766913394,
                  0.6037909609559919, -2.5942019564661005, 3.868045637721592});
}

TEST(PairedTest, ThreePairsWithBothSignsLeaveOneDf) {
  expect_matches(st::paired_test(std::vector<double>{0.004, -0.003, 0.011}, std::vector<int>{1, -1, 1}),
                 {0.0022499999999999994, 0.005250000000000002, 0.003031088913245535, 1.0, 0.7423074889580901,
                  0.5934802716263395, -3.561398720021306, 4.160587863393704});
}

TEST(PairedTest, OneSignIsAOneSampleTTestAsScipys) {
  const auto r = st::paired_test(std::vector<double>{0.05, 0.07, 0.04, 0.065}, std::vector<int>{-1, -1, -1, -1});
  EXPECT_FALSE(r.unit_term);
  expect_matches(r, {0.05625, st::kNaN, 0.006884463184107629, 3, 8.170571691028831, 0.0038350925474836275,
                     3.4937010635409367, 8.129504058002098});
}

TEST(PairedTest, TooFewPairsOrNoSpreadAreNotTested) {
  const auto two = st::paired_test(std::vector<double>{0.01, 0.02}, std::vector<int>{1, 1});
  EXPECT_FALSE(two.valid);
  EXPECT_NE(two.reason.find("at least 3 pairs"), std::string::npos) << two.reason;
  const auto same = st::paired_test(std::vector<double>{0.02, 0.02, 0.02}, std::vector<int>{1, -1, 1});
  EXPECT_FALSE(same.valid);
  EXPECT_NE(same.reason.find("same change"), std::string::npos) << same.reason;
  const auto infinite = st::paired_test(std::vector<double>{0.01, INFINITY, 0.02}, std::vector<int>{1, -1, 1});
  EXPECT_FALSE(infinite.valid);
}

TEST(PairedTest, MorePairsDecideARowThatIsNotDecidedYet) {
  const auto r = st::paired_test(std::vector<double>{0.01, -0.02, 0.015, 0.03, -0.005}, std::vector<int>{1, 1, -1, 1, -1});
  // The CI -2.6 .. +3.9 % neither excludes 0 nor lies inside +-2 %; with
  // the same spread, pairs shrink it until it lies inside the margin.
  const int more = st::pairs_to_decide(r, 2.0, 0.95, 50, 0.95);
  EXPECT_GT(more, 0);
  EXPECT_LE(more, 50);
  const double half = st::student_t_quantile(0.975, r.df + more) * r.standard_error *
                      std::sqrt(5.0 / (5.0 + more));
  EXPECT_LE(std::expm1(r.log_change + half) * 100, 2.0);
  EXPECT_EQ(st::pairs_to_decide(st::paired_test(kSwapped, kAlternating), 2.0, 0.95, 50, 0.95), 0);
}

}  // namespace
