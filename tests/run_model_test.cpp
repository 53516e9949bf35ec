// The mixed model of log session means nested in runs, against statsmodels
// (tests/data/run_model_reference.json, make_run_model_reference.py).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "stats/run_model.h"
#include "support/reference_data.h"

namespace {

namespace st = kbench::stats;
using nlohmann::json;

st::RunModelData data_of(const json& c) {
  st::RunModelData data;
  data.log_means = c.at("log_means").get<std::vector<double>>();
  for (const auto& g : c.at("group")) data.group.push_back(g.get<std::size_t>());
  for (const auto& r : c.at("run")) data.run.push_back(r.get<std::size_t>());
  if (c.contains("round")) {
    for (const auto& b : c.at("round")) data.round.push_back(b.get<std::size_t>());
  }
  for (auto g : data.group) data.groups = std::max(data.groups, g + 1);
  for (auto r : data.run) data.runs = std::max(data.runs, r + 1);
  for (auto b : data.round) data.rounds = std::max(data.rounds, b + 1);
  return data;
}

// The reference maximises statsmodels' REML likelihood to xatol 1e-13 in the
// log ratio; the variance components then agree to about 1e-8.
void expect_close(double actual, double expected, double relative = 1e-6) {
  EXPECT_NEAR(actual, expected, relative * std::abs(expected) + 1e-12) << "expected " << expected;
}

TEST(RunModel, MatchesStatsmodelsMixedLmReml) {
  const json reference = kbench::test::load_reference("run_model_reference.json");
  EXPECT_EQ(reference.at("provenance").at("generator"), "tests/data/make_run_model_reference.py");
  const auto& cases = reference.at("cases");
  ASSERT_GE(cases.size(), 10u);
  std::size_t with_rounds = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    ASSERT_TRUE(c.at("converged").get<bool>());
    const auto data = data_of(c);
    const auto fit = st::fit_run_model(data);
    ASSERT_TRUE(fit.valid) << fit.reason;
    expect_close(fit.session_variance, c.at("session_variance").get<double>());
    expect_close(fit.run_variance, c.at("run_variance").get<double>());
    if (c.contains("round_variance")) {
      ++with_rounds;
      expect_close(fit.round_variance, c.at("round_variance").get<double>());
    } else {
      EXPECT_EQ(fit.round_variance, 0);
    }
    const auto means = c.at("group_means").get<std::vector<double>>();
    ASSERT_EQ(fit.group_means.size(), means.size());
    for (std::size_t g = 0; g < means.size(); ++g) expect_close(fit.group_means[g], means[g], 1e-7);
    const auto contrast = st::run_contrast(data, 0, 1, fit.session_variance, fit.run_variance, fit.round_variance);
    ASSERT_TRUE(contrast.valid);
    expect_close(contrast.estimate, c.at("contrast_estimate").get<double>());
    expect_close(contrast.variance, c.at("contrast_variance").get<double>());
    // The parts add up to the variance (it is homogeneous of degree 1).
    EXPECT_NEAR(contrast.session_part + contrast.round_part + contrast.run_part, contrast.variance,
                1e-12 * contrast.variance);
  }
  EXPECT_GE(with_rounds, 4u);
}

TEST(RunModel, WithinDfMatchesLmerTestsSatterthwaiteDf) {
  const json reference = kbench::test::load_reference("run_model_reference.json");
  const json df_reference = kbench::test::load_reference("run_model_df_reference.json");
  EXPECT_EQ(df_reference.at("provenance").at("generator"), "tests/data/make_run_model_df_reference.R");
  ASSERT_GE(df_reference.at("cases").size(), 3u);
  for (const auto& expected : df_reference.at("cases")) {
    SCOPED_TRACE(expected.at("name").get<std::string>());
    const json* c = nullptr;
    for (const auto& candidate : reference.at("cases")) {
      if (candidate.at("name") == expected.at("name")) c = &candidate;
    }
    ASSERT_NE(c, nullptr);
    const auto data = data_of(*c);
    const auto fit = st::fit_run_model(data);
    ASSERT_TRUE(fit.valid) << fit.reason;
    // lme4 and statsmodels agree on the components to about 1e-6.
    expect_close(fit.round_variance, expected.at("round_variance").get<double>(), 1e-5);
    const auto contrast = st::run_contrast(data, 0, 1, fit.session_variance, fit.run_variance, fit.round_variance);
    EXPECT_NEAR(contrast.run_part, 0, 1e-12 * contrast.variance);
    // Both sides take the Hessian numerically.
    expect_close(st::within_df(fit, contrast), expected.at("satterthwaite_df").get<double>(), 1e-4);
  }
}

