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
  for (auto g : data.group) data.groups = std::max(data.groups, g + 1);
  for (auto r : data.run) data.runs = std::max(data.runs, r + 1);
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
  ASSERT_GE(cases.size(), 6u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    ASSERT_TRUE(c.at("converged").get<bool>());
    const auto data = data_of(c);
    const auto fit = st::fit_run_model(data);
    ASSERT_TRUE(fit.valid) << fit.reason;
    expect_close(fit.session_variance, c.at("session_variance").get<double>());
    expect_close(fit.run_variance, c.at("run_variance").get<double>());
    const auto means = c.at("group_means").get<std::vector<double>>();
    ASSERT_EQ(fit.group_means.size(), means.size());
    for (std::size_t g = 0; g < means.size(); ++g) expect_close(fit.group_means[g], means[g], 1e-7);
    const auto contrast = st::run_contrast(data, 0, 1, fit.session_variance, fit.run_variance);
    ASSERT_TRUE(contrast.valid);
    expect_close(contrast.estimate, c.at("contrast_estimate").get<double>());
    expect_close(contrast.variance, c.at("contrast_variance").get<double>());
    // The two parts add up to the variance (it is homogeneous of degree 1).
    EXPECT_NEAR(contrast.session_part + contrast.run_part, contrast.variance, 1e-12 * contrast.variance);
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

}  // namespace
