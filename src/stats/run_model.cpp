#include "stats/run_model.h"

#include <algorithm>
#include <cmath>
#include <array>
#include <numeric>
#include <set>
#include <utility>

#include <Eigen/Dense>

#include "stats/distributions.h"

namespace kbench::stats {

namespace {

// The sufficient statistics of one round: its sessions per group, their sums.
struct RoundSums {
  Eigen::VectorXd counts;  // sessions of each group in the round
  Eigen::VectorXd sums;    // sum of y of each group in the round
  double total = 0;        // sum of y in the round
  double sessions = 0;
};

struct RunSums {
  std::vector<RoundSums> rounds;
};

// Each session's round: the data's, or a round of its own.
std::vector<std::size_t> rounds_of(const RunModelData& data, std::size_t& count) {
  if (!data.round.empty()) {
    count = data.rounds;
    return data.round;
  }
  std::vector<std::size_t> own(data.log_means.size());
  std::iota(own.begin(), own.end(), std::size_t{0});
  count = own.size();
  return own;
}

std::vector<RunSums> sums_by_run(const RunModelData& data) {
  const auto p = static_cast<Eigen::Index>(data.groups);
  std::size_t round_count = 0;
  const auto round = rounds_of(data, round_count);
  std::vector<RoundSums> rounds(round_count);
  std::vector<std::size_t> run_of_round(round_count, 0);
  for (auto& b : rounds) {
    b.counts = Eigen::VectorXd::Zero(p);
    b.sums = Eigen::VectorXd::Zero(p);
  }
  for (std::size_t i = 0; i < data.log_means.size(); ++i) {
    auto& b = rounds[round[i]];
    const auto g = static_cast<Eigen::Index>(data.group[i]);
    b.counts[g] += 1;
    b.sums[g] += data.log_means[i];
    b.total += data.log_means[i];
    b.sessions += 1;
    run_of_round[round[i]] = data.run[i];
  }
  std::vector<RunSums> runs(data.runs);
  for (std::size_t b = 0; b < round_count; ++b) {
    if (rounds[b].sessions > 0) runs[run_of_round[b]].rounds.push_back(std::move(rounds[b]));
  }
  runs.erase(std::remove_if(runs.begin(), runs.end(), [](const RunSums& r) { return r.rounds.empty(); }), runs.end());
  return runs;
}

// The variance ratios to the session variance: lambda_round = sigma_b^2 /
// sigma_s^2, lambda_run = sigma_r^2 / sigma_s^2.
struct Ratios {
  double round = 0;
  double run = 0;
};

// With V = sigma_s^2 W, W = I + lambda_b sum_b 1_b 1_b' + lambda_r sum_r 1_r 1_r',
// each run's block inverts in closed form: the rounds' part A = I +
// lambda_b blockdiag(1_b 1_b') has A^-1 = blockdiag(I - c_b 1_b 1_b'), c_b =
// lambda_b / (1 + k_b lambda_b), A^-1 1 = a_b 1_b on round b with a_b =
// 1 / (1 + k_b lambda_b), and the run's 1 1' is added by Sherman-Morrison
// with d = lambda_r / (1 + lambda_r s), s = 1' A^-1 1 = sum_b a_b k_b. Its
// determinant is prod_b (1 + k_b lambda_b) (1 + lambda_r s). So X'W^-1 X,
// X'W^-1 y and y'W^-1 y are sums over rounds and runs, and nothing of size
// sessions x sessions is ever built.
struct NormalEquations {
  Eigen::MatrixXd xvx;  // X' W^-1 X
  Eigen::VectorXd xvy;
  double yvy = 0;
  double log_det_w = 0;
};

NormalEquations normal_equations(const std::vector<RunSums>& runs, double sum_squares, std::size_t groups,
                                 Ratios lambda) {
  const auto p = static_cast<Eigen::Index>(groups);
  NormalEquations n{Eigen::MatrixXd::Zero(p, p), Eigen::VectorXd::Zero(p), sum_squares, 0};
  for (const auto& r : runs) {
    Eigen::VectorXd u = Eigen::VectorXd::Zero(p);  // X' A^-1 1
    double s = 0, t = 0;                            // 1' A^-1 1, y' A^-1 1
    for (const auto& b : r.rounds) {
      const double a = 1 / (1 + b.sessions * lambda.round), c = lambda.round * a;
      n.xvx.diagonal() += b.counts;
      if (c != 0) n.xvx.noalias() -= c * b.counts * b.counts.transpose();
      n.xvy += b.sums - c * b.total * b.counts;
      n.yvy -= c * b.total * b.total;
      n.log_det_w += std::log1p(b.sessions * lambda.round);
      u += a * b.counts;
      s += a * b.sessions;
      t += a * b.total;
    }
    const double d = lambda.run / (1 + lambda.run * s);
    n.xvx.noalias() -= d * u * u.transpose();
    n.xvy -= d * t * u;
    n.yvy -= d * t * t;
    n.log_det_w += std::log1p(lambda.run * s);
  }
  return n;
}

struct Profile {
  double log_likelihood = -INFINITY;
  double rss = kNaN;
  double log_dets = kNaN;  // log|W| + log|X' W^-1 X|
  Eigen::VectorXd beta;
};

// The REML log-likelihood with sigma_s^2 profiled out, up to a constant:
//   -1/2 [(n - p) log(RSS / (n - p)) + log|W| + log|X' W^-1 X|].
Profile reml_profile(const std::vector<RunSums>& runs, double sum_squares, std::size_t groups, double residual_n,
                     Ratios lambda) {
  Profile out;
  const NormalEquations n = normal_equations(runs, sum_squares, groups, lambda);
  const Eigen::LLT<Eigen::MatrixXd> llt(n.xvx);
  if (llt.info() != Eigen::Success) return out;
  out.beta = llt.solve(n.xvy);
  out.rss = std::max(0.0, n.yvy - n.xvy.dot(out.beta));
  double log_det_x = 0;
  for (Eigen::Index i = 0; i < n.xvx.rows(); ++i) log_det_x += 2 * std::log(llt.matrixL()(i, i));
  out.log_dets = n.log_det_w + log_det_x;
  if (!(out.rss > 0)) return out;
  out.log_likelihood = -0.5 * (residual_n * std::log(out.rss / residual_n) + out.log_dets);
  return out;
}

// Connected components of the bipartite graph of groups and blocks (a
// session joins its group and its block): rank([X Z]) = groups + blocks -
// components.
std::size_t connected_components(const RunModelData& data, const std::vector<std::size_t>& block,
                                 std::size_t blocks) {
  std::vector<std::size_t> parent(data.groups + blocks);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  const auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<bool> used(parent.size(), false);
  for (std::size_t i = 0; i < data.log_means.size(); ++i) {
    const std::size_t g = data.group[i], r = data.groups + block[i];
    used[g] = used[r] = true;
    parent[find(g)] = find(r);
  }
  std::size_t count = 0;
  for (std::size_t x = 0; x < parent.size(); ++x) {
    if (used[x] && find(x) == x) ++count;
  }
  return count;
}

std::size_t used_blocks(const std::vector<std::size_t>& block, std::size_t blocks) {
  std::vector<bool> seen(blocks, false);
  for (std::size_t b : block) seen[b] = true;
  return static_cast<std::size_t>(std::count(seen.begin(), seen.end(), true));
}

// lambda = exp(t); t = -inf is the boundary lambda = 0.
double ratio_of(double t) { return std::isfinite(t) ? std::exp(t) : 0.0; }

// The log-ratio grid, wide enough for sessions that agree to 1e-4 while runs
// differ by percent; -inf first (the boundary).
std::vector<double> log_ratio_grid(double step) {
  std::vector<double> grid{-INFINITY};
  for (double t = -18; t <= 18 + 1e-9; t += step) grid.push_back(t);
  return grid;
}

// Golden-section search for the maximum of f on [a, b].
template <typename F>
double golden_maximum(F&& f, double a, double b) {
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double c = b - phi * (b - a), d = a + phi * (b - a);
  double fc = f(c), fd = f(d);
  while (b - a > 1e-11) {
    if (fc > fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - phi * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + phi * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

// Nelder-Mead on two log ratios from `start`: the likelihood is smooth
// inside, and a corner of the grid found the right basin.
template <typename F>
std::pair<double, double> simplex_maximum(F&& f, std::pair<double, double> start, double size) {
  struct Vertex {
    double x, y, value;
  };
  const auto at = [&](double x, double y) { return Vertex{x, y, f(x, y)}; };
  std::array<Vertex, 3> v{at(start.first, start.second), at(start.first + size, start.second),
                          at(start.first, start.second + size)};
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::sort(v.begin(), v.end(), [](const Vertex& a, const Vertex& b) { return a.value > b.value; });
    const double spread = std::max(std::abs(v[0].x - v[2].x) + std::abs(v[0].y - v[2].y),
                                   std::abs(v[0].x - v[1].x) + std::abs(v[0].y - v[1].y));
    if (spread < 1e-11) break;
    const double cx = (v[0].x + v[1].x) / 2, cy = (v[0].y + v[1].y) / 2;
    const Vertex reflected = at(2 * cx - v[2].x, 2 * cy - v[2].y);
    if (reflected.value > v[0].value) {
      const Vertex expanded = at(3 * cx - 2 * v[2].x, 3 * cy - 2 * v[2].y);
      v[2] = expanded.value > reflected.value ? expanded : reflected;
    } else if (reflected.value > v[1].value) {
      v[2] = reflected;
    } else {
      const Vertex contracted = at((cx + v[2].x) / 2, (cy + v[2].y) / 2);
      if (contracted.value > v[2].value) {
        v[2] = contracted;
      } else {
        for (std::size_t i = 1; i < 3; ++i) v[i] = at((v[0].x + v[i].x) / 2, (v[0].y + v[i].y) / 2);
      }
    }
  }
  std::sort(v.begin(), v.end(), [](const Vertex& a, const Vertex& b) { return a.value > b.value; });
  return {v[0].x, v[0].y};
}

// The REML log-likelihood in the variance components themselves (sigma_s^2
// not profiled), up to a constant:
//   -1/2 [(n - p) log s2 + log|W| + log|X' W^-1 X| + RSS_W / s2].
double reml_log_likelihood(const std::vector<RunSums>& runs, double sum_squares, std::size_t groups, double residual_n,
                           double session, double round, double run) {
  if (!(session > 0) || round < 0 || run < 0) return kNaN;
  const Profile at = reml_profile(runs, sum_squares, groups, residual_n, {round / session, run / session});
  return -0.5 * (residual_n * std::log(session) + at.log_dets + at.rss / session);
}

// The inverse of the observed information (minus the Hessian, by central
// differences) of the components that are inside their boundary.
Eigen::MatrixXd component_covariance(const std::vector<RunSums>& runs, double sum_squares, std::size_t groups,
                                     double residual_n, const std::vector<double>& at, const std::vector<bool>& free) {
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (free[i] && at[i] > 0) index.push_back(i);
  }
  const auto k = static_cast<Eigen::Index>(index.size());
  const auto value = [&](std::vector<double> x) {
    return reml_log_likelihood(runs, sum_squares, groups, residual_n, x[0], x[1], x[2]);
  };
  Eigen::MatrixXd information(k, k);
  for (Eigen::Index a = 0; a < k; ++a) {
    for (Eigen::Index b = a; b < k; ++b) {
      const std::size_t i = index[a], j = index[b];
      const double hi = 1e-4 * at[i], hj = 1e-4 * at[j];
      const auto shifted = [&](double di, double dj) {
        std::vector<double> x = at;
        x[i] += di;
        x[j] += dj;
        return value(x);
      };
      const double second = (shifted(hi, hj) - shifted(hi, -hj) - shifted(-hi, hj) + shifted(-hi, -hj)) / (4 * hi * hj);
      information(a, b) = information(b, a) = -second;
    }
  }
  Eigen::MatrixXd covariance = Eigen::MatrixXd::Constant(3, 3, kNaN);
  const Eigen::LLT<Eigen::MatrixXd> llt(information);
  if (k == 0 || llt.info() != Eigen::Success || !information.allFinite()) return covariance;
  const Eigen::MatrixXd inverse = llt.solve(Eigen::MatrixXd::Identity(k, k));
  covariance.setZero();
  for (Eigen::Index a = 0; a < k; ++a) {
    for (Eigen::Index b = 0; b < k; ++b) covariance(index[a], index[b]) = inverse(a, b);
  }
  return covariance;
}

}  // namespace

RunModelFit fit_run_model(const RunModelData& data) {
  RunModelFit fit;
  const std::size_t n = data.log_means.size();
  if (n == 0 || data.group.size() != n || data.run.size() != n || (!data.round.empty() && data.round.size() != n)) {
    fit.reason = "no sessions";
    return fit;
  }
  std::vector<std::size_t> run_of_round(data.rounds, data.runs);
  for (std::size_t i = 0; i < n; ++i) {
    if (data.group[i] >= data.groups || data.run[i] >= data.runs || !std::isfinite(data.log_means[i]) ||
        (!data.round.empty() && data.round[i] >= data.rounds)) {
      fit.reason = "a session is outside its groups, runs or rounds, or not finite";
      return fit;
    }
    if (!data.round.empty()) {
      auto& owner = run_of_round[data.round[i]];
      if (owner != data.runs && owner != data.run[i]) {
        fit.reason = "a round spans two runs";
        return fit;
      }
      owner = data.run[i];
    }
  }
  std::vector<bool> group_seen(data.groups, false);
  for (std::size_t i = 0; i < n; ++i) group_seen[data.group[i]] = true;
  const auto groups = static_cast<double>(std::count(group_seen.begin(), group_seen.end(), true));
  if (groups != static_cast<double>(data.groups)) {
    fit.reason = "a group has no session";
    return fit;
  }
  std::size_t round_count = 0;
  const auto round = rounds_of(data, round_count);
  const double rank_runs = groups + static_cast<double>(used_blocks(data.run, data.runs)) -
                           static_cast<double>(connected_components(data, data.run, data.runs));
  const double rank_rounds = groups + static_cast<double>(used_blocks(round, round_count)) -
                             static_cast<double>(connected_components(data, round, round_count));
  fit.run_df = rank_runs - groups;
  fit.session_df = static_cast<double>(n) - rank_runs;
  const double session_df_without_rounds = fit.session_df;
  // Rounds are modelled where some round holds two sessions and a residual
  // is left beside them; else their variance stays in the sessions'.
  if (static_cast<double>(n) - rank_rounds >= 1 && rank_rounds > rank_runs) {
    fit.round_df = rank_rounds - rank_runs;
    fit.session_df = static_cast<double>(n) - rank_rounds;
  }
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

  const Profile at_zero = reml_profile(runs, sum_squares, data.groups, residual_n, {});
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
    // Sessions of each group agree exactly: nothing varies, no part.
    fit.session_variance = 0;
    fit.run_variance = 0;
    fit.round_variance = 0;
    fit.group_means.resize(data.groups);
    for (std::size_t g = 0; g < data.groups; ++g) fit.group_means[g] = at_zero.beta[static_cast<Eigen::Index>(g)] + centre;
    fit.valid = at_zero.beta.size() == static_cast<Eigen::Index>(data.groups);
    if (!fit.valid) fit.reason = "the groups are not estimable";
    return fit;
  }

