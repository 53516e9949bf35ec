#include "stats/run_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <utility>

#include <Eigen/Dense>

#include "stats/distributions.h"

namespace kbench::stats {

namespace {

// The sufficient statistics of one run: its sessions per group, their sums.
struct RunSums {
  Eigen::VectorXd counts;  // sessions of each group in the run
  Eigen::VectorXd sums;    // sum of y of each group in the run
  double total = 0;        // sum of y in the run
  double sessions = 0;
};

std::vector<RunSums> sums_by_run(const RunModelData& data) {
  std::vector<RunSums> runs(data.runs);
  for (auto& r : runs) {
    r.counts = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(data.groups));
    r.sums = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(data.groups));
  }
  for (std::size_t i = 0; i < data.log_means.size(); ++i) {
    auto& r = runs[data.run[i]];
    const auto g = static_cast<Eigen::Index>(data.group[i]);
    r.counts[g] += 1;
    r.sums[g] += data.log_means[i];
    r.total += data.log_means[i];
    r.sessions += 1;
  }
  runs.erase(std::remove_if(runs.begin(), runs.end(), [](const RunSums& r) { return r.sessions == 0; }), runs.end());
  return runs;
}

// With V = sigma_s^2 (I + lambda Z Z'), each run's block inverts in closed
// form: (I + lambda 1 1')^-1 = I - c 1 1', c = lambda / (1 + k lambda), and
// its determinant is 1 + k lambda. So X'V^-1 X, X'V^-1 y and y'V^-1 y are
// sums over runs, and nothing of size sessions x sessions is ever built.
struct NormalEquations {
  Eigen::MatrixXd xvx;  // X' W^-1 X (W = V / sigma_s^2)
  Eigen::VectorXd xvy;
  double yvy = 0;
  double log_det_w = 0;
};

NormalEquations normal_equations(const std::vector<RunSums>& runs, double sum_squares, std::size_t groups, double lambda) {
  const auto p = static_cast<Eigen::Index>(groups);
  NormalEquations n{Eigen::MatrixXd::Zero(p, p), Eigen::VectorXd::Zero(p), sum_squares, 0};
  for (const auto& r : runs) {
    const double c = lambda / (1 + r.sessions * lambda);
    n.xvx.diagonal() += r.counts;
    n.xvx.noalias() -= c * r.counts * r.counts.transpose();
    n.xvy += r.sums - c * r.total * r.counts;
    n.yvy -= c * r.total * r.total;
    n.log_det_w += std::log1p(r.sessions * lambda);
  }
  return n;
}

struct Profile {
  double log_likelihood = -INFINITY;
  double rss = kNaN;
  Eigen::VectorXd beta;
};

// The REML log-likelihood with sigma_s^2 profiled out, up to a constant:
//   -1/2 [(n - p) log(RSS / (n - p)) + log|W| + log|X' W^-1 X|].
Profile reml_profile(const std::vector<RunSums>& runs, double sum_squares, std::size_t groups, double residual_n,
                     double lambda) {
  Profile out;
  const NormalEquations n = normal_equations(runs, sum_squares, groups, lambda);
  const Eigen::LLT<Eigen::MatrixXd> llt(n.xvx);
  if (llt.info() != Eigen::Success) return out;
  out.beta = llt.solve(n.xvy);
  out.rss = std::max(0.0, n.yvy - n.xvy.dot(out.beta));
  double log_det_x = 0;
  for (Eigen::Index i = 0; i < n.xvx.rows(); ++i) log_det_x += 2 * std::log(llt.matrixL()(i, i));
  if (!(out.rss > 0)) return out;
  out.log_likelihood = -0.5 * (residual_n * std::log(out.rss / residual_n) + n.log_det_w + log_det_x);
  return out;
}

// Connected components of the bipartite graph of groups and runs (a session
// joins its group and its run): rank([X Z]) = groups + runs - components.
std::size_t connected_components(const RunModelData& data) {
  std::vector<std::size_t> parent(data.groups + data.runs);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  const auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<bool> used(parent.size(), false);
  for (std::size_t i = 0; i < data.log_means.size(); ++i) {
    const std::size_t g = data.group[i], r = data.groups + data.run[i];
    used[g] = used[r] = true;
    parent[find(g)] = find(r);
  }
  std::size_t count = 0;
  for (std::size_t x = 0; x < parent.size(); ++x) {
    if (used[x] && find(x) == x) ++count;
  }
  return count;
}

}  // namespace

