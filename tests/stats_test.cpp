// src/stats against reference values computed with scipy/numpy (and R for BH)
// by tests/data/make_stats_reference.py; provenance is in the JSON file.
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
  static const json data = kbench::test::load_reference("stats_reference.json");
  return data;
}

double number(const json& v) { return kbench::test::reference_number(v); }
std::vector<double> numbers(const json& v) { return kbench::test::reference_numbers(v); }

TEST(StatsReference, ProvenanceIsRecorded) {
  const auto& p = reference().at("provenance");
  EXPECT_EQ(p.at("scipy").get<std::string>().rfind("1.", 0), 0u);
  EXPECT_FALSE(p.at("generated_utc").get<std::string>().empty());
}

TEST(StatsReference, Summarize) {
  const auto& cases = reference().at("summarize");
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto values = numbers(c.at("values"));
    const auto s = st::summarize(values);
    EXPECT_EQ(s.count, c.at("count").get<std::size_t>());
    EXPECT_REF(s.mean, number(c.at("mean")));
    EXPECT_REF(s.median, number(c.at("median")));
    EXPECT_REF(s.stddev, number(c.at("stddev")));
    EXPECT_REF(s.cv, number(c.at("cv")));
    EXPECT_REF(s.min, number(c.at("min")));
    EXPECT_REF(s.max, number(c.at("max")));
    EXPECT_REF(s.ci95_low, number(c.at("ci95_low")));
    EXPECT_REF(s.ci95_high, number(c.at("ci95_high")));
  }
}

TEST(StatsReference, StudentTQuantile) {
  const auto& cases = reference().at("t_quantile");
  ASSERT_GE(cases.size(), 50u);
  for (const auto& c : cases) {
    const double p = number(c.at("p")), df = number(c.at("df"));
    SCOPED_TRACE("p=" + std::to_string(p) + " df=" + std::to_string(df));
    EXPECT_REF(st::student_t_quantile(p, df), number(c.at("value")));
  }
}

TEST(StatsReference, MeanCiHalfwidth) {
  for (const auto& c : reference().at("mean_ci_halfwidth")) {
    EXPECT_REF(st::mean_ci_halfwidth(number(c.at("stddev")), c.at("count").get<std::size_t>(),
                                     number(c.at("confidence"))),
               number(c.at("value")));
  }
}

TEST(StatsReference, Welch) {
  const auto& cases = reference().at("welch");
  ASSERT_GE(cases.size(), 15u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto a = numbers(c.at("a")), b = numbers(c.at("b"));
    const auto r = st::welch_t_test(a, b);
    EXPECT_EQ(r.valid, c.at("valid").get<bool>());
    if (c.contains("reason")) {
      EXPECT_EQ(r.reason, c.at("reason").get<std::string>());
    }
    if (!r.valid) {
      EXPECT_FALSE(r.reason.empty());
    }
    EXPECT_REF(r.statistic, number(c.at("statistic")));
    EXPECT_REF(r.p_value, number(c.at("p_value")));
    if (r.valid) {
      EXPECT_REF(r.df, number(c.at("df")));
    }
  }
}

TEST(StatsReference, MannWhitneyU) {
  const auto& cases = reference().at("mwu");
  ASSERT_GE(cases.size(), 20u);
  int exact = 0, asymptotic = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto a = numbers(c.at("a")), b = numbers(c.at("b"));
    const auto r = st::mann_whitney_u(a, b);
    EXPECT_TRUE(r.valid) << r.reason;
    EXPECT_REF(r.statistic, number(c.at("statistic")));
    EXPECT_REF(r.p_value, number(c.at("p_value")));
    (c.at("method") == "exact" ? exact : asymptotic)++;
  }
  // Both branches of scipy's method="auto" must be covered by the data.
  EXPECT_GE(exact, 10);
  EXPECT_GE(asymptotic, 8);
}

TEST(StatsReference, Ci95Disjoint) {
  std::map<std::string, st::Summary> by_name;
  for (const auto& c : reference().at("summarize")) {
    by_name[c.at("name")] = st::summarize(numbers(c.at("values")));
  }
  int disjoint = 0;
  for (const auto& c : reference().at("ci95_disjoint")) {
    SCOPED_TRACE(c.at("a").get<std::string>() + " / " + c.at("b").get<std::string>());
    const bool expected = c.at("disjoint").get<bool>();
    EXPECT_EQ(st::ci95_disjoint(by_name.at(c.at("a")), by_name.at(c.at("b"))), expected);
    EXPECT_EQ(st::ci95_disjoint(by_name.at(c.at("b")), by_name.at(c.at("a"))), expected);
    disjoint += expected;
  }
  EXPECT_GE(disjoint, 2);
}

TEST(StatsReference, BenjaminiHochberg) {
  for (const auto& c : reference().at("bh")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto p = numbers(c.at("p"));
    const auto expected = numbers(c.at("q"));
    const auto q = st::benjamini_hochberg(p);
    ASSERT_EQ(q.size(), expected.size());
    for (std::size_t i = 0; i < q.size(); ++i) EXPECT_REF(q[i], expected[i]);
  }
}

TEST(StatsReference, RelativeChangeCi) {
  const auto& cases = reference().at("relative_change_ci");
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto a = st::summarize(numbers(c.at("a")));
    const auto b = st::summarize(numbers(c.at("b")));
    const auto ci = st::relative_change_ci(a, b, number(c.at("confidence")));
    EXPECT_EQ(ci.valid, c.at("valid").get<bool>());
    EXPECT_REF(ci.low, number(c.at("low")));
    EXPECT_REF(ci.high, number(c.at("high")));
  }
}

