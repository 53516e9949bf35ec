#pragma once
// Change points in the mean of a series: PELT (Killick, Fearnhead & Eckley
// 2012, "Optimal detection of changepoints with a linear computational cost",
// JASA 107:1590) for a normal series with known per-point variances, and the
// noise model `kbench trend` gives it (docs/statistics.md, "Trends").
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "stats/stats.h"

namespace kbench::stats {

// The cost of points [begin, end) as one segment: twice the negative normal
// log-likelihood with known variances, constants dropped,
//   sum w_i (y_i - ybar_w)^2,  w_i = 1 / variance_i,  ybar_w the weighted mean.
// It is additive over segments and a split never raises it, so PELT prunes
// with K = 0 and stays exact.
double mean_segment_cost(std::span<const double> values, std::span<const double> weights, std::size_t begin,
                         std::size_t end);

struct Segmentation {
  // Index of the first point of every segment but the first, ascending.
  std::vector<std::size_t> change_points;
  // Minimum of sum of segment costs + penalty x number of change points.
  double penalised_cost = kNaN;
};

// The segmentation minimising sum_segments cost + penalty x changes, every
// segment at least `min_segment` points long, exactly (the same optimum as
// optimal partitioning, Jackson et al. 2005), in O(n) expected time when
// changes keep occurring. Ties go to the earlier last change point.
// Needs values.size() == weights.size(), every weight > 0 and finite,
// penalty >= 0, min_segment >= 1; fewer than 2 x min_segment points: no change.
Segmentation pelt_mean_changes(std::span<const double> values, std::span<const double> weights, double penalty,
                               std::size_t min_segment = 1);

// Optimal partitioning by dynamic programming over every last change point,
// O(n^2): PELT without pruning, for tests.
Segmentation optimal_partitioning(std::span<const double> values, std::span<const double> weights, double penalty,
                                  std::size_t min_segment = 1);

// --- the trend model ----------------------------------------------------------
// A trend is a row measured in many swprofiles (kernels), each in one or more
// sessions. The series PELT sees has one point per swprofile, the mean of its
// log session means (a change point can only fall between swprofiles), with
//   variance_k = between + within / sessions_k,
// `within` the pooled variance of log session means inside a swprofile (the
// session noise compare's test knows), `between` what swprofiles of one
// segment differ beyond that (their runs, boots and days), estimated from the
// median absolute deviation of successive differences, which a few steps do
// not move. With one session everywhere `within` is unknown and the MAD
// estimate is the whole variance.
struct TrendNoise {
  bool valid = false;
  std::string reason;           // why not valid, in words a report prints
  double within = kNaN;         // of one log session mean inside a swprofile; NaN: no swprofile has 2 sessions
  double within_df = 0;         // sum over swprofiles of (sessions - 1)
  double between = kNaN;        // swprofile-level variance beyond the sessions' (>= 0)
  std::vector<double> means;    // per swprofile: mean of its log session means
  std::vector<double> variances;  // per swprofile: between + within / sessions
};

// The smallest number of swprofiles a trend needs for a noise estimate: the
// MAD of fewer than 3 successive differences says nothing.
inline constexpr std::size_t kTrendMinPoints = 4;

// From the session means (not logs) of each swprofile in trend order. A
// swprofile with no session, or a session mean <= 0, makes it invalid.
TrendNoise trend_noise(const std::vector<std::vector<double>>& session_means_per_point);

struct TrendChanges {
  bool valid = false;
  std::string reason;
  TrendNoise noise;           // refitted to the final segmentation
  double base_penalty = kNaN; // penalty_factor x ln(n): for a noise known exactly
  double noise_df = 0;        // df of the swprofile-level noise estimate: n - segments
  double penalty = kNaN;      // base_penalty for a noise estimated on noise_df (trend_penalty)
  Segmentation segmentation;
};

// The penalty per change point kbench starts from, `factor` x ln(n) for n
// points: factor 3 is the changepoint R package's "MBIC" value for PELT.
inline constexpr double kTrendPenaltyFactor = 3.0;

// The noise of a trend is estimated from its own few points, and a split's
// statistic over an estimated variance is F(1, df)-, not chi2(1)-distributed:
// the penalty keeps the false-alarm level per split that `base` has for a
// known noise, the F(1, df) quantile at chi2_1's cdf(base). Infinite below 1 df.
double trend_penalty(double base, double df);

// PELT on the trend model: segments with the MAD noise, refits the noise to
// the segments found (squared deviations from the segment means over
// n - segments) and segments again until the change points stay.
TrendChanges detect_trend_changes(const std::vector<std::vector<double>>& session_means_per_point,
                                  std::size_t min_segment = 1, double penalty_factor = kTrendPenaltyFactor);

}  // namespace kbench::stats
