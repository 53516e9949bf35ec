#pragma once
// Sessions nested in rounds nested in runs: a linear mixed model of one
// row's log session means on one SUT (docs/statistics.md, "The run model").
//
//   y_i = beta_g(i) + u_r(i) + v_b(i) + e_i,   u_r ~ N(0, run_variance),
//                                              v_b ~ N(0, round_variance),
//                                              e_i ~ N(0, session_variance)
//
// y is the natural log of a session's mean, g the session's group (a compared
// swprofile, or a kernel measured by other swprofiles), r its run (sessions
// measured back to back), b its round inside the run (one session of each
// swprofile of a plan, measured one after the other). The groups are fixed
// effects, runs and rounds random ones, so a run holding sessions of several
// groups (an interleaved plan) cancels its own drift between them, a round
// the faster drift between its neighbours, a run of one group does not, and
// a group measured in several runs bridges them, as the data say.
#include <cstddef>
#include <string>
#include <vector>

#include "stats/stats.h"

namespace kbench::stats {

struct RunModelData {
  std::vector<double> log_means;  // one per session
  std::vector<std::size_t> group; // 0 .. groups - 1
  std::vector<std::size_t> run;   // 0 .. runs - 1
  // 0 .. rounds - 1, each round inside one run; empty: every session is a
  // round of its own (the model is then sessions nested in runs).
  std::vector<std::size_t> round;
  std::size_t groups = 0;
  std::size_t runs = 0;
  std::size_t rounds = 0;
};

// The REML fit: variance components and their degrees of freedom.
struct RunModelFit {
  bool valid = false;
  std::string reason;
  double session_variance = kNaN;  // sigma_s^2 (REML)
  double run_variance = kNaN;      // sigma_r^2 (REML); 0 where the likelihood peaks at the boundary
  double round_variance = 0;       // sigma_b^2 (REML); 0 where the rounds are not identified
  // Residual df of the sessions: sessions - rank([groups rounds]) (rounds
  // identified), else sessions - rank([groups runs]).
  double session_df = 0;
  // What the data can say about the round variance beyond the runs:
  // rank([groups rounds]) - rank([groups runs]). 0: a round holds no two
  // sessions anywhere, or no residual would be left; the rounds are then
  // left out (their variance is part of the session variance).
  double round_df = 0;
  // What the data can say about the run variance: runs minus the connected
  // components of the group-run graph (a group measured in one run of its
  // own carries nothing about it). 0: the run variance is not identified.
  double run_df = 0;
  // No run holds two sessions of one group (every session a run of its own,
  // as sessions stored before runs were recorded): the two components
  // cannot be told apart, only their sum, which session_variance then holds
  // with sessions - groups df; run_variance is 0 and no contrast has a
  // separate run part (each session already carries its run's effect).
  bool runs_folded = false;
  std::vector<double> group_means;  // beta (GLS at the REML estimate)
  double reml_log_likelihood = kNaN;
  // Where rounds are modelled: the sessions' df without them (every round
  // contrast residual), the upper end of what the within part can have.
  double session_df_without_rounds = 0;
  // The asymptotic covariance of the REML estimates of session_variance and
  // round_variance (the inverse of the observed information of the REML
  // likelihood in (sigma_s^2, sigma_b^2, sigma_r^2), its first 2 x 2 block);
  // NaN where rounds are not modelled.
  double covariance_ss = kNaN, covariance_sb = kNaN, covariance_bb = kNaN;
};

// Restricted maximum likelihood (Patterson & Thompson 1971) for the
// variance components, profiled over their ratios to the session variance;
// matches statsmodels' MixedLM(reml=True) with the run as the grouping
// factor, the round as a variance component inside it and one fixed
// intercept per group (tests/data/run_model_reference.json). Needs at least
// one residual df.
RunModelFit fit_run_model(const RunModelData& data);

// The contrast beta_test - beta_base by generalised least squares with the
// given components, and its variance split into what the sessions, the
// rounds and the runs contribute (the variance is homogeneous of degree 1 in
// the components, so the parts add up to it exactly).
struct RunContrast {
  bool valid = false;
  double estimate = kNaN;     // log of the ratio test / base
  double variance = kNaN;
  double session_part = kNaN; // session_variance * d var / d session_variance
  double round_part = 0;      // round_variance * d var / d round_variance
  double round_exposure = 0;  // d var / d round_variance
  double run_part = kNaN;     // run_variance * d var / d run_variance
  // The run part per unit of run variance at these components: > 0 when the
  // two groups are not measured side by side in every run (separate runs
  // expose the contrast to the machine's drift).
  double run_exposure = 0;
};
RunContrast run_contrast(const RunModelData& data, std::size_t base_group, std::size_t test_group,
                         double session_variance, double run_variance, double round_variance = 0);

// The df of a contrast's within-run part (its session and round parts):
// the sessions' df where rounds are not modelled; else Satterthwaite's
//   df = 2 w^2 / (g' A g),  w = session_part + round_part,
// g = (d var / d sigma_s^2, d var / d sigma_b^2), A the fit's covariance of
// the two estimates (as lmerTest's Satterthwaite df, tests/data), kept
// between the df of the rounds' residual alone and of the sessions without
// rounds.
double within_df(const RunModelFit& fit, const RunContrast& contrast);

// The t-test of a contrast: t = estimate / sqrt(variance) with the
// Welch-Satterthwaite df of its parts, within_df for the session and round
// parts and run_df for the run part,
//   df = variance^2 / (within^2 / within_df + run_part^2 / run_df),
// and the CI exp(estimate -+ t(0.5 + c/2, df) se) - 1 in percent. Filled in
// as a SessionTest, so sessions_to_decide can project it: `variance` is the
// session and round parts per (1/n_b + 1/n_t) (more sessions of a plan are
// more rounds), `run_variance` the run part (more sessions shrink the first
// only). Not valid when within_df < 1, when a run part has no df, or when
// both sides are constant and equal (nothing to test, as Welch's test says).
SessionTest run_model_test(const RunContrast& contrast, double within_df, double run_df, std::size_t base_sessions,
                           std::size_t test_sessions, double confidence = 0.95);

// What a SUT's rows together know of its run-to-run drift. Rows share the
// machine's drift (whole runs faster on most rows at once), so a row whose
// own runs happen to agree must not be believed alone: its run variance is
// pulled toward the rows' pooled one, and never below its own estimate.
// The rows' estimates come from the same runs, so pooling them adds no
// degrees of freedom beyond the best-covered row's: df = max over rows.
struct MachineRuns {
  double variance = 0;  // pooled REML run variance, weights: each row's run df
  double df = 0;        // the most run df any row has
};
MachineRuns machine_runs(const std::vector<const RunModelFit*>& fits);

// The run variance one row is tested with: its own REML estimate shrunk
// toward the machine's with weights of their df, and never below its own,
// nor below what a run's mean varies by from its sessions alone (the
// session and round variances over the mean sessions per run and group). REML puts the run
// variance at 0 whenever a few run means happen to agree, and a 0 would let
// the next run's drift be marked; the floor counts the session noise of a
// run mean once more where runs truly do not differ (at most a factor 2).
double row_run_variance(const RunModelData& data, const RunModelFit& fit, const MachineRuns& machine);

}  // namespace kbench::stats
