#include <algorithm>
#include <cmath>
#include <vector>

#include "common/median.h"
#include "stats/distributions.h"
#include "stats/stats.h"

namespace kbench::stats {

namespace detail {

double student_t_upper_tail(double t, double df) {
  if (std::isnan(t) || std::isnan(df) || df <= 0) return kNaN;
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  if (std::isinf(df)) return normal_upper_tail(t);
  return boost::math::cdf(boost::math::complement(StudentT(df), t));
}

double normal_upper_tail(double z) {
  if (std::isnan(z)) return kNaN;
  if (std::isinf(z)) return z > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(Normal(0.0, 1.0), z));
}

Moments moments(const double* values, std::size_t count) {
  if (count == 0) return {kNaN, kNaN};
  // Neumaier-compensated sum: a sample of values near 1e12 with small spread
  // must not lose its spread to the running total.
  double sum = 0, compensation = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double v = values[i];
    const double t = sum + v;
    if (std::fabs(sum) >= std::fabs(v)) {
      compensation += (sum - t) + v;
    } else {
      compensation += (v - t) + sum;
    }
    sum = t;
  }
  const double n = static_cast<double>(count);
  double mean = (sum + compensation) / n;
  double deviation_sum = 0, squares = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double d = values[i] - mean;
    deviation_sum += d;
    squares += d * d;
  }
  mean += deviation_sum / n;
  double ssd = squares - deviation_sum * deviation_sum / n;
  if (ssd < 0) ssd = 0;
  return {mean, ssd};
}

int range_exponent(std::span<const double> a, std::span<const double> b) {
  double largest = 0;
  for (const auto values : {a, b}) {
    for (const double v : values) {
      if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
    }
  }
  if (largest == 0 || (largest >= 0x1p-256 && largest <= 0x1p256)) return 0;
  int exponent = 0;
  std::frexp(largest, &exponent);
  return exponent;
}

std::vector<double> scaled(std::span<const double> values, int exponent) {
  std::vector<double> out;
  out.reserve(values.size());
  for (const double v : values) out.push_back(std::ldexp(v, -exponent));
  return out;
}

}  // namespace detail

double student_t_quantile(double probability, double df) {
  if (std::isnan(probability) || std::isnan(df) || df <= 0 || probability < 0 ||
      probability > 1) {
    return kNaN;
  }
  if (probability == 0) return -std::numeric_limits<double>::infinity();
  if (probability == 1) return std::numeric_limits<double>::infinity();
  if (std::isinf(df)) return boost::math::quantile(detail::Normal(0.0, 1.0), probability);
  return boost::math::quantile(detail::StudentT(df), probability);
}

namespace {

// A Student-t quantile costs ~15 us; reports summarise every row of every
// profile with the same 95% quantile for small df, so those are computed once.
double ci_quantile(std::size_t df, double confidence) {
  constexpr std::size_t kCachedDf = 256;
  if (confidence == 0.95 && df < kCachedDf) {
    static const std::vector<double> table = [] {
      std::vector<double> t(kCachedDf, kNaN);
      for (std::size_t d = 1; d < kCachedDf; ++d) {
        t[d] = student_t_quantile(0.5 + 0.95 / 2, static_cast<double>(d));
      }
      return t;
    }();
    return table[df];
  }
  return student_t_quantile(0.5 + confidence / 2, static_cast<double>(df));
}

}  // namespace

double mean_ci_halfwidth(double stddev, std::size_t count, double confidence) {
  if (count < 2 || std::isnan(stddev) || stddev < 0 || !(confidence > 0 && confidence < 1)) {
    return kNaN;
  }
  const double n = static_cast<double>(count);
  return ci_quantile(count - 1, confidence) * stddev / std::sqrt(n);
}

Summary summarize(std::span<const double> values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;

  const int exponent = detail::range_exponent(values);
  const std::vector<double> in_range = exponent == 0 ? std::vector<double>() : detail::scaled(values, exponent);
  const std::span<const double> work = exponent == 0 ? values : std::span<const double>(in_range);
  const auto [mean, ssd] = detail::moments(work.data(), work.size());
  s.mean = std::ldexp(mean, exponent);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;

  s.median = median_of(std::vector<double>(values.begin(), values.end()));

  if (s.count < 2) return s;
  s.stddev = std::ldexp(std::sqrt(ssd / static_cast<double>(s.count - 1)), exponent);
  s.cv = s.stddev / std::fabs(s.mean);
  const double half = mean_ci_halfwidth(s.stddev, s.count);
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  return s;
}

bool ci95_disjoint(const Summary& a, const Summary& b) {
  // NaN bounds (fewer than 2 samples) compare false: no verdict, no mark.
  return a.ci95_high < b.ci95_low || b.ci95_high < a.ci95_low;
}

}  // namespace kbench::stats