RunModelFit fit_run_model(const RunModelData& data) {
  RunModelFit fit;
  const std::size_t n = data.log_means.size();
  if (n == 0 || data.group.size() != n || data.run.size() != n) {
    fit.reason = "no sessions";
    return fit;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (data.group[i] >= data.groups || data.run[i] >= data.runs || !std::isfinite(data.log_means[i])) {
      fit.reason = "a session is outside its groups or runs, or not finite";
      return fit;
    }
  }
  std::vector<bool> group_seen(data.groups, false), run_seen(data.runs, false);
  for (std::size_t i = 0; i < n; ++i) group_seen[data.group[i]] = run_seen[data.run[i]] = true;
  const auto groups = static_cast<double>(std::count(group_seen.begin(), group_seen.end(), true));
  const auto runs_used = static_cast<double>(std::count(run_seen.begin(), run_seen.end(), true));
  if (groups != static_cast<double>(data.groups)) {
    fit.reason = "a group has no session";
    return fit;
  }
  const auto parts = static_cast<double>(connected_components(data));
  fit.session_df = static_cast<double>(n) - (groups + runs_used - parts);
  fit.run_df = runs_used - parts;
  const double residual_n = static_cast<double>(n) - groups;
  if (!(residual_n >= 1)) {
    fit.reason = "1 session a group: the session noise is unknown";
    return fit;
  }
  if (!(fit.session_df >= 1)) {
    fit.runs_folded = true;
    fit.session_df = residual_n;
    fit.run_df = 0;
  }

  // Centre y: the fixed effects absorb it, and sums of squares keep their digits.
  const double centre = std::accumulate(data.log_means.begin(), data.log_means.end(), 0.0) / static_cast<double>(n);
  RunModelData centred = data;
  double sum_squares = 0;
  for (double& y : centred.log_means) {
    y -= centre;
    sum_squares += y * y;
  }
  const auto runs = sums_by_run(centred);

  const Profile at_zero = reml_profile(runs, sum_squares, data.groups, residual_n, 0);
  // Groups whose sessions all gave one value (a deterministic benchmark):
  // checked on the values themselves, since a residual sum of squares only
  // approaches 0 by rounding.
  std::vector<const double*> first_of_group(data.groups, nullptr);
  bool constant = true;
  for (std::size_t i = 0; i < n && constant; ++i) {
    const double*& first = first_of_group[data.group[i]];
    if (!first) first = &data.log_means[i];
    else constant = *first == data.log_means[i];
  }
  if (constant) {
    // Sessions of each group agree exactly: nothing varies, neither part.
    fit.session_variance = 0;
    fit.run_variance = 0;
    fit.group_means.resize(data.groups);
    for (std::size_t g = 0; g < data.groups; ++g) fit.group_means[g] = at_zero.beta[static_cast<Eigen::Index>(g)] + centre;
    fit.valid = at_zero.beta.size() == static_cast<Eigen::Index>(data.groups);
    if (!fit.valid) fit.reason = "the groups are not estimable";
    return fit;
  }

  double best_lambda = 0;
  Profile best = at_zero;
  if (fit.run_df > 0) {
    // lambda = run variance / session variance, searched on a log grid wide
    // enough for sessions that agree to 1e-4 while runs differ by percent,
    // then refined by golden section around the best grid point.
    const double low = -18, high = 18, step = 0.5;
    double best_t = kNaN;
    for (double t = low; t <= high + 1e-9; t += step) {
      Profile p = reml_profile(runs, sum_squares, data.groups, residual_n, std::exp(t));
      if (p.log_likelihood > best.log_likelihood) {
        best = std::move(p);
        best_t = t;
      }
    }
    if (std::isfinite(best_t)) {
      const double phi = (std::sqrt(5.0) - 1) / 2;
      double a = best_t - step, b = best_t + step;
      const auto value = [&](double t) {
        return reml_profile(runs, sum_squares, data.groups, residual_n, std::exp(t)).log_likelihood;
      };
      double c = b - phi * (b - a), d = a + phi * (b - a);
      double fc = value(c), fd = value(d);
      while (b - a > 1e-11) {
        if (fc > fd) {
          b = d;
          d = c;
          fd = fc;
          c = b - phi * (b - a);
          fc = value(c);
        } else {
          a = c;
          c = d;
          fc = fd;
          d = a + phi * (b - a);
          fd = value(d);
        }
      }
      const double t = (a + b) / 2;
      Profile refined = reml_profile(runs, sum_squares, data.groups, residual_n, std::exp(t));
      if (refined.log_likelihood >= best.log_likelihood) best = std::move(refined);
      best_lambda = std::exp(t);
      if (best.log_likelihood < at_zero.log_likelihood) {
        best = at_zero;
        best_lambda = 0;
      }
    }
  }
  fit.session_variance = best.rss / residual_n;
  fit.run_variance = best_lambda * fit.session_variance;
  fit.reml_log_likelihood = best.log_likelihood;
  fit.group_means.resize(data.groups);
  for (std::size_t g = 0; g < data.groups; ++g) fit.group_means[g] = best.beta[static_cast<Eigen::Index>(g)] + centre;
  fit.valid = true;
  return fit;
}

