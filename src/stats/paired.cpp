#include "stats/paired.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "stats/distributions.h"

namespace kbench::stats {

PairedTest paired_test(std::span<const double> log_ratios, std::span<const int> unit_signs, double confidence) {
  PairedTest r;
  r.pairs = log_ratios.size();
  if (unit_signs.size() != log_ratios.size()) {
    r.reason = "a unit sign per pair is needed";
    return r;
  }
  for (const double d : log_ratios) {
    if (!std::isfinite(d)) {
      r.reason = "a pair's log ratio is not finite";
      return r;
    }
  }
  // The two signs' pairs apart: with s = +-1 the OLS fit is delta + beta =
  // mean of the + pairs and delta - beta = mean of the - pairs, and the
  // residuals are each pair's deviation from its sign's mean.
  std::vector<double> plus, minus;
  for (std::size_t i = 0; i < log_ratios.size(); ++i) (unit_signs[i] > 0 ? plus : minus).push_back(log_ratios[i]);
  r.unit_term = !plus.empty() && !minus.empty();
  const double parameters = r.unit_term ? 2 : 1;
  if (r.pairs < 3 || static_cast<double>(r.pairs) <= parameters) {
    r.reason = "needs at least 3 pairs, and more pairs than parameters (" + std::to_string(r.pairs) + " pairs)";
    return r;
  }
  r.df = static_cast<double>(r.pairs) - parameters;
  double residual_squares = 0;
  double variance_factor = 0;  // var(delta) = sigma^2 * variance_factor
  if (r.unit_term) {
    const auto a = detail::moments(plus.data(), plus.size());
    const auto b = detail::moments(minus.data(), minus.size());
    r.log_change = (a.mean + b.mean) / 2;
    r.unit_effect = (a.mean - b.mean) / 2;
    residual_squares = a.sum_squared_deviations + b.sum_squared_deviations;
    variance_factor = (1.0 / static_cast<double>(plus.size()) + 1.0 / static_cast<double>(minus.size())) / 4;
  } else {
    const auto all = detail::moments(log_ratios.data(), log_ratios.size());
    r.log_change = all.mean;
    residual_squares = all.sum_squared_deviations;
    variance_factor = 1.0 / static_cast<double>(r.pairs);
  }
  r.standard_error = std::sqrt(residual_squares / r.df * variance_factor);
  if (!(r.standard_error > 0)) {
    r.reason = "every pair shows the same change: no spread to test it against";
    return r;
  }
  r.statistic = r.log_change / r.standard_error;
  r.p_value = std::min(1.0, 2 * detail::student_t_upper_tail(std::abs(r.statistic), r.df));
  r.valid = true;
  const ChangeInterval ci = paired_change_ci(r, confidence);
  r.ci_low_pct = ci.low;
  r.ci_high_pct = ci.high;
  return r;
}

ChangeInterval paired_change_ci(const PairedTest& test, double confidence) {
  if (!test.valid) return {};
  const double half = student_t_quantile(0.5 + confidence / 2, test.df) * test.standard_error;
  return {true, std::expm1(test.log_change - half) * 100, std::expm1(test.log_change + half) * 100};
}

int pairs_to_decide(const PairedTest& test, double min_change_pct, double confidence, int limit,
                    double equivalence_confidence) {
  if (!test.valid) return limit + 1;
  const double n = static_cast<double>(test.pairs);
  const double margin_low = std::log1p(-std::abs(min_change_pct) / 100);
  const double margin_high = std::log1p(std::abs(min_change_pct) / 100);
  const bool big_enough = std::abs(std::expm1(test.log_change)) * 100 >= min_change_pct;
  for (int k = 0; k <= limit; ++k) {
    PairedTest more = test;
    more.df = test.df + k;
    more.standard_error = test.standard_error * std::sqrt(n / (n + k));
    const double mark_half = student_t_quantile(0.5 + confidence / 2, more.df) * more.standard_error;
    const double equivalence_half = student_t_quantile(0.5 + equivalence_confidence / 2, more.df) * more.standard_error;
    const bool marked = big_enough && min_change_pct >= 0 && std::abs(test.log_change) > mark_half;
    const bool unchanged = min_change_pct > 0 && test.log_change - equivalence_half >= margin_low &&
                           test.log_change + equivalence_half <= margin_high;
    if (marked || unchanged) return k;
  }
  return limit + 1;
}

}  // namespace kbench::stats
