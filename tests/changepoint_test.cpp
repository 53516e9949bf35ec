// src/stats/changepoint: PELT against brute-force and optimal-partitioning
// optima computed by tests/data/make_changepoint_reference.py (numpy,
// provenance in the JSON), and the trend detector on simulated trends with
// known steps (fixed seeds: the rates are the same on every run).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "stats/changepoint.h"
#include "support/reference_data.h"

namespace {

using nlohmann::json;
using kbench::test::reference_number;
using kbench::test::reference_numbers;

const json& reference() {
  static const json data = kbench::test::load_reference("changepoint_reference.json");
  return data;
}

std::vector<std::size_t> indices(const json& v) { return v.get<std::vector<std::size_t>>(); }

TEST(ChangepointReference, ProvenanceIsRecorded) {
  const auto& p = reference().at("provenance");
  EXPECT_EQ(p.at("generator").get<std::string>(), "tests/data/make_changepoint_reference.py");
  EXPECT_FALSE(p.at("numpy").get<std::string>().empty());
  EXPECT_GE(reference().at("segmentations").size(), 15u);
}

TEST(ChangepointReference, PeltFindsTheOptimumOfEveryReferenceSegmentation) {
  for (const auto& c : reference().at("segmentations")) {
    const auto values = reference_numbers(c.at("values"));
    const auto weights = reference_numbers(c.at("weights"));
    const double penalty = c.at("penalty").get<double>();
    const auto min_segment = c.at("min_segment").get<std::size_t>();
    SCOPED_TRACE(c.at("method").get<std::string>() + ", n " + std::to_string(values.size()) + ", min segment " +
                 std::to_string(min_segment));
    const auto pelt = kbench::stats::pelt_mean_changes(values, weights, penalty, min_segment);
    EXPECT_EQ(pelt.change_points, indices(c.at("change_points")));
    EXPECT_REF(pelt.penalised_cost, reference_number(c.at("penalised_cost")));
    const auto op = kbench::stats::optimal_partitioning(values, weights, penalty, min_segment);
    EXPECT_EQ(op.change_points, indices(c.at("change_points")));
    EXPECT_REF(op.penalised_cost, reference_number(c.at("penalised_cost")));
    EXPECT_REF(kbench::stats::mean_segment_cost(values, weights, 0, values.size()),
               reference_number(c.at("segment_cost_whole")));
  }
}

TEST(ChangepointReference, TrendNoiseModel) {
  for (const auto& c : reference().at("trend_noise")) {
    const auto per_point = c.at("session_means").get<std::vector<std::vector<double>>>();
    const auto noise = kbench::stats::trend_noise(per_point);
    ASSERT_TRUE(noise.valid) << noise.reason;
    const auto means = reference_numbers(c.at("means"));
    const auto variances = reference_numbers(c.at("variances"));
    ASSERT_EQ(noise.means.size(), means.size());
    for (std::size_t k = 0; k < means.size(); ++k) {
      EXPECT_REF(noise.means[k], means[k]);
      EXPECT_REF(noise.variances[k], variances[k]);
    }
    EXPECT_REF(noise.within, reference_number(c.at("within")));
    EXPECT_EQ(noise.within_df, c.at("within_df").get<double>());
    EXPECT_REF(noise.between, reference_number(c.at("between")));
  }
}

TEST(ChangepointReference, TrendPenaltyForAnEstimatedNoise) {
  for (const auto& c : reference().at("trend_penalty")) {
    EXPECT_REF(kbench::stats::trend_penalty(c.at("base").get<double>(), c.at("df").get<double>()),
               reference_number(c.at("penalty")));
  }
  EXPECT_TRUE(std::isinf(kbench::stats::trend_penalty(6, 0)));
}

// A minimum segment length must not let pruning drop a start that only
// later becomes the best: PELT equals optimal partitioning on many random
// series with steps, for every minimum length.
TEST(Changepoint, PeltEqualsOptimalPartitioningOnRandomSeries) {
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> weight(0.2, 5);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 2 + trial % 37;
    std::vector<double> values(n), weights(n);
    double level = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (random() % 6 == 0) level += 3 * normal(random);
      weights[i] = weight(random);
      values[i] = level + normal(random) / std::sqrt(weights[i]);
    }
    for (std::size_t min_segment : {1u, 2u, 3u, 5u}) {
      for (double penalty : {0.0, 1.0, 3 * std::log(double(n)), 20.0}) {
        const auto pelt = kbench::stats::pelt_mean_changes(values, weights, penalty, min_segment);
        const auto op = kbench::stats::optimal_partitioning(values, weights, penalty, min_segment);
        ASSERT_EQ(pelt.change_points, op.change_points) << "trial " << trial << " min " << min_segment;
        ASSERT_NEAR(pelt.penalised_cost, op.penalised_cost, 1e-9 * (1 + std::abs(op.penalised_cost)));
      }
    }
  }
}

TEST(Changepoint, RefusesInputItCannotScore) {
  const std::vector<double> values{1, 2, 3};
  EXPECT_THROW(kbench::stats::pelt_mean_changes(values, std::vector<double>{1, 1}, 1), std::invalid_argument);
  EXPECT_THROW(kbench::stats::pelt_mean_changes(values, std::vector<double>{1, 0, 1}, 1), std::invalid_argument);
  EXPECT_THROW(kbench::stats::pelt_mean_changes(values, std::vector<double>{1, 1, 1}, -1), std::invalid_argument);
  EXPECT_THROW(kbench::stats::pelt_mean_changes(values, std::vector<double>{1, 1, 1}, 1, 0), std::invalid_argument);
}

