#include "stats/changepoint.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/fisher_f.hpp>

namespace kbench::stats {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kExactSeriesScale = 1e-9;

void check_input(std::span<const double> values, std::span<const double> weights, double penalty,
                 std::size_t min_segment) {
  if (values.size() != weights.size()) throw std::invalid_argument("change points: one weight per value");
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || !std::isfinite(weights[i]) || !(weights[i] > 0))
      throw std::invalid_argument("change points: values finite, weights finite and > 0");
  }
  if (!(penalty >= 0) || !std::isfinite(penalty)) throw std::invalid_argument("change points: penalty >= 0");
  if (min_segment < 1) throw std::invalid_argument("change points: min_segment >= 1");
}

// Segment costs in O(1) from prefix sums of w, w y and w y^2. The values are
// centred on their weighted mean first and summed in long double, so the
// difference WYY - WY^2 / W loses little to cancellation.
class SegmentCosts {
 public:
  SegmentCosts(std::span<const double> values, std::span<const double> weights)
      : w_(values.size() + 1, 0), wy_(values.size() + 1, 0), wyy_(values.size() + 1, 0) {
    long double total_w = 0, total_wy = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      total_w += weights[i];
      total_wy += static_cast<long double>(weights[i]) * values[i];
    }
    const long double centre = values.empty() ? 0 : total_wy / total_w;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const long double y = values[i] - centre;
      w_[i + 1] = w_[i] + weights[i];
      wy_[i + 1] = wy_[i] + weights[i] * y;
      wyy_[i + 1] = wyy_[i] + weights[i] * y * y;
    }
  }
  double operator()(std::size_t begin, std::size_t end) const {
    const long double w = w_[end] - w_[begin];
    const long double wy = wy_[end] - wy_[begin];
    const long double cost = (wyy_[end] - wyy_[begin]) - wy * wy / w;
    return static_cast<double>(std::max(cost, 0.0L));
  }

 private:
  std::vector<long double> w_, wy_, wyy_;
};

Segmentation backtrack(const std::vector<std::size_t>& last_change, const std::vector<double>& best, std::size_t n) {
  Segmentation out;
  out.penalised_cost = best[n];
  for (std::size_t t = n; last_change[t] > 0; t = last_change[t]) out.change_points.push_back(last_change[t]);
  std::reverse(out.change_points.begin(), out.change_points.end());
  return out;
}

}  // namespace

double mean_segment_cost(std::span<const double> values, std::span<const double> weights, std::size_t begin,
                         std::size_t end) {
  if (end <= begin || end > values.size() || values.size() != weights.size()) return kNaN;
  // Two passes: the weighted mean, then the squares about it.
  long double w = 0, wy = 0;
  for (std::size_t i = begin; i < end; ++i) {
    w += weights[i];
    wy += static_cast<long double>(weights[i]) * values[i];
  }
  const long double mean = wy / w;
  long double cost = 0;
  for (std::size_t i = begin; i < end; ++i) cost += weights[i] * (values[i] - mean) * (values[i] - mean);
  return static_cast<double>(cost);
}

// F(t): the least penalised cost of points [0, t), a segmentation's cost
// counting `penalty` once per segment (F(0) = -penalty, as in Killick et al.,
// so a series of one segment pays none). Candidate last change points s are
// kept in order; after F(t) is known, s with F(s) + C(s, t) > F(t) can never
// beat t as the last change of any later end T (C(s, T) >= C(s, t) + C(t, T)),
// but only ends T >= t + min_segment can use t: the pruned s stays a
// candidate until then, which keeps the minimum segment length exact.
Segmentation pelt_mean_changes(std::span<const double> values, std::span<const double> weights, double penalty,
                               std::size_t min_segment) {
  check_input(values, weights, penalty, min_segment);
  const std::size_t n = values.size();
  const SegmentCosts cost(values, weights);
  std::vector<double> best(n + 1, kInfinity);
  std::vector<std::size_t> last_change(n + 1, 0);
  best[0] = -penalty;
  struct Candidate {
    std::size_t start;
    std::size_t pruned_at;  // the end t whose F(t) beat it; npos: not yet
  };
  constexpr std::size_t kNotPruned = std::numeric_limits<std::size_t>::max();
  std::vector<Candidate> candidates{{0, kNotPruned}};
  for (std::size_t t = min_segment; t <= n; ++t) {
    if (t >= 2 * min_segment) candidates.push_back({t - min_segment, kNotPruned});
    for (const Candidate& c : candidates) {
      if (t - c.start < min_segment || !std::isfinite(best[c.start])) continue;
      const double total = best[c.start] + cost(c.start, t) + penalty;
      if (total < best[t]) {
        best[t] = total;
        last_change[t] = c.start;
      }
    }
    if (!std::isfinite(best[t])) continue;
    std::vector<Candidate> kept;
    kept.reserve(candidates.size());
    for (Candidate c : candidates) {
      if (c.pruned_at == kNotPruned && std::isfinite(best[c.start]) &&
          best[c.start] + cost(c.start, t) > best[t]) {
        c.pruned_at = t;
      }
      // The ends that may still use c are those before pruned_at + min_segment.
      if (c.pruned_at == kNotPruned || t + 1 < c.pruned_at + min_segment) kept.push_back(c);
    }
    candidates = std::move(kept);
  }
  if (n < 2 * min_segment) {
    Segmentation whole;
    whole.penalised_cost = n == 0 ? 0 : cost(0, n);
    return whole;
  }
  return backtrack(last_change, best, n);
}

