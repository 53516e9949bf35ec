#pragma once
// The paired test: sessions of two swprofiles measured at the same moment
// (docs/statistics.md, "Paired designs"), either on two machines of one
// class swapping kernels every slot (crossover) or as two guests of one host
// on two CPU sets swapping every slot (duet). Whatever the host or the
// machines do in a slot falls on both sides of its pair, so the log ratio of
// the pair carries the change without the slot's drift.
//
//   d_i = delta + beta * s_i + e_i,   e_i ~ N(0, sigma^2)
//
// d_i is log(test session mean) - log(base session mean) of pair i, s_i is
// +1 where the base side of the pair ran on the first of the pair's two
// units (sorted), -1 where it ran on the second. beta is half the units' own
// speed difference: it cancels from delta when the units swap evenly, and
// costs one df. With one sign only the units' difference cannot be told from
// the change and the model is d_i = delta + e_i (a one-sample t-test).
#include <cstddef>
#include <span>
#include <string>

#include "stats/stats.h"

namespace kbench::stats {

struct PairedTest {
  bool valid = false;
  std::string reason;            // why not valid, in words a report can print
  std::size_t pairs = 0;
  bool unit_term = false;        // both signs occur: beta is in the model
  double log_change = kNaN;      // delta, the log of the ratio test / base
  double unit_effect = kNaN;     // beta; NaN without the unit term
  double standard_error = kNaN;  // of delta
  double df = kNaN;              // pairs - 2 with the unit term, else pairs - 1
  double statistic = kNaN;
  double p_value = kNaN;         // two-sided
  double ci_low_pct = kNaN;      // CI of exp(delta) - 1 at `confidence`, percent
  double ci_high_pct = kNaN;
};

// Ordinary least squares of the model above (statsmodels' OLS of d on
// [1, s]; with one sign, scipy.stats.ttest_1samp). `unit_signs` holds +1 or
// -1 per pair. Needs more pairs than parameters and at least 3 pairs, and a
// spread of the residuals.
PairedTest paired_test(std::span<const double> log_ratios, std::span<const int> unit_signs,
                       double confidence = 0.95);

// The CI of delta at another confidence (the equivalence test of a look of
// --until-decided), as exp(bound) - 1 in percent; NaN when not valid.
ChangeInterval paired_change_ci(const PairedTest& test, double confidence);

// How many more pairs would decide it if the change and the residual spread
// stayed as they are (the pairs' counterpart of sessions_to_decide): k more
// pairs, swapping evenly, shrink the variance of delta by n / (n + k) and add
// k df. 0: decided already; limit + 1: not within limit.
int pairs_to_decide(const PairedTest& test, double min_change_pct, double confidence, int limit,
                    double equivalence_confidence);

}  // namespace kbench::stats
