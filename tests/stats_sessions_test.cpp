// The session-level test (src/stats/sessions.cpp) against reference values
// computed with scipy/numpy by tests/data/make_sessions_reference.py: Student's
// pooled t (scipy.stats.ttest_ind) without a prior, Smyth's (2004) moderated t
// with one; provenance is in tests/data/sessions_reference.json.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stats/stats.h"
#include "support/reference_data.h"

namespace {

using nlohmann::json;
namespace st = kbench::stats;

const json& reference() {
  static const json data = kbench::test::load_reference("sessions_reference.json");
  return data;
}

double number(const json& v) { return kbench::test::reference_number(v); }
std::vector<double> numbers(const json& v) { return kbench::test::reference_numbers(v); }

st::NoisePrior prior_of(const json& c) {
  st::NoisePrior prior;
  prior.df = number(c.at("prior_df"));
  prior.variance = number(c.at("prior_variance"));
  return prior;
}

st::SessionTest run(const json& c) {
  const auto base = numbers(c.at("base"));
  const auto test = numbers(c.at("test"));
  return st::session_test(base, test, prior_of(c), number(c.at("confidence")));
}

TEST(SessionsReference, ProvenanceNamesGeneratorAndMethod) {
  const auto& p = reference().at("provenance");
  EXPECT_EQ(p.at("generator"), "tests/data/make_sessions_reference.py");
  EXPECT_FALSE(p.at("scipy").get<std::string>().empty());
  EXPECT_NE(p.at("moderated_t").get<std::string>().find("Smyth"), std::string::npos);
}

TEST(SessionsReference, PoolLogSessionVariance) {
  const auto& cases = reference().at("pool_log_session_variance");
  ASSERT_GE(cases.size(), 6u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    std::vector<std::vector<double>> profiles;
    for (const auto& p : c.at("profiles")) profiles.push_back(numbers(p));
    const auto prior = st::pool_log_session_variance(profiles);
    EXPECT_EQ(prior.df, number(c.at("df")));
    EXPECT_EQ(prior.profiles, c.at("profiles_used").get<std::size_t>());
    EXPECT_REF(prior.variance, number(c.at("variance")));
  }
}

TEST(SessionsReference, SessionTestAgreesWithScipyAndSmyth) {
  const auto& cases = reference().at("session_test");
  ASSERT_GE(cases.size(), 15u);
  int with_prior = 0, scipy_checked = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto r = run(c);
    ASSERT_EQ(r.valid, c.at("valid").get<bool>()) << r.reason;
    EXPECT_EQ(r.base_sessions, c.at("base").size());
    EXPECT_EQ(r.test_sessions, c.at("test").size());
    if (!r.valid) {
      EXPECT_FALSE(r.reason.empty());
      continue;
    }
    EXPECT_TRUE(r.reason.empty()) << r.reason;
    const std::string method = c.at("method");
    if (method.find("scipy.stats.ttest_ind") == 0) ++scipy_checked;
    if (number(c.at("expected_prior_df")) > 0) ++with_prior;
    EXPECT_REF(r.log_change, number(c.at("expected_log_change")));
    EXPECT_REF(r.variance, number(c.at("expected_variance")));
    EXPECT_REF(r.df, number(c.at("expected_df")));
    EXPECT_REF(r.prior_df, number(c.at("expected_prior_df")));
    EXPECT_REF(r.standard_error, number(c.at("expected_standard_error")));
    EXPECT_REF(r.statistic, number(c.at("expected_statistic")));
    EXPECT_REF(r.p_value, number(c.at("expected_p_value")));
    EXPECT_REF(r.ci_low_pct, number(c.at("expected_ci_low_pct")));
    EXPECT_REF(r.ci_high_pct, number(c.at("expected_ci_high_pct")));
  }
  EXPECT_GE(scipy_checked, 6);
  EXPECT_GE(with_prior, 6);
}