TEST(ChangepointTrendNoise, SaysWhyThereIsNoEstimate) {
  EXPECT_NE(kbench::stats::trend_noise({{1}, {2}, {3}}).reason.find("at least 4 swprofiles"), std::string::npos);
  EXPECT_NE(kbench::stats::trend_noise({{1}, {2}, {}, {3}}).reason.find("no session"), std::string::npos);
  EXPECT_NE(kbench::stats::trend_noise({{1}, {2}, {-1}, {3}}).reason.find("<= 0"), std::string::npos);
  EXPECT_NE(kbench::stats::trend_noise({{5}, {5}, {5}, {5}}).reason.find("do not vary"), std::string::npos);
}

TEST(ChangepointTrendNoise, AnExactStepInASeriesWithoutNoiseIsFound) {
  // A deterministic row (a count, a size): every successive difference but
  // the step's is exactly 0, so their MAD is 0 however large the step.
  const std::vector<std::vector<double>> step{{100}, {100}, {100}, {110}, {110}, {110}};
  const auto changes = kbench::stats::detect_trend_changes(step);
  ASSERT_TRUE(changes.valid) << changes.reason;
  EXPECT_EQ(changes.segmentation.change_points, std::vector<std::size_t>{3});
  // Two sessions a swprofile, each the same: the same step.
  const std::vector<std::vector<double>> sessions{{100, 100}, {100, 100}, {100, 100}, {100, 100},
                                                  {110, 110}, {110, 110}, {110, 110}, {110, 110}};
  const auto twice = kbench::stats::detect_trend_changes(sessions);
  ASSERT_TRUE(twice.valid) << twice.reason;
  EXPECT_EQ(twice.segmentation.change_points, std::vector<std::size_t>{4});
  // Two exact steps, the last kernel alone.
  const auto two = kbench::stats::detect_trend_changes({{100}, {100}, {100}, {90}, {90}, {90}, {120}});
  ASSERT_TRUE(two.valid) << two.reason;
  EXPECT_EQ(two.segmentation.change_points, (std::vector<std::size_t>{3, 6}));
}

// --- simulated trends -------------------------------------------------------
// A swprofile's level carries a run effect (its boots, its day) and each of
// its sessions a session effect, both log-normal: the model of
// docs/statistics.md with the sizes a kernel's session noise has.
struct Simulation {
  std::size_t points = 12;
  std::size_t sessions = 3;
  double run_sd = 0.01;      // of log level per swprofile
  double session_sd = 0.01;  // of log session mean
  std::size_t step_at = 0;   // 0: no step
  double step = 0;           // relative, e.g. 0.06
};

std::vector<std::vector<double>> simulate(const Simulation& s, std::mt19937_64& random) {
  std::normal_distribution<double> normal(0, 1);
  std::vector<std::vector<double>> out;
  for (std::size_t k = 0; k < s.points; ++k) {
    const double level = 1000 * (s.step_at > 0 && k >= s.step_at ? 1 + s.step : 1) *
                         std::exp(s.run_sd * normal(random));
    auto& sessions = out.emplace_back();
    for (std::size_t j = 0; j < s.sessions; ++j) sessions.push_back(level * std::exp(s.session_sd * normal(random)));
  }
  return out;
}

struct Rates {
  double series_with_false_alarm = 0;  // share of series with a change point not at the step
  double detected_exactly = 0;         // share of series with a change point exactly at the step
};

Rates rates(const Simulation& s, int series, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  int false_alarms = 0, detected = 0;
  for (int i = 0; i < series; ++i) {
    const auto changes = kbench::stats::detect_trend_changes(simulate(s, random));
    EXPECT_TRUE(changes.valid) << changes.reason;
    bool hit = false, other = false;
    for (std::size_t at : changes.segmentation.change_points) (at == s.step_at ? hit : other) = true;
    detected += hit;
    false_alarms += other;
  }
  return {double(false_alarms) / series, double(detected) / series};
}

TEST(ChangepointSimulation, NullTrendsRarelyShowAChange) {
  for (std::size_t points : {8u, 12u, 20u, 40u}) {
    for (const auto& [sessions, run_sd] : std::vector<std::pair<std::size_t, double>>{{1, 0.01}, {3, 0.0}, {3, 0.02}}) {
      Simulation s;
      s.points = points;
      s.sessions = sessions;
      s.run_sd = run_sd;
      const Rates r = rates(s, 400, 1000 + points + sessions);
      SCOPED_TRACE(testing::Message() << points << " swprofiles x " << sessions << " sessions, run sd " << run_sd);
      RecordProperty("null_false_alarms_" + std::to_string(points) + "_" + std::to_string(sessions),
                     std::to_string(r.series_with_false_alarm));
      EXPECT_LE(r.series_with_false_alarm, 0.10);
    }
  }
}

TEST(ChangepointSimulation, AStepOfFourNoiseUnitsIsFoundWhereItIs) {
  for (std::size_t points : {10u, 20u}) {
    Simulation s;
    s.points = points;
    s.step_at = points / 2;
    // The sd of a swprofile's mean is sqrt(0.01^2 + 0.01^2 / 3) = 1.15 %.
    s.step = 0.046;
    const Rates r = rates(s, 300, 77 + points);
    SCOPED_TRACE(testing::Message() << points << " swprofiles");
    EXPECT_GE(r.detected_exactly, 0.80);
    EXPECT_LE(r.series_with_false_alarm, 0.10);
  }
}

TEST(ChangepointSimulation, TheNewestKernelAloneCanBeTheStep) {
  Simulation s;
  s.points = 12;
  s.step_at = 11;
  s.step = 0.08;  // 7 noise units: one swprofile carries little evidence
  const Rates r = rates(s, 300, 4242);
  EXPECT_GE(r.detected_exactly, 0.80);
}

}  // namespace