st::RunModelData sessions(std::vector<std::pair<std::size_t, std::size_t>> group_run, std::vector<double> y) {
  st::RunModelData d;
  d.log_means = std::move(y);
  for (auto [g, r] : group_run) {
    d.group.push_back(g);
    d.run.push_back(r);
    d.groups = std::max(d.groups, g + 1);
    d.runs = std::max(d.runs, r + 1);
  }
  return d;
}

TEST(RunModel, DegreesOfFreedomCountWhatTheStructureCanSay) {
  // Base in run 0, test in run 1: the run variance is not identified.
  auto separate = sessions({{0, 0}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, {1, 1}}, {1.0, 1.1, 1.05, 2.0, 2.1, 2.05});
  auto fit = st::fit_run_model(separate);
  ASSERT_TRUE(fit.valid) << fit.reason;
  EXPECT_EQ(fit.run_df, 0);
  EXPECT_EQ(fit.session_df, 4);
  EXPECT_EQ(fit.run_variance, 0);
  // Base in runs 0 and 1, test in run 2: one run contrast.
  auto base_twice = sessions({{0, 0}, {0, 0}, {0, 1}, {0, 1}, {1, 2}, {1, 2}}, {1.0, 1.02, 1.1, 1.13, 2.0, 2.01});
  fit = st::fit_run_model(base_twice);
  ASSERT_TRUE(fit.valid) << fit.reason;
  EXPECT_EQ(fit.run_df, 1);
  EXPECT_EQ(fit.session_df, 3);
  EXPECT_GT(fit.run_variance, 0);
  // Both groups in runs 0 and 1: the drift between the runs is one contrast.
  auto interleaved = sessions({{0, 0}, {1, 0}, {0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 1}, {1, 1}},
                              {1.0, 1.5, 1.01, 1.52, 1.2, 1.7, 1.19, 1.71});
  fit = st::fit_run_model(interleaved);
  ASSERT_TRUE(fit.valid) << fit.reason;
  EXPECT_EQ(fit.run_df, 1);
  EXPECT_EQ(fit.session_df, 5);
}

TEST(RunModel, InterleavedSidesCancelTheirRunsDrift) {
  // Runs 20 % apart, the test 10 % above the base inside each: the contrast
  // is the within-run difference, and no run variance reaches it.
  std::vector<double> y;
  std::vector<std::pair<std::size_t, std::size_t>> gr;
  const double runs[] = {0.0, 0.2, -0.1};
  const double noise[] = {0.001, -0.002, 0.0015, -0.001};
  for (std::size_t r = 0; r < 3; ++r) {
    for (std::size_t s = 0; s < 4; ++s) {
      gr.push_back({s % 2, r});
      y.push_back(4 + runs[r] + (s % 2 ? 0.1 : 0) + noise[s] * (r + 1));
    }
  }
  const auto data = sessions(gr, y);
  const auto fit = st::fit_run_model(data);
  ASSERT_TRUE(fit.valid) << fit.reason;
  EXPECT_GT(fit.run_variance, 100 * fit.session_variance);
  const auto c = st::run_contrast(data, 0, 1, fit.session_variance, fit.run_variance);
  ASSERT_TRUE(c.valid);
  // The mean within-run difference (the session noise is 0.0055 of it).
  EXPECT_NEAR(c.estimate, 0.1 - 0.0055, 1e-9);
  EXPECT_NEAR(c.run_exposure, 0, 1e-12);
  EXPECT_NEAR(c.run_part, 0, 1e-15);
}

TEST(RunModel, SeparateRunsCarryTwiceTheRunVariance) {
  // One run a side, n sessions each: var = s2 (1/n_b + 1/n_t) + 2 r2.
  auto data = sessions({{0, 0}, {0, 0}, {0, 0}, {1, 1}, {1, 1}}, {1.0, 1.1, 1.05, 2.0, 2.1});
  const auto c = st::run_contrast(data, 0, 1, 0.01, 0.003);
  ASSERT_TRUE(c.valid);
  EXPECT_NEAR(c.variance, 0.01 * (1.0 / 3 + 1.0 / 2) + 2 * 0.003, 1e-14);
  EXPECT_NEAR(c.run_part, 2 * 0.003, 1e-14);
  EXPECT_NEAR(c.run_exposure, 2, 1e-12);
  EXPECT_NEAR(c.estimate, 2.05 - 1.05, 1e-12);
}