Segmentation optimal_partitioning(std::span<const double> values, std::span<const double> weights, double penalty,
                                  std::size_t min_segment) {
  check_input(values, weights, penalty, min_segment);
  const std::size_t n = values.size();
  if (n < 2 * min_segment) {
    Segmentation whole;
    whole.penalised_cost = n == 0 ? 0 : mean_segment_cost(values, weights, 0, n);
    return whole;
  }
  std::vector<double> best(n + 1, kInfinity);
  std::vector<std::size_t> last_change(n + 1, 0);
  best[0] = -penalty;
  for (std::size_t t = min_segment; t <= n; ++t) {
    for (std::size_t s = 0; s + min_segment <= t; ++s) {
      if (!std::isfinite(best[s])) continue;
      const double total = best[s] + mean_segment_cost(values, weights, s, t) + penalty;
      if (total < best[t]) {
        best[t] = total;
        last_change[t] = s;
      }
    }
  }
  return backtrack(last_change, best, n);
}

TrendNoise trend_noise(const std::vector<std::vector<double>>& session_means_per_point) {
  TrendNoise noise;
  const std::size_t n = session_means_per_point.size();
  if (n < kTrendMinPoints) {
    noise.reason = "needs at least " + std::to_string(kTrendMinPoints) + " swprofiles for a noise estimate";
    return noise;
  }
  double within_sum = 0;
  double mean_inverse_sessions = 0;
  for (const auto& sessions : session_means_per_point) {
    if (sessions.empty()) {
      noise.reason = "a swprofile has no session of this row";
      return noise;
    }
    std::vector<double> logs;
    for (const double mean : sessions) {
      if (!(mean > 0) || !std::isfinite(mean)) {
        noise.reason = "a session mean <= 0: no log scale";
        return noise;
      }
      logs.push_back(std::log(mean));
    }
    const Summary summary = summarize(logs);
    noise.means.push_back(summary.mean);
    mean_inverse_sessions += 1.0 / static_cast<double>(logs.size()) / static_cast<double>(n);
    if (logs.size() >= 2) {
      within_sum += summary.stddev * summary.stddev * static_cast<double>(logs.size() - 1);
      noise.within_df += static_cast<double>(logs.size() - 1);
    }
  }
  if (noise.within_df > 0) noise.within = within_sum / noise.within_df;
  // Successive differences of a segment's points have variance 2 v; their
  // median absolute deviation (1.4826 x MAD for a normal) ignores the few
  // differences that straddle a step.
  std::vector<double> differences;
  for (std::size_t k = 1; k < n; ++k) differences.push_back(noise.means[k] - noise.means[k - 1]);
  std::vector<double> sorted = differences;
  std::sort(sorted.begin(), sorted.end());
  const double median = summarize(sorted).median;
  std::vector<double> deviations;
  for (double d : differences) deviations.push_back(std::abs(d - median));
  std::sort(deviations.begin(), deviations.end());
  double scale = 1.4826 * summarize(deviations).median;
  const bool moves = std::any_of(differences.begin(), differences.end(), [](double d) { return d != 0; });
  if (scale == 0 && moves) {
    // More than half of the successive differences are exactly the same (a
    // deterministic row, a count or a size: 100 100 100 110 110 110), so
    // their MAD is 0 however large the steps, and the points that do not
    // move have no noise at all. Every move beyond rounding is then a
    // change: the scale is set to one part per billion (of a log mean),
    // far above a double's rounding of it and far below any change a
    // benchmark shows. The refit finds no noise in such segments and keeps
    // this segmentation.
    scale = kExactSeriesScale;
  }
  const double point_variance = scale * scale / 2;
  const double within = std::isnan(noise.within) ? 0.0 : noise.within;
  noise.between = std::isnan(noise.within) ? point_variance : std::max(0.0, point_variance - within * mean_inverse_sessions);
  for (const auto& sessions : session_means_per_point) {
    noise.variances.push_back(noise.between + within / static_cast<double>(sessions.size()));
  }
  if (!std::all_of(noise.variances.begin(), noise.variances.end(), [](double v) { return v > 0 && std::isfinite(v); })) {
    noise.reason = "no noise estimate: the swprofiles' means do not vary";
    return noise;
  }
  noise.valid = true;
  return noise;
}

