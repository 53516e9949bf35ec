#include <algorithm>
#include <cmath>

#include <optional>

#include "stats/distributions.h"
#include "stats/stats.h"

namespace kbench::stats {

SessionVariance session_variance(const std::vector<std::vector<double>>& sessions) {
  SessionVariance r;
  std::vector<const std::vector<double>*> groups;
  for (const auto& s : sessions) {
    if (!s.empty()) groups.push_back(&s);
  }
  r.sessions = groups.size();
  for (const auto* g : groups) r.samples += g->size();
  if (r.sessions < 2) {
    r.reason = "needs at least 2 sessions";
    return r;
  }
  if (r.samples <= r.sessions) {
    r.reason = "needs a session with at least 2 samples";
    return r;
  }
  const double k = static_cast<double>(r.sessions);
  const double n = static_cast<double>(r.samples);

  std::vector<double> pooled;
  pooled.reserve(r.samples);
  for (const auto* g : groups) pooled.insert(pooled.end(), g->begin(), g->end());
  const double grand_mean = detail::moments(pooled.data(), pooled.size()).mean;

  double ss_between = 0, ss_within = 0, sum_sizes_squared = 0;
  for (const auto* g : groups) {
    const auto m = detail::moments(g->data(), g->size());
    const double size = static_cast<double>(g->size());
    ss_between += size * (m.mean - grand_mean) * (m.mean - grand_mean);
    ss_within += m.sum_squared_deviations;
    sum_sizes_squared += size * size;
  }
  r.ms_between = ss_between / (k - 1);
  r.ms_within = ss_within / (n - k);
  r.n0 = (n - sum_sizes_squared / n) / (k - 1);
  // The moment estimate can be negative (sessions agree better than repeats
  // would predict); a variance component cannot, so it is truncated at 0.
  r.between = std::max(0.0, (r.ms_between - r.ms_within) / r.n0);
  r.within = r.ms_within;
  const double total = r.between + r.within;
  r.between_share = total > 0 ? r.between / total : kNaN;
  r.valid = true;
  return r;
}

bool session_noisy(const SessionVariance& d) {
  return d.valid && d.sessions >= 2 && d.between > 0 && d.between >= d.within;
}

std::vector<double> session_means(const std::vector<std::vector<double>>& sessions) {
  std::vector<double> means;
  for (const auto& s : sessions) {
    if (!s.empty()) means.push_back(detail::moments(s.data(), s.size()).mean);
  }
  return means;
}

namespace {

// log of every value, or nothing when one is not > 0 (no log scale then).
std::optional<std::vector<double>> logs_of(std::span<const double> values) {
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
    logs.push_back(std::log(v));
  }
  return logs;
}

}  // namespace

MeanInterval positive_mean_ci(std::span<const double> values, double confidence) {
  MeanInterval interval;
  const std::size_t n = values.size();
  if (n < 2 || !(confidence > 0 && confidence < 1)) return interval;
  const auto logs = logs_of(values);
  if (!logs) {
    const auto m = detail::moments(values.data(), n);
    const double half =
        mean_ci_halfwidth(std::sqrt(m.sum_squared_deviations / static_cast<double>(n - 1)), n, confidence);
    interval.low = m.mean - half;
    interval.high = m.mean + half;
    return interval;
  }
  const double q = student_t_quantile(0.5 + confidence / 2, static_cast<double>(n - 1));
  const auto m = detail::moments(logs->data(), n);
  const double variance = m.sum_squared_deviations / static_cast<double>(n - 1);
  const double centre = m.mean + variance / 2;
  const double half = q * std::sqrt(variance / static_cast<double>(n) +
                                    variance * variance / (2 * static_cast<double>(n - 1)));
  interval.low = std::exp(centre - half);
  interval.high = std::exp(centre + half);
  interval.log_scale = true;
  return interval;
}

NoisePrior pool_log_session_variance(const std::vector<std::vector<double>>& session_means_per_profile) {
  NoisePrior prior;
  double sum_squares = 0;
  for (const auto& means : session_means_per_profile) {
    if (means.size() < 2) continue;
    const auto logs = logs_of(means);
    if (!logs) continue;
    sum_squares += detail::moments(logs->data(), logs->size()).sum_squared_deviations;
    prior.df += static_cast<double>(logs->size() - 1);
    ++prior.profiles;
  }
  if (prior.df > 0) prior.variance = sum_squares / prior.df;
  return prior;
}

namespace detail {

double combined_df(double part_a, double df_a, double part_b, double df_b) {
  const double total = part_a + part_b;
  return total * total / (part_a * part_a / df_a + part_b * part_b / df_b);
}

}  // namespace detail