TEST(SessionsReference, SessionTestWithARunTerm) {
  const auto& cases = reference().at("session_test_runs");
  ASSERT_GE(cases.size(), 3u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    st::RunTerm term;
    term.noise.variance = number(c.at("run_noise_variance"));
    term.noise.df = number(c.at("run_noise_df"));
    term.base_runs = c.at("base_runs").get<std::size_t>();
    term.test_runs = c.at("test_runs").get<std::size_t>();
    const auto r = st::session_test(numbers(c.at("base")), numbers(c.at("test")), prior_of(c),
                                    number(c.at("confidence")), &term);
    ASSERT_TRUE(r.valid) << r.reason;
    EXPECT_REF(r.standard_error, number(c.at("expected_standard_error")));
    EXPECT_REF(r.statistic, number(c.at("expected_statistic")));
    EXPECT_REF(r.test_df, number(c.at("expected_test_df")));
    EXPECT_REF(r.run_variance, number(c.at("expected_run_variance")));
    EXPECT_REF(r.p_value, number(c.at("expected_p_value")));
    EXPECT_REF(r.ci_low_pct, number(c.at("expected_ci_low_pct")));
    EXPECT_REF(r.ci_high_pct, number(c.at("expected_ci_high_pct")));
    // The run term only widens: without it the same sessions test tighter.
    const auto without = st::session_test(numbers(c.at("base")), numbers(c.at("test")), prior_of(c),
                                          number(c.at("confidence")));
    EXPECT_LT(without.standard_error, r.standard_error);
    EXPECT_LT(without.p_value, r.p_value);
  }
}

TEST(SessionTest, MoreSessionsCannotOutrunTheRunTerm) {
  // A 4 % change with runs that differ by ~10 %: no number of sessions in
  // these two runs decides it, the run term stays; without runs it would.
  const std::vector<double> base{100, 101, 99}, test{104, 105, 103};
  st::NoisePrior prior;
  prior.df = 10;
  prior.variance = 0.01 * 0.01;
  st::RunTerm term;
  term.noise.variance = 0.1 * 0.1;
  term.noise.df = 4;
  const auto with_runs = st::session_test(base, test, prior, 0.95, &term);
  const auto alone = st::session_test(base, test, prior, 0.95);
  EXPECT_GT(st::sessions_to_decide(with_runs, 2.0, 0.95, 50), 50);
  EXPECT_LE(st::sessions_to_decide(alone, 2.0, 0.95, 50), 50);
}

TEST(SessionsReference, SessionsToDecide) {
  std::map<std::string, json> tests;
  for (const auto& c : reference().at("session_test")) tests[c.at("name")] = c;
  const auto& cases = reference().at("sessions_to_decide");
  ASSERT_GE(cases.size(), 8u);
  for (const auto& c : cases) {
    const std::string name = c.at("test");
    SCOPED_TRACE(name + ", min change " + c.at("min_change_pct").dump());
    const auto r = run(tests.at(name));
    EXPECT_EQ(st::sessions_to_decide(r, number(c.at("min_change_pct")), number(c.at("confidence")),
                                     c.at("limit").get<int>()),
              c.at("value").get<int>());
  }
}

TEST(SessionsReference, SessionFloorPercent) {
  const auto& cases = reference().at("session_floor_percent");
  ASSERT_GE(cases.size(), 6u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.dump());
    EXPECT_REF(st::session_floor_percent(c.at("sessions_per_side").get<std::size_t>(),
                                         number(c.at("log_variance")), number(c.at("prior_df")),
                                         number(c.at("alpha")), number(c.at("power"))),
               number(c.at("value")));
  }
}

TEST(SessionsReference, SessionFloorRunsPercent) {
  const auto& cases = reference().at("session_floor_runs_percent");
  ASSERT_GE(cases.size(), 6u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.dump());
    st::RunNoise run;
    run.variance = number(c.at("run_variance"));
    run.df = number(c.at("run_df"));
    EXPECT_REF(st::session_floor_runs_percent(c.at("sessions_per_side").get<std::size_t>(),
                                              number(c.at("log_variance")), number(c.at("prior_df")), run,
                                              number(c.at("alpha")), number(c.at("power"))),
               number(c.at("value")));
  }
}

// Properties that need no reference tool.

TEST(SessionTest, IsAntisymmetricInTheSides) {
  const std::vector<double> a{100, 103, 98}, b{107, 110, 104};
  const st::NoisePrior prior{0.0004, 6, 2};
  const auto ab = st::session_test(a, b, prior), ba = st::session_test(b, a, prior);
  ASSERT_TRUE(ab.valid && ba.valid);
  EXPECT_DOUBLE_EQ(ab.statistic, -ba.statistic);
  EXPECT_DOUBLE_EQ(ab.p_value, ba.p_value);
}