TEST(RunModel, EverySessionARunOfItsOwnFoldsTheRunsIntoTheSessions) {
  // Sessions stored before runs were recorded: each is its own run, so the
  // run and session noise cannot be told apart; their sum is the sessions'
  // variance (the pooled within-group variance), with sessions - groups df.
  auto data = sessions({{0, 0}, {0, 1}, {0, 2}, {1, 3}, {1, 4}, {1, 5}},
                       {1.0, 1.1, 1.05, 2.0, 2.2, 2.1});
  const auto fit = st::fit_run_model(data);
  ASSERT_TRUE(fit.valid) << fit.reason;
  EXPECT_TRUE(fit.runs_folded);
  EXPECT_EQ(fit.session_df, 4);
  EXPECT_EQ(fit.run_df, 0);
  EXPECT_EQ(fit.run_variance, 0);
  const double within = (0.05 * 0.05 * 2 + 0.1 * 0.1 * 2) / 4;
  EXPECT_NEAR(fit.session_variance, within, 1e-12);
}

TEST(RunModel, RefusesWhatItCannotFit) {
  // One session a side in a run each: no residual df for the sessions.
  auto data = sessions({{0, 0}, {1, 1}}, {1.0, 2.0});
  EXPECT_FALSE(st::fit_run_model(data).valid);
  EXPECT_FALSE(st::fit_run_model(st::RunModelData{}).valid);
  // Sessions that agree exactly: both parts are 0, the fit says so.
  data = sessions({{0, 0}, {0, 0}, {1, 0}, {1, 0}}, {1.0, 1.0, 2.0, 2.0});
  const auto fit = st::fit_run_model(data);
  ASSERT_TRUE(fit.valid);
  EXPECT_EQ(fit.session_variance, 0);
  EXPECT_EQ(fit.run_variance, 0);
}

// One run of a plan: `rounds` rounds, each one session of every group, with
// a drift per round and a small session noise.
st::RunModelData plan_rounds(std::size_t groups, std::size_t rounds, const std::vector<double>& drift,
                             double shift) {
  st::RunModelData d;
  const double noise[] = {0.002, -0.001, 0.0015, -0.0025, 0.001, -0.0005, 0.0005};
  for (std::size_t b = 0; b < rounds; ++b) {
    for (std::size_t g = 0; g < groups; ++g) {
      d.log_means.push_back(4 + drift[b] + (g == 1 ? shift : 0) + noise[(b * groups + g) % 7]);
      d.group.push_back(g);
      d.run.push_back(0);
      d.round.push_back(b);
    }
  }
  d.groups = groups;
  d.runs = 1;
  d.rounds = rounds;
  return d;
}

TEST(RunModel, RoundsOfAPlanAreAVarianceComponentWithTheirOwnDf) {
  const auto data = plan_rounds(3, 6, {0.0, 0.05, -0.04, 0.08, 0.01, -0.06}, 0.1);
  const auto fit = st::fit_run_model(data);
  ASSERT_TRUE(fit.valid) << fit.reason;
  // rank([groups rounds]) = 3 + 6 - 1 = 8, rank([groups run]) = 3.
  EXPECT_EQ(fit.session_df, 18 - 8);
  EXPECT_EQ(fit.round_df, 5);
  EXPECT_EQ(fit.run_df, 0);
  EXPECT_GT(fit.round_variance, 100 * fit.session_variance);
  // Every round holds both sides: its drift cancels in the contrast, which is
  // the mean within-round difference.
  const auto c = st::run_contrast(data, 0, 1, fit.session_variance, fit.run_variance, fit.round_variance);
  ASSERT_TRUE(c.valid);
  double within = 0;
  for (std::size_t b = 0; b < 6; ++b) within += data.log_means[b * 3 + 1] - data.log_means[b * 3];
  EXPECT_NEAR(c.estimate, within / 6, 1e-9);
  EXPECT_LT(c.round_part, 1e-6 * c.variance);
  // Without the rounds the same sessions carry the rounds' drift as noise.
  auto flat = data;
  flat.round.clear();
  flat.rounds = 0;
  const auto flat_fit = st::fit_run_model(flat);
  ASSERT_TRUE(flat_fit.valid);
  EXPECT_EQ(flat_fit.round_df, 0);
  EXPECT_EQ(flat_fit.session_df, 18 - 3);
  const auto flat_c = st::run_contrast(flat, 0, 1, flat_fit.session_variance, 0);
  EXPECT_GT(flat_c.variance, 20 * c.variance);
}

