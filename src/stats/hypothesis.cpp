#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "stats/distributions.h"
#include "stats/stats.h"

namespace kbench::stats {

namespace {

bool has_nan(std::span<const double> values) {
  return std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); });
}

}  // namespace

TestResult welch_t_test(std::span<const double> a, std::span<const double> b) {
  TestResult r;
  if (a.size() < 2 || b.size() < 2) {
    r.reason = "needs at least 2 samples per side";
    return r;
  }
  if (has_nan(a) || has_nan(b)) {
    r.reason = "a sample is NaN";
    return r;
  }
  // t and df do not depend on the scale: values near 1e300 or 1e-300 are
  // tested at a scale whose squares neither overflow nor vanish.
  const int exponent = detail::range_exponent(a, b);
  if (exponent != 0) return welch_t_test(detail::scaled(a, exponent), detail::scaled(b, exponent));
  const auto ma = detail::moments(a.data(), a.size());
  const auto mb = detail::moments(b.data(), b.size());
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  const double va = ma.sum_squared_deviations / (na - 1) / na;  // variance of mean a
  const double vb = mb.sum_squared_deviations / (nb - 1) / nb;
  const double difference = ma.mean - mb.mean;

  if (va == 0 && vb == 0) {
    // scipy: df is 0/0 and is replaced by 1; t = d/0.
    if (difference == 0) {
      // scipy returns NaN for t and p: nothing to test, and no mark.
      r.reason = "both sides are constant and equal";
      return r;
    }
    // Different constants: scipy gives t = +-inf, p = 0. Two sets of
    // identical measurements that disagree are a real difference.
    r.valid = true;
    r.statistic = difference > 0 ? std::numeric_limits<double>::infinity()
                                 : -std::numeric_limits<double>::infinity();
    r.df = 1;
    r.p_value = 0;
    return r;
  }

  const double total = va + vb;
  r.df = total * total / (va * va / (na - 1) + vb * vb / (nb - 1));
  r.statistic = difference / std::sqrt(total);
  r.p_value = 2 * detail::student_t_upper_tail(std::fabs(r.statistic), r.df);
  r.valid = true;
  return r;
}

namespace {

// Number of ways (out of C(m+n, m)) to reach each value 0..m*n of the U
// statistic for samples of m and n values without ties. Counting m-element
// subsets of rank positions by their sum uses only additions, so the counts
// stay exact up to 2^53 and lose no precision to cancellation beyond that.
std::vector<double> mwu_null_counts(std::size_t m, std::size_t n) {
  if (m > n) std::swap(m, n);  // the distribution is symmetric in (m, n)
  const std::size_t total = m + n;
  const std::size_t max_u = m * n;
  // counts[j][u]: j positions chosen so far, u = sum of (position - rank among chosen).
  std::vector<std::vector<double>> counts(m + 1, std::vector<double>(max_u + 1, 0.0));
  // highest[j]: largest u with a non-zero count for j chosen positions, so the
  // inner loop only visits reachable values (cost ~ m^2 * n * (m + n) / 2).
  std::vector<std::size_t> highest(m + 1, 0);
  counts[0][0] = 1;
  for (std::size_t position = 0; position < total; ++position) {
    const std::size_t top = std::min(m, position + 1);
    for (std::size_t j = top; j >= 1; --j) {
      // Choosing `position` as the j-th smallest adds position - (j - 1)
      // values of the other sample below it.
      const std::size_t shift = position - (j - 1);
      if (shift > n) continue;
      const auto& from = counts[j - 1];
      auto& to = counts[j];
      const std::size_t last = std::min(max_u, shift + highest[j - 1]);
      for (std::size_t u = shift; u <= last; ++u) to[u] += from[u - shift];
      highest[j] = std::max(highest[j], last);
    }
  }
  return counts[m];
}

// Average ranks (1-based) of the values, ties sharing the mean of their ranks.
std::vector<double> average_ranks(const std::vector<double>& values, double& tie_term,
                                  bool& has_ties) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return values[x] < values[y]; });
  std::vector<double> ranks(values.size());
  tie_term = 0;
  has_ties = false;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i + 1;
    while (j < order.size() && values[order[j]] == values[order[i]]) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k) ranks[order[k]] = rank;
    const double t = static_cast<double>(j - i);
    if (j - i > 1) has_ties = true;
    tie_term += t * t * t - t;
    i = j;
  }
  return ranks;
}

}  // namespace

TestResult mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  TestResult r;
  if (a.empty() || b.empty()) {
    r.reason = "needs at least 1 sample per side";
    return r;
  }
  if (has_nan(a) || has_nan(b)) {
    r.reason = "a sample is NaN";
    return r;
  }
  std::vector<double> pooled(a.begin(), a.end());
  pooled.insert(pooled.end(), b.begin(), b.end());
  double tie_term = 0;
  bool has_ties = false;
  const auto ranks = average_ranks(pooled, tie_term, has_ties);

  const std::size_t n1 = a.size(), n2 = b.size();
  const double m1 = static_cast<double>(n1), m2 = static_cast<double>(n2);
  const double rank_sum_a = std::accumulate(ranks.begin(), ranks.begin() + n1, 0.0);
  const double u1 = rank_sum_a - m1 * (m1 + 1) / 2;
  const double u2 = m1 * m2 - u1;
  const double u = std::max(u1, u2);
  r.statistic = u1;

  // scipy 1.10 _mwu_choose_method: asymptotic only when BOTH sides have more
  // than 8 values or there are ties (its docstring says "< 8"; the code rules).
  // Deviation: beyond kMaxExactLarger values on the large side the exact
  // distribution would cost seconds, and the normal approximation is then
  // accurate anyway, so it is used.
  constexpr std::size_t kMaxExactLarger = 2000;
  const bool exact =
      (n1 <= 8 || n2 <= 8) && std::max(n1, n2) <= kMaxExactLarger && !has_ties;
  double p;
  if (exact) {
    const auto counts = mwu_null_counts(n1, n2);
    // P(U >= u) = P(U <= m*n - u) by symmetry; summing the small tail keeps
    // tiny p-values accurate.
    const auto tail_end = static_cast<std::size_t>(m1 * m2 - u);
    double tail = 0, all = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (k <= tail_end) tail += counts[k];
      all += counts[k];
    }
    p = 2 * tail / all;
  } else {
    const double n = m1 + m2;
    const double sigma = std::sqrt(m1 * m2 / 12 * ((n + 1) - tie_term / (n * (n - 1))));
    // Continuity correction: u >= mean, so moving half a step towards it.
    const double numerator = u - m1 * m2 / 2 - 0.5;
    // sigma = 0 only when every value is tied: numerator is -0.5, z = -inf, p = 1.
    const double z = numerator / sigma;
    p = 2 * detail::normal_upper_tail(z);
  }
  r.p_value = std::clamp(p, 0.0, 1.0);
  r.valid = true;
  return r;
}

}  // namespace kbench::stats