TEST(SessionTest, APriorNarrowsTheIntervalOfOneSessionASide) {
  const std::vector<double> a{100}, b{103};
  const auto none = st::session_test(a, b, {});
  EXPECT_FALSE(none.valid);
  EXPECT_NE(none.reason.find("1 session a side"), std::string::npos);
  const auto small = st::session_test(a, b, {0.0009, 4, 2});
  const auto large = st::session_test(a, b, {0.0009, 40, 10});
  ASSERT_TRUE(small.valid && large.valid);
  EXPECT_GT(small.ci_high_pct - small.ci_low_pct, large.ci_high_pct - large.ci_low_pct);
}

TEST(SessionFloor, ShrinksWithSessionsAndGrowsWithNoise) {
  EXPECT_GT(st::session_floor_percent(3, 0.0009, 0), st::session_floor_percent(6, 0.0009, 0));
  EXPECT_LT(st::session_floor_percent(3, 0.0004, 0), st::session_floor_percent(3, 0.0009, 0));
  EXPECT_TRUE(std::isnan(st::session_floor_percent(1, 0.0009, 0)));
  EXPECT_TRUE(std::isnan(st::session_floor_percent(3, -1, 0)));
}

TEST(SessionFloor, SeparateRunsRaiseItAndMoreSessionsCannotRemoveTheRunTerm) {
  const st::RunNoise run{0.0004, 6, 8};
  EXPECT_GT(st::session_floor_runs_percent(3, 0.0009, 0, run), st::session_floor_percent(3, 0.0009, 0));
  // With many sessions the session part vanishes; 2V stays.
  EXPECT_GT(st::session_floor_runs_percent(1000, 0.0009, 0, run), std::expm1(std::sqrt(2 * 0.0004)) * 100 * 2);
  EXPECT_DOUBLE_EQ(st::session_floor_runs_percent(3, 0.0009, 0, {0.0, 4, 5}), st::session_floor_percent(3, 0.0009, 0));
  EXPECT_TRUE(std::isnan(st::session_floor_runs_percent(3, 0.0009, 0, {})));
}

}  // namespace

// positive_mean_ci, the per-swprofile CI of `kbench trend`, against
// tests/data/positive_ci_reference.json (make_positive_ci_reference.py).
TEST(PositiveMeanCi, MatchesTheReferenceAndNeverGoesBelowZeroOnTheLogScale) {
  const json data = kbench::test::load_reference("positive_ci_reference.json");
  EXPECT_EQ(data.at("provenance").at("generator"), "tests/data/make_positive_ci_reference.py");
  const auto& cases = data.at("positive_mean_ci");
  ASSERT_GE(cases.size(), 8u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto values = numbers(c.at("values"));
    const auto ci = st::positive_mean_ci(values, number(c.at("confidence")));
    EXPECT_EQ(ci.log_scale, c.at("log_scale").get<bool>());
    EXPECT_REF(ci.low, number(c.at("low")));
    EXPECT_REF(ci.high, number(c.at("high")));
    if (ci.log_scale) {
      EXPECT_GT(ci.low, 0);
      EXPECT_LE(ci.low, ci.high);
    }
  }
}

TEST(PositiveMeanCi, TheOldTIntervalWentBelowZeroForTheHeavyTailedRow) {
  // The case that motivated it (-56.33 .. 1910.56 ns for p99.9):
  // ten session means, two lifted by preemption bursts. The plain t-interval
  // (what trend printed before) reaches below zero; this one does not, and
  // still holds the arithmetic mean the point prints.
  const json data = kbench::test::load_reference("positive_ci_reference.json");
  const json& c = data.at("positive_mean_ci").at(0);
  ASSERT_EQ(c.at("name"), "heavy right tail, 10 sessions");
  const auto values = numbers(c.at("values"));
  const auto old = st::summarize(values);
  EXPECT_REF(old.ci95_low, number(c.at("t_low")));
  EXPECT_LT(old.ci95_low, 0);
  const auto ci = st::positive_mean_ci(values);
  EXPECT_GT(ci.low, 0);
  EXPECT_LT(ci.low, old.mean);
  EXPECT_GT(ci.high, old.mean);
}

TEST(PositiveMeanCi, FewerThanTwoValuesHaveNoInterval) {
  EXPECT_TRUE(std::isnan(st::positive_mean_ci(std::vector<double>{5.0}).low));
  EXPECT_TRUE(std::isnan(st::positive_mean_ci(std::vector<double>{}).high));
}