TEST(RunModel, RoundsThatDoNotDifferGiveTheirDfBackToTheSessions) {
  // Every round's sessions sum to the same: the likelihood peaks at a round
  // variance of 0, and the fit is the one without rounds.
  st::RunModelData d;
  const double noise[] = {0.01, -0.02, 0.015, -0.005, 0.02};
  for (std::size_t b = 0; b < 5; ++b) {
    for (std::size_t g = 0; g < 2; ++g) {
      d.log_means.push_back(4 + (g ? 0.1 : 0) + (g ? -noise[b] : noise[b]));
      d.group.push_back(g);
      d.run.push_back(0);
      d.round.push_back(b);
    }
  }
  d.groups = 2;
  d.runs = 1;
  d.rounds = 5;
  const auto fit = st::fit_run_model(d);
  ASSERT_TRUE(fit.valid) << fit.reason;
  EXPECT_EQ(fit.round_variance, 0);
  EXPECT_EQ(fit.round_df, 0);
  EXPECT_EQ(fit.session_df, 10 - 2);
}

TEST(RunModel, RoundsOfOneSessionAreNotARoundLevel) {
  // Each session a round of its own (a plain run): the same fit as no rounds.
  auto data = sessions({{0, 0}, {0, 0}, {0, 0}, {1, 0}, {1, 0}, {1, 0}}, {1.0, 1.1, 1.05, 2.0, 2.1, 2.02});
  const auto plain = st::fit_run_model(data);
  for (std::size_t i = 0; i < data.log_means.size(); ++i) data.round.push_back(i);
  data.rounds = data.log_means.size();
  const auto fit = st::fit_run_model(data);
  ASSERT_TRUE(fit.valid && plain.valid);
  EXPECT_EQ(fit.round_df, 0);
  EXPECT_EQ(fit.round_variance, 0);
  EXPECT_EQ(fit.session_df, plain.session_df);
  EXPECT_DOUBLE_EQ(fit.session_variance, plain.session_variance);
}

TEST(RunModel, RoundPartTravelsWithTheSessionsInTheTest) {
  // The within part (sessions and rounds) is tested with the df it is given;
  // the per-session variance sessions_to_decide projects holds both parts.
  st::RunContrast c;
  c.valid = true;
  c.estimate = 0.1;
  c.session_part = 0.0004;
  c.round_part = 0.0002;
  c.run_part = 0;
  c.variance = 0.0006;
  const auto t = st::run_model_test(c, 7.5, 0, 5, 5);
  ASSERT_TRUE(t.valid) << t.reason;
  EXPECT_EQ(t.df, 7.5);
  EXPECT_EQ(t.test_df, 7.5);
  EXPECT_NEAR(t.variance, 0.0006 / (2.0 / 5), 1e-15);
  EXPECT_NEAR(t.standard_error, std::sqrt(0.0006), 1e-15);
  EXPECT_FALSE(st::run_model_test(c, 0.5, 0, 5, 5).valid);
}

TEST(RunModel, WithinDfLiesBetweenTheRoundsResidualAndThePooledSessions) {
  // Rounds that differ a little: REML keeps a small round variance, and the
  // contrast's df is Satterthwaite's, inside its two bounds.
  const auto data = plan_rounds(3, 6, {0.0, 0.003, -0.002, 0.004, 0.001, -0.003}, 0.1);
  const auto fit = st::fit_run_model(data);
  ASSERT_TRUE(fit.valid) << fit.reason;
  ASSERT_GT(fit.round_df, 0);
  EXPECT_EQ(fit.session_df, 10);
  EXPECT_EQ(fit.session_df_without_rounds, 15);
  ASSERT_TRUE(std::isfinite(fit.covariance_ss));
  EXPECT_GT(fit.covariance_ss, 0);
  EXPECT_GT(fit.covariance_bb, 0);
  const auto c = st::run_contrast(data, 0, 1, fit.session_variance, fit.run_variance, fit.round_variance);
  const double df = st::within_df(fit, c);
  EXPECT_GE(df, 10);
  EXPECT_LE(df, 15);
  // Where rounds are not modelled it is the sessions' df.
  auto flat = data;
  flat.round.clear();
  flat.rounds = 0;
  const auto flat_fit = st::fit_run_model(flat);
  EXPECT_EQ(st::within_df(flat_fit, st::run_contrast(flat, 0, 1, flat_fit.session_variance, 0)), 15);
}

TEST(RunModel, RefusesARoundAcrossTwoRuns) {
  auto data = sessions({{0, 0}, {1, 0}, {0, 1}, {1, 1}}, {1.0, 2.0, 1.1, 2.1});
  data.round = {0, 0, 0, 1};
  data.rounds = 2;
  const auto fit = st::fit_run_model(data);
  EXPECT_FALSE(fit.valid);
  EXPECT_EQ(fit.reason, "a round spans two runs");
}

}  // namespace