RunContrast run_contrast(const RunModelData& data, std::size_t base_group, std::size_t test_group,
                         double session_variance, double run_variance) {
  RunContrast out;
  if (base_group >= data.groups || test_group >= data.groups || base_group == test_group ||
      !(session_variance >= 0) || !(run_variance >= 0)) {
    return out;
  }
  // A session variance of exactly 0 leaves V singular when runs vary; a
  // vanishing one keeps the GLS weights (runs alone then set the variance).
  const double s2 = session_variance > 0 ? session_variance : (run_variance > 0 ? run_variance * 1e-12 : 1);
  const double lambda = run_variance / s2;
  const double centre =
      std::accumulate(data.log_means.begin(), data.log_means.end(), 0.0) / static_cast<double>(data.log_means.size());
  RunModelData centred = data;
  for (double& y : centred.log_means) y -= centre;
  const auto runs = sums_by_run(centred);
  const NormalEquations n = normal_equations(runs, 0, data.groups, lambda);
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(n.xvx);
  if (ldlt.info() != Eigen::Success) return out;
  Eigen::VectorXd contrast = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(data.groups));
  contrast[static_cast<Eigen::Index>(test_group)] = 1;
  contrast[static_cast<Eigen::Index>(base_group)] = -1;
  const Eigen::VectorXd w = ldlt.solve(contrast);
  const Eigen::VectorXd beta = ldlt.solve(n.xvy);
  out.estimate = contrast.dot(beta);
  double exposure = 0;
  for (const auto& r : runs) {
    const double h = w.dot(r.counts) / (1 + r.sessions * lambda);
    exposure += h * h;
  }
  out.run_exposure = exposure;
  out.run_part = run_variance * exposure;
  out.variance = session_variance > 0 ? s2 * contrast.dot(w) : out.run_part;
  out.session_part = std::max(0.0, out.variance - out.run_part);
  out.valid = std::isfinite(out.estimate) && std::isfinite(out.variance);
  return out;
}

SessionTest run_model_test(const RunContrast& contrast, double session_df, double run_df, std::size_t base_sessions,
                           std::size_t test_sessions, double confidence) {
  SessionTest r;
  r.base_sessions = base_sessions;
  r.test_sessions = test_sessions;
  if (!contrast.valid || base_sessions == 0 || test_sessions == 0) {
    r.reason = "no session on one side";
    return r;
  }
  if (!(session_df >= 1)) {
    r.reason = "1 session a side and no noise model of this row on this SUT: run another session, or kbench calibrate";
    return r;
  }
  if (contrast.run_part > 0 && !(run_df > 0)) {
    r.reason = "the run part of the change has no degrees of freedom";
    return r;
  }
  r.log_change = contrast.estimate;
  r.df = session_df;
  r.prior_df = std::max(0.0, session_df - static_cast<double>(base_sessions + test_sessions - 2));
  const double per_session = 1.0 / static_cast<double>(base_sessions) + 1.0 / static_cast<double>(test_sessions);
  r.variance = contrast.session_part / per_session;
  r.run_variance = contrast.run_part;
  r.run_df = contrast.run_part > 0 ? run_df : 0;
  r.test_df = contrast.run_part > 0 ? detail::combined_df(contrast.session_part, session_df, contrast.run_part, run_df)
                                    : session_df;
  r.standard_error = std::sqrt(contrast.variance);
  if (r.standard_error == 0 && r.log_change == 0) {
    r.reason = "both sides are constant and equal";
    return r;
  }
  const double q = student_t_quantile(0.5 + confidence / 2, r.test_df);
  if (r.standard_error == 0) {
    // Every session of both sides gave its side's value: the change is exact.
    r.statistic = std::copysign(INFINITY, r.log_change);
    r.p_value = 0;
  } else {
    r.statistic = r.log_change / r.standard_error;
    r.p_value = std::min(1.0, 2 * detail::student_t_upper_tail(std::abs(r.statistic), r.test_df));
  }
  r.ci_low_pct = std::expm1(r.log_change - q * r.standard_error) * 100;
  r.ci_high_pct = std::expm1(r.log_change + q * r.standard_error) * 100;
  r.valid = true;
  return r;
}

MachineRuns machine_runs(const std::vector<const RunModelFit*>& fits) {
  MachineRuns machine;
  double weighted = 0, weights = 0;
  for (const auto* fit : fits) {
    if (!fit->valid || !(fit->run_df > 0)) continue;
    weighted += fit->run_df * fit->run_variance;
    weights += fit->run_df;
    machine.df = std::max(machine.df, fit->run_df);
  }
  if (weights > 0) machine.variance = weighted / weights;
  return machine;
}

double row_run_variance(const RunModelData& data, const RunModelFit& fit, const MachineRuns& machine) {
  const double own = fit.valid && fit.run_df > 0 ? fit.run_variance : 0;
  std::set<std::pair<std::size_t, std::size_t>> cells;
  for (std::size_t i = 0; i < data.log_means.size(); ++i) cells.emplace(data.group[i], data.run[i]);
  const double sessions_per_cell =
      cells.empty() ? 1.0 : static_cast<double>(data.log_means.size()) / static_cast<double>(cells.size());
  const double floor = fit.valid ? fit.session_variance / sessions_per_cell : 0;
  if (!(machine.df > 0)) return std::max(own, floor);
  const double shrunk = (machine.df * machine.variance + fit.run_df * own) / (machine.df + fit.run_df);
  return std::max({own, shrunk, floor});
}

}  // namespace kbench::stats