  // The log ratios (round, run) searched: only those the data identify.
  const bool search_round = fit.round_df > 0, search_run = fit.run_df > 0;
  const auto likelihood = [&](double t_round, double t_run) {
    return reml_profile(runs, sum_squares, data.groups, residual_n, {ratio_of(t_round), ratio_of(t_run)})
        .log_likelihood;
  };
  double best_round = -INFINITY, best_run = -INFINITY, best_value = at_zero.log_likelihood;
  const auto consider = [&](double t_round, double t_run) {
    const double value = likelihood(t_round, t_run);
    if (value > best_value) {
      best_value = value;
      best_round = t_round;
      best_run = t_run;
    }
  };
  const double step = search_round && search_run ? 2.0 : 0.5;
  const std::vector<double> grid = log_ratio_grid(step), boundary{-INFINITY};
  for (double t_round : search_round ? grid : boundary) {
    for (double t_run : search_run ? grid : boundary) consider(t_round, t_run);
  }
  // Refine inside: along the one free ratio by golden section, or over both
  // by the simplex where both are inside the boundary.
  if (std::isfinite(best_round) && std::isfinite(best_run)) {
    const auto [t_round, t_run] =
        simplex_maximum([&](double x, double y) { return likelihood(x, y); }, {best_round, best_run}, step / 2);
    consider(t_round, t_run);
  } else if (std::isfinite(best_round)) {
    const double run = best_run;
    consider(golden_maximum([&](double t) { return likelihood(t, run); }, best_round - step, best_round + step), run);
  } else if (std::isfinite(best_run)) {
    const double rounds = best_round;
    consider(rounds, golden_maximum([&](double t) { return likelihood(rounds, t); }, best_run - step, best_run + step));
  }
  const Profile best = reml_profile(runs, sum_squares, data.groups, residual_n, {ratio_of(best_round), ratio_of(best_run)});
  fit.session_variance = best.rss / residual_n;
  fit.round_variance = ratio_of(best_round) * fit.session_variance;
  if (fit.round_df > 0 && fit.round_variance == 0) {
    // The likelihood peaks where rounds do not differ: the model is the one
    // without them, and so are the sessions' df (the rounds' contrasts are
    // residual again).
    fit.round_df = 0;
    fit.session_df = session_df_without_rounds;
  }
  fit.run_variance = ratio_of(best_run) * fit.session_variance;
  fit.reml_log_likelihood = best.log_likelihood;
  fit.session_df_without_rounds = session_df_without_rounds;
  if (fit.round_df > 0) {
    const Eigen::MatrixXd covariance =
        component_covariance(runs, sum_squares, data.groups, residual_n,
                             {fit.session_variance, fit.round_variance, fit.run_variance}, {true, true, search_run});
    fit.covariance_ss = covariance(0, 0);
    fit.covariance_sb = covariance(0, 1);
    fit.covariance_bb = covariance(1, 1);
  }
  fit.group_means.resize(data.groups);
  for (std::size_t g = 0; g < data.groups; ++g) fit.group_means[g] = best.beta[static_cast<Eigen::Index>(g)] + centre;
  fit.valid = true;
  return fit;
}

RunContrast run_contrast(const RunModelData& data, std::size_t base_group, std::size_t test_group,
                         double session_variance, double run_variance, double round_variance) {
  RunContrast out;
  if (base_group >= data.groups || test_group >= data.groups || base_group == test_group ||
      !(session_variance >= 0) || !(run_variance >= 0) || !(round_variance >= 0)) {
    return out;
  }
  // A session variance of exactly 0 leaves V singular when runs vary; a
  // vanishing one keeps the GLS weights (runs alone then set the variance).
  const double other = std::max(run_variance, round_variance);
  const double s2 = session_variance > 0 ? session_variance : (other > 0 ? other * 1e-12 : 1);
  const Ratios lambda{round_variance / s2, run_variance / s2};
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
  // d var / d sigma^2 of a block is (1_block' W^-1 X w)^2 summed over the
  // blocks: on round b that is a_b (g_b - d k_b U), g_b = counts_b . w,
  // U = sum_b a_b g_b, and on the run U / (1 + lambda_r s).
  double run_exposure = 0, round_exposure = 0;
  for (const auto& r : runs) {
    double u = 0, s = 0;
    for (const auto& b : r.rounds) {
      const double a = 1 / (1 + b.sessions * lambda.round);
      u += a * w.dot(b.counts);
      s += a * b.sessions;
    }
    const double d = lambda.run / (1 + lambda.run * s);
    for (const auto& b : r.rounds) {
      const double a = 1 / (1 + b.sessions * lambda.round);
      const double h = a * (w.dot(b.counts) - d * b.sessions * u);
      round_exposure += h * h;
    }
    const double h = u / (1 + lambda.run * s);
    run_exposure += h * h;
  }
  out.run_exposure = run_exposure;
  out.run_part = run_variance * run_exposure;
  out.round_part = round_variance * round_exposure;
  out.round_exposure = round_exposure;
  out.variance = session_variance > 0 ? s2 * contrast.dot(w) : out.run_part + out.round_part;
  out.session_part = std::max(0.0, out.variance - out.run_part - out.round_part);
  out.valid = std::isfinite(out.estimate) && std::isfinite(out.variance);
  return out;
}

double within_df(const RunModelFit& fit, const RunContrast& contrast) {
  if (!(fit.round_df > 0) || !std::isfinite(fit.covariance_ss)) return fit.session_df;
  const double within = contrast.session_part + contrast.round_part;
  const double g_session = fit.session_variance > 0 ? contrast.session_part / fit.session_variance : 0;
  const double g_round = contrast.round_exposure;
  const double spread = g_session * g_session * fit.covariance_ss + 2 * g_session * g_round * fit.covariance_sb +
                        g_round * g_round * fit.covariance_bb;
  if (!(spread > 0) || !(within > 0)) return fit.session_df;
  return std::clamp(2 * within * within / spread, fit.session_df, fit.session_df_without_rounds);
}

SessionTest run_model_test(const RunContrast& contrast, double within_df, double run_df, std::size_t base_sessions,
                           std::size_t test_sessions, double confidence) {
  SessionTest r;
  r.base_sessions = base_sessions;
  r.test_sessions = test_sessions;
  if (!contrast.valid || base_sessions == 0 || test_sessions == 0) {
    r.reason = "no session on one side";
    return r;
  }
  if (!(within_df >= 1)) {
    r.reason = "1 session a side and no noise model of this row on this SUT: run another session, or kbench calibrate";
    return r;
  }
  if (contrast.run_part > 0 && !(run_df > 0)) {
    r.reason = "the run part of the change has no degrees of freedom";
    return r;
  }
  r.log_change = contrast.estimate;
  // The rounds' part shrinks with more rounds as the sessions' does, so the
  // two travel together.
  const double within = contrast.session_part + contrast.round_part;
  r.df = within_df;
  r.prior_df = std::max(0.0, within_df - static_cast<double>(base_sessions + test_sessions - 2));
  const double per_session = 1.0 / static_cast<double>(base_sessions) + 1.0 / static_cast<double>(test_sessions);
  r.variance = within / per_session;
  r.run_variance = contrast.run_part;
  r.run_df = contrast.run_part > 0 ? run_df : 0;
  r.test_df = contrast.run_part > 0 ? detail::combined_df(within, r.df, contrast.run_part, run_df) : r.df;
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
  const double floor = fit.valid ? (fit.session_variance + fit.round_variance) / sessions_per_cell : 0;
  if (!(machine.df > 0)) return std::max(own, floor);
  const double shrunk = (machine.df * machine.variance + fit.run_df * own) / (machine.df + fit.run_df);
  return std::max({own, shrunk, floor});
}

}  // namespace kbench::stats