SessionTest session_test(std::span<const double> base_session_means, std::span<const double> test_session_means,
                         const NoisePrior& prior, double confidence, const RunTerm* run) {
  SessionTest r;
  r.base_sessions = base_session_means.size();
  r.test_sessions = test_session_means.size();
  if (r.base_sessions == 0 || r.test_sessions == 0) {
    r.reason = "no session on one side";
    return r;
  }
  const auto base = logs_of(base_session_means);
  const auto test = logs_of(test_session_means);
  if (!base || !test) {
    r.reason = "a session mean is <= 0: no relative test";
    return r;
  }
  const auto mb = detail::moments(base->data(), base->size());
  const auto mt = detail::moments(test->data(), test->size());
  const double d = static_cast<double>(r.base_sessions + r.test_sessions) - 2;
  const bool has_prior = prior.df > 0 && std::isfinite(prior.variance) && prior.variance >= 0;
  r.prior_df = has_prior ? prior.df : 0;
  r.df = r.prior_df + d;
  if (!(r.df >= 1)) {
    r.reason = "1 session a side and no noise model of this row on this SUT: run another session, or kbench calibrate";
    return r;
  }
  const double own = mb.sum_squared_deviations + mt.sum_squared_deviations;  // d * pooled variance
  r.variance = ((has_prior ? prior.df * prior.variance : 0.0) + own) / r.df;
  r.log_change = mt.mean - mb.mean;
  const double session_part =
      r.variance * (1.0 / static_cast<double>(r.base_sessions) + 1.0 / static_cast<double>(r.test_sessions));
  double test_df = r.df;
  if (run && run->noise.df > 0 && run->noise.variance > 0) {
    r.run_variance = run->noise.variance * (1.0 / static_cast<double>(std::max<std::size_t>(1, run->base_runs)) +
                                            1.0 / static_cast<double>(std::max<std::size_t>(1, run->test_runs)));
    r.run_df = run->noise.df;
    test_df = detail::combined_df(session_part, r.df, r.run_variance, r.run_df);
  }
  r.test_df = test_df;
  r.standard_error = std::sqrt(session_part + r.run_variance);
  const double q = student_t_quantile(0.5 + confidence / 2, test_df);
  if (r.standard_error == 0) {
    // Every session of both sides gave the same value as its side: the change
    // is exact, so it is either nothing or certain.
    r.statistic = r.log_change == 0 ? 0.0 : std::copysign(INFINITY, r.log_change);
    r.p_value = r.log_change == 0 ? 1.0 : 0.0;
  } else {
    r.statistic = r.log_change / r.standard_error;
    r.p_value = std::min(1.0, 2 * detail::student_t_upper_tail(std::abs(r.statistic), test_df));
  }
  r.ci_low_pct = std::expm1(r.log_change - q * r.standard_error) * 100;
  r.ci_high_pct = std::expm1(r.log_change + q * r.standard_error) * 100;
  r.valid = true;
  return r;
}

int sessions_to_decide(const SessionTest& test, double min_change_pct, double confidence, int limit,
                       double equivalence_confidence) {
  if (std::isnan(equivalence_confidence)) equivalence_confidence = confidence;
  if (!test.valid) return limit + 1;
  // The same margin compare applies to the percent CI: exp(low) - 1 >= -m and
  // exp(high) - 1 <= m, i.e. low >= log(1 - m) and high <= log(1 + m).
  const double lower_bound = std::log1p(-std::abs(min_change_pct) / 100);
  const double upper_bound = std::log1p(std::abs(min_change_pct) / 100);
  const bool big_enough = std::abs(std::expm1(test.log_change)) * 100 >= min_change_pct;
  for (int k = 0; k <= limit; ++k) {
    const double nb = static_cast<double>(test.base_sessions + k);
    const double nt = static_cast<double>(test.test_sessions + k);
    // More sessions shrink the session part only: the run term stays.
    const double session_part = test.variance * (1 / nb + 1 / nt);
    double df = test.df + 2.0 * k;
    if (test.run_variance > 0) df = detail::combined_df(session_part, df, test.run_variance, test.run_df);
    const double se = std::sqrt(session_part + test.run_variance);
    const double half = student_t_quantile(0.5 + confidence / 2, df) * se;
    const double low = test.log_change - half, high = test.log_change + half;
    const double equivalence_half = student_t_quantile(0.5 + equivalence_confidence / 2, df) * se;
    const bool excludes_zero = low > 0 || high < 0;
    const bool inside_margin = test.log_change - equivalence_half >= lower_bound &&
                               test.log_change + equivalence_half <= upper_bound;
    if ((excludes_zero && big_enough && min_change_pct >= 0) || (min_change_pct > 0 && inside_margin)) {
      return k;
    }
  }
  return limit + 1;
}

double session_floor_percent(std::size_t sessions_per_side, double log_variance, double prior_df, double alpha,
                             double power) {
  const double n = static_cast<double>(sessions_per_side);
  const double df = std::max(0.0, prior_df) + 2 * n - 2;
  if (sessions_per_side == 0 || !(df >= 1) || !(log_variance >= 0) || !(alpha > 0 && alpha < 1) ||
      !(power > 0 && power < 1)) {
    return kNaN;
  }
  const double z = student_t_quantile(1 - alpha / 2, df) + student_t_quantile(power, df);
  return std::expm1(z * std::sqrt(log_variance * 2 / n)) * 100;
}

double session_floor_runs_percent(std::size_t sessions_per_side, double log_variance, double prior_df,
                                  const RunNoise& run, double alpha, double power) {
  const double n = static_cast<double>(sessions_per_side);
  const double session_df = std::max(0.0, prior_df) + 2 * n - 2;
  if (sessions_per_side == 0 || !(session_df >= 1) || !(log_variance >= 0) || !(alpha > 0 && alpha < 1) ||
      !(power > 0 && power < 1) || !(run.df > 0) || !(run.variance >= 0)) {
    return kNaN;
  }
  const double session_part = log_variance * 2 / n;
  const double run_part = 2 * run.variance;
  const double df = run_part > 0 ? detail::combined_df(session_part, session_df, run_part, run.df) : session_df;
  const double z = student_t_quantile(1 - alpha / 2, df) + student_t_quantile(power, df);
  return std::expm1(z * std::sqrt(session_part + run_part)) * 100;
}

}  // namespace kbench::stats