double trend_penalty(double base, double df) {
  if (!(df >= 1)) return kInfinity;
  // P(chi2_1 > base) is the per-split false-alarm level with a known noise;
  // the same tail of F(1, df) is the split statistic's with a noise estimated
  // on df degrees of freedom.
  const double level = boost::math::cdf(boost::math::chi_squared_distribution<double>(1), base);
  return boost::math::quantile(boost::math::fisher_f_distribution<double>(1, df), level);
}

namespace {

// The swprofile-level variance refitted to a segmentation: the points'
// squared deviations from their segment's mean over n - segments, less the
// sessions' share, as trend_noise splits the MAD estimate.
bool refit_noise(TrendNoise& noise, const std::vector<std::vector<double>>& session_means_per_point,
                 const std::vector<std::size_t>& change_points) {
  const std::size_t n = noise.means.size();
  const std::size_t segments = change_points.size() + 1;
  if (n < segments + 2) return false;
  double squares = 0, mean_inverse_sessions = 0;
  std::size_t begin = 0;
  for (std::size_t s = 0; s < segments; ++s) {
    const std::size_t end = s < change_points.size() ? change_points[s] : n;
    const Summary segment = summarize(std::span(noise.means).subspan(begin, end - begin));
    for (std::size_t k = begin; k < end; ++k) squares += (noise.means[k] - segment.mean) * (noise.means[k] - segment.mean);
    begin = end;
  }
  for (const auto& sessions : session_means_per_point) mean_inverse_sessions += 1.0 / sessions.size() / n;
  const double point_variance = squares / static_cast<double>(n - segments);
  const double within = std::isnan(noise.within) ? 0.0 : noise.within;
  const double between = std::isnan(noise.within) ? point_variance : std::max(0.0, point_variance - within * mean_inverse_sessions);
  std::vector<double> variances;
  for (const auto& sessions : session_means_per_point) variances.push_back(between + within / sessions.size());
  if (!std::all_of(variances.begin(), variances.end(), [](double v) { return v > 0 && std::isfinite(v); })) return false;
  noise.between = between;
  noise.variances = std::move(variances);
  return true;
}

}  // namespace

TrendChanges detect_trend_changes(const std::vector<std::vector<double>>& session_means_per_point,
                                  std::size_t min_segment, double penalty_factor) {
  TrendChanges out;
  out.noise = trend_noise(session_means_per_point);
  if (!out.noise.valid) {
    out.reason = out.noise.reason;
    return out;
  }
  const std::size_t n = out.noise.means.size();
  out.base_penalty = penalty_factor * std::log(static_cast<double>(n));
  // Segment with the MAD noise, refit the noise to the segments, segment
  // again, until the segmentation stays (a few rounds; capped).
  std::vector<std::size_t> previous{n};  // no segmentation has a change point at n
  for (int round = 0; round < 10; ++round) {
    std::vector<double> weights;
    for (double v : out.noise.variances) weights.push_back(1.0 / v);
    out.noise_df = static_cast<double>(n - 1 - (round == 0 ? 0 : previous.size()));
    out.penalty = trend_penalty(out.base_penalty, out.noise_df);
    out.segmentation = pelt_mean_changes(out.noise.means, weights, out.penalty, min_segment);
    if (out.segmentation.change_points == previous) break;
    previous = out.segmentation.change_points;
    if (!refit_noise(out.noise, session_means_per_point, previous)) break;
  }
  out.valid = true;
  return out;
}

}  // namespace kbench::stats
