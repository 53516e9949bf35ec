#include <cmath>

#include "stats/distributions.h"
#include "stats/stats.h"

namespace kbench::stats {

namespace {

// Welch-Satterthwaite degrees of freedom for the sum of two independent
// variance-of-mean estimates va, vb with na - 1 and nb - 1 df.
double welch_df(double va, double na, double vb, double nb) {
  const double total = va + vb;
  return total * total / (va * va / (na - 1) + vb * vb / (nb - 1));
}

}  // namespace

// Fieller's theorem: the set of ratios rho with
//   (mean_b - rho * mean_a)^2 <= t^2 * (vb + rho^2 * va)
// where va, vb are the squared standard errors, t the Student-t quantile with
// Welch-Satterthwaite df. The interval excludes rho = 1 exactly when the
// Welch test rejects at the same level, so the CI and the mark never disagree.
ChangeInterval relative_change_ci(const Summary& a, const Summary& b, double confidence) {
  ChangeInterval ci;
  if (a.count < 2 || b.count < 2 || std::isnan(a.stddev) || std::isnan(b.stddev) ||
      std::isnan(a.mean) || std::isnan(b.mean) || a.mean == 0 ||
      !(confidence > 0 && confidence < 1)) {
    return ci;
  }
  // The ratio does not depend on the scale: means near 1e300 or 1e-300 are
  // taken to one whose squares neither overflow nor vanish.
  const double moments[] = {a.mean, b.mean, a.stddev, b.stddev};
  const int exponent = detail::range_exponent(moments);
  const double ma = std::ldexp(a.mean, -exponent), mb = std::ldexp(b.mean, -exponent);
  const double sa = std::ldexp(a.stddev, -exponent), sb = std::ldexp(b.stddev, -exponent);
  const double na = static_cast<double>(a.count), nb = static_cast<double>(b.count);
  const double va = sa * sa / na;
  const double vb = sb * sb / nb;
  if (va == 0 && vb == 0) {
    // No noise at all: the interval is the point estimate (t drops out).
    ci.valid = true;
    ci.low = ci.high = (mb - ma) / ma * 100;
    return ci;
  }
  const double t = student_t_quantile(0.5 + confidence / 2, welch_df(va, na, vb, nb));
  const double t2 = t * t;
  const double denominator = ma * ma - t2 * va;
  // mean_a is not distinguishable from 0: the ratio's interval is unbounded.
  if (!(denominator > 0)) return ci;
  const double spread = t * std::sqrt(vb * denominator + mb * mb * va);
  // rho - 1 written without subtracting 1 from rho, so a change of 1e-12 keeps
  // its digits: (ma*mb - A)/A = (ma*(mb - ma) + t^2*va)/A.
  const double centre = ma * (mb - ma) + t2 * va;
  ci.low = (centre - spread) / denominator * 100;
  ci.high = (centre + spread) / denominator * 100;
  ci.valid = true;
  return ci;
}

double noise_floor_percent(std::size_t count_a, double cv_a, std::size_t count_b, double cv_b,
                           double alpha, double power) {
  if (count_a < 2 || count_b < 2 || !(cv_a >= 0) || !(cv_b >= 0) || !(alpha > 0 && alpha < 1) ||
      !(power > 0 && power < 1)) {
    return kNaN;
  }
  const double na = static_cast<double>(count_a), nb = static_cast<double>(count_b);
  const double va = cv_a * cv_a / na, vb = cv_b * cv_b / nb;
  if (va == 0 && vb == 0) return 0.0;
  const double df = welch_df(va, na, vb, nb);
  const double z = student_t_quantile(1 - alpha / 2, df) + student_t_quantile(power, df);
  return z * std::sqrt(va + vb) * 100;
}

double noise_floor_percent(std::size_t count_per_side, double cv, double alpha, double power) {
  return noise_floor_percent(count_per_side, cv, count_per_side, cv, alpha, power);
}

double geometric_mean(std::span<const double> values) {
  double log_sum = 0;
  std::size_t count = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    if (!(v > 0)) return kNaN;
    log_sum += std::log(v);
    ++count;
  }
  if (count == 0) return kNaN;
  return std::exp(log_sum / static_cast<double>(count));
}

}  // namespace kbench::stats