TEST(StatsReference, SessionVariance) {
  for (const auto& c : reference().at("session_variance")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    std::vector<std::vector<double>> sessions;
    for (const auto& s : c.at("sessions")) sessions.push_back(numbers(s));
    const auto d = st::session_variance(sessions);
    EXPECT_EQ(d.valid, c.at("valid").get<bool>());
    if (!d.valid) {
      EXPECT_EQ(d.reason, c.at("reason").get<std::string>());
      EXPECT_FALSE(st::session_noisy(d));
      continue;
    }
    EXPECT_REF(d.ms_between, number(c.at("ms_between")));
    EXPECT_REF(d.ms_within, number(c.at("ms_within")));
    EXPECT_REF(d.n0, number(c.at("n0")));
    EXPECT_REF(d.between, number(c.at("between")));
    EXPECT_REF(d.within, number(c.at("within")));
    EXPECT_REF(d.between_share, number(c.at("between_share")));
    EXPECT_EQ(st::session_noisy(d), c.at("noisy").get<bool>());
    const auto means = st::session_means(sessions);
    const auto expected_means = numbers(c.at("session_means"));
    ASSERT_EQ(means.size(), expected_means.size());
    for (std::size_t i = 0; i < means.size(); ++i) EXPECT_REF(means[i], expected_means[i]);
  }
}

TEST(StatsReference, NoiseFloor) {
  for (const auto& c : reference().at("noise_floor")) {
    const auto na = c.at("count_a").get<std::size_t>(), nb = c.at("count_b").get<std::size_t>();
    const double cva = number(c.at("cv_a")), cvb = number(c.at("cv_b"));
    const double alpha = number(c.at("alpha")), power = number(c.at("power"));
    SCOPED_TRACE(c.dump());
    EXPECT_REF(st::noise_floor_percent(na, cva, nb, cvb, alpha, power), number(c.at("value")));
    if (na == nb && cva == cvb) {
      EXPECT_REF(st::noise_floor_percent(na, cva, alpha, power), number(c.at("value")));
    }
  }
}

TEST(StatsReference, GeometricMean) {
  for (const auto& c : reference().at("geometric_mean")) {
    SCOPED_TRACE(c.dump());
    EXPECT_REF(st::geometric_mean(numbers(c.at("values"))), number(c.at("value")));
  }
}

// Properties that need no reference tool.

TEST(Stats, WelchTooFewSamplesSaysWhy) {
  const std::vector<double> one{1.0}, two{1.0, 2.0};
  const auto r = st::welch_t_test(one, two);
  EXPECT_FALSE(r.valid);
  EXPECT_EQ(r.reason, "needs at least 2 samples per side");
  EXPECT_TRUE(std::isnan(r.p_value));
}

TEST(Stats, WelchIsAntisymmetric) {
  const std::vector<double> a{10.1, 10.3, 9.9, 10.0}, b{10.6, 10.4, 10.9};
  const auto ab = st::welch_t_test(a, b), ba = st::welch_t_test(b, a);
  EXPECT_DOUBLE_EQ(ab.statistic, -ba.statistic);
  EXPECT_DOUBLE_EQ(ab.p_value, ba.p_value);
}

TEST(Stats, MannWhitneyEmptySideIsInvalid) {
  const std::vector<double> none, some{1.0, 2.0};
  const auto r = st::mann_whitney_u(none, some);
  EXPECT_FALSE(r.valid);
  EXPECT_FALSE(r.reason.empty());
}

TEST(Stats, MannWhitneyExactSumsToOne) {
  // With U at the centre of the null distribution the two-sided p is capped at 1.
  const std::vector<double> a{1, 4, 5, 8}, b{2, 3, 6, 7};
  const auto r = st::mann_whitney_u(a, b);
  EXPECT_EQ(r.statistic, 8.0);
  EXPECT_EQ(r.p_value, 1.0);
}

TEST(Stats, BenjaminiHochbergIsMonotoneAndBounded) {
  const std::vector<double> p{0.001, 0.5, 0.02, std::nan(""), 0.03, 0.9, 0.04};
  const auto q = st::benjamini_hochberg(p);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (std::isnan(p[i])) {
      EXPECT_TRUE(std::isnan(q[i]));
      continue;
    }
    EXPECT_GE(q[i], p[i]);
    EXPECT_LE(q[i], 1.0);
    for (std::size_t j = 0; j < p.size(); ++j) {
      if (!std::isnan(p[j]) && p[j] <= p[i]) {
        EXPECT_LE(q[j], q[i]);
      }
    }
  }
}

TEST(Stats, ChangeCiAgreesWithWelchVerdict) {
  // Fieller with Welch df excludes 0% exactly when Welch's p < 0.05.
  const std::vector<double> a{100, 101, 99.5, 100.2, 100.8}, b{101.9, 102.5, 101.0, 102.2};
  const auto ci = st::relative_change_ci(st::summarize(a), st::summarize(b));
  const auto t = st::welch_t_test(a, b);
  ASSERT_TRUE(ci.valid);
  EXPECT_EQ(ci.low > 0 || ci.high < 0, t.p_value < 0.05);
  const double point = (st::summarize(b).mean / st::summarize(a).mean - 1) * 100;
  EXPECT_LT(ci.low, point);
  EXPECT_GT(ci.high, point);
}

TEST(Stats, SessionNoisyNeedsTwoSessions) {
  st::SessionVariance one_session;
  one_session.valid = true;
  one_session.sessions = 1;
  one_session.between = 5;
  one_session.within = 1;
  EXPECT_FALSE(st::session_noisy(one_session));
}

}  // namespace
