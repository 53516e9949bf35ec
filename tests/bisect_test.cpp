// The bisect classification (src/analysis/bisect.cpp): against reference
// values computed with numpy/scipy by tests/data/make_bisect_reference.py
// (provenance in tests/data/bisect_reference.json), and by simulation with
// fixed seeds: the sequential procedure bisect runs (first sessions, then one
// more session at a time up to max looks) settles on the wrong side less
// often than alpha.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/bisect.h"
#include "support/reference_data.h"

namespace {

namespace an = kbench::analysis;
using nlohmann::json;

const json& reference() {
  static const json data = kbench::test::load_reference("bisect_reference.json");
  return data;
}

std::vector<double> numbers(const json& v) { return kbench::test::reference_numbers(v); }

TEST(BisectReference, ProvenanceNamesGenerator) {
  const auto& p = reference().at("provenance");
  EXPECT_EQ(p.at("generator"), "tests/data/make_bisect_reference.py");
  EXPECT_FALSE(p.at("scipy").get<std::string>().empty());
}

TEST(BisectReference, ClassifyRow) {
  const auto& cases = reference().at("classify_row");
  ASSERT_GE(cases.size(), 5u);
  int settled = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto r = an::classify_row(numbers(c.at("good")), numbers(c.at("bad")), numbers(c.at("candidate")),
                                    c.at("alpha").get<double>(), c.at("max_looks").get<int>());
    ASSERT_TRUE(r.valid) << r.reason;
    EXPECT_REF(r.position, c.at("position").get<double>());
    EXPECT_REF(r.standard_error, c.at("standard_error").get<double>());
    EXPECT_REF(r.df, c.at("df").get<double>());
    EXPECT_REF(r.level, c.at("level").get<double>());
    EXPECT_REF(r.low, c.at("low").get<double>());
    EXPECT_REF(r.high, c.at("high").get<double>());
    EXPECT_REF(r.fraction, c.at("fraction").get<double>());
    EXPECT_REF(r.fraction_low, c.at("fraction_low").get<double>());
    EXPECT_REF(r.fraction_high, c.at("fraction_high").get<double>());
    EXPECT_EQ(an::to_string(r.side), c.at("side").get<std::string>());
    if (r.side != an::BisectSide::Unsettled) ++settled;
  }
  EXPECT_GE(settled, 2);  // the reference holds settled cases, not only unsettled ones
}

TEST(BisectReference, CheckEndpoints) {
  for (const auto& c : reference().at("check_endpoints")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto r = an::check_endpoints(numbers(c.at("good")), numbers(c.at("bad")), c.at("lower_is_better").get<bool>(),
                                       c.at("alpha").get<double>());
    ASSERT_TRUE(r.valid) << r.reason;
    EXPECT_REF(r.log_change, c.at("log_change").get<double>());
    EXPECT_REF(r.standard_error, c.at("standard_error").get<double>());
    EXPECT_REF(r.df, c.at("df").get<double>());
    EXPECT_REF(r.low, c.at("low").get<double>());
    EXPECT_REF(r.high, c.at("high").get<double>());
    EXPECT_REF(r.change_pct, c.at("change_pct").get<double>());
    EXPECT_EQ(r.differs, c.at("differs").get<bool>());
  }
}

TEST(BisectRow, InvalidInputsSayWhy) {
  const std::vector<double> two{1.0, 1.1}, one{1.0}, bad{2.0, 2.1}, negative{1.0, -1.0};
  EXPECT_FALSE(an::classify_row(two, bad, one, 0.01, 4).valid);
  EXPECT_NE(an::classify_row(two, bad, negative, 0.01, 4).reason.find("> 0"), std::string::npos);
  EXPECT_NE(an::classify_row(two, two, two, 0.01, 4).reason.find("equal"), std::string::npos);
  EXPECT_FALSE(an::classify_row(two, bad, two, 0.0, 4).valid);
  EXPECT_FALSE(an::classify_row(two, bad, two, 0.01, 0).valid);
  const auto r = an::classify_row(two, bad, one, 0.01, 4);
  EXPECT_EQ(r.side, an::BisectSide::Unsettled);
}

TEST(BisectRow, ConstantSessionsSettleOnTheirSide) {
  // No noise at all: the interval is the point itself.
  const std::vector<double> good{10, 10}, bad{20, 20}, at_good{10, 10}, mid{std::sqrt(200.0), std::sqrt(200.0)};
  const auto r = an::classify_row(good, bad, at_good, 0.01, 4);
  ASSERT_TRUE(r.valid);
  EXPECT_EQ(r.side, an::BisectSide::Good);
  EXPECT_NEAR(r.fraction, 0.0, 1e-12);
  const auto m = an::classify_row(good, bad, mid, 0.01, 4);
  EXPECT_NEAR(m.position, 0.0, 1e-12);
}

an::RowPosition settled(an::BisectSide side) {
  an::RowPosition r;
  r.valid = true;
  r.side = side;
  return r;
}

TEST(BisectCommit, EveryRowMustAgree) {
  using S = an::BisectSide;
  using D = an::BisectDecision;
  const std::vector<std::string> names{"a", "b"};
  EXPECT_EQ(an::classify_commit({settled(S::Bad), settled(S::Bad)}, names).decision, D::Bad);
  EXPECT_EQ(an::classify_commit({settled(S::Good), settled(S::Good)}, names).decision, D::Good);
  EXPECT_EQ(an::classify_commit({settled(S::Good), settled(S::Unsettled)}, names).decision, D::Unsettled);
  const auto split = an::classify_commit({settled(S::Good), settled(S::Bad)}, names);
  EXPECT_EQ(split.decision, D::Skip);
  EXPECT_NE(split.why.find("different sides"), std::string::npos) << split.why;
  an::RowPosition invalid;
  invalid.reason = "a session mean is not > 0";
  const auto broken = an::classify_commit({settled(S::Bad), invalid}, names);
  EXPECT_EQ(broken.decision, D::Skip);
  EXPECT_NE(broken.why.find("b: a session mean"), std::string::npos) << broken.why;
  EXPECT_EQ(an::classify_commit({}, {}).decision, D::Skip);
}

// --- simulation: the error rate of the sequential procedure ----------------

// A fixed, portable generator (splitmix64 + Box-Muller): the same draws on
// every platform, unlike std::normal_distribution.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : state_(seed) {}
  double normal() {
    const double u1 = (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  }

 private:
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

struct Simulation {
  double good_level = 100, bad_level = 110;
  double candidate_level = 100;
  double session_cv = 0.03;  // log-normal session noise
  int endpoint_sessions = 3;
  int first_sessions = 3;
  int max_sessions = 12;
  double alpha = 0.05;
  int max_looks = 10;  // the level of every look is alpha / max_looks
  // As bisect run: one more session of each endpoint instead of the
  // candidate while the endpoints leave more of the interval
  // (analysis::next_session).
  bool grow_endpoints = true;
};

struct Tally {
  int good = 0, bad = 0, unsettled = 0;
};

// What bisect run does at one commit, `trials` times: endpoints measured
// once, the candidate's first sessions, then one more session at a time (of
// the candidate, or of both endpoints) until it is settled, the candidate
// has max_sessions or the looks are used up.
Tally simulate(const Simulation& s, int trials, std::uint64_t seed) {
  Noise noise(seed);
  const auto sessions = [&](double level, int n) {
    std::vector<double> out;
    for (int i = 0; i < n; ++i) out.push_back(level * std::exp(s.session_cv * noise.normal()));
    return out;
  };
  Tally tally;
  for (int trial = 0; trial < trials; ++trial) {
    auto good = sessions(s.good_level, s.endpoint_sessions);
    auto bad = sessions(s.bad_level, s.endpoint_sessions);
    auto candidate = sessions(s.candidate_level, s.first_sessions);
    an::BisectSide side = an::BisectSide::Unsettled;
    const int look_budget = s.max_sessions - s.first_sessions + 1;
    for (int looks = 1;; ++looks) {
      const auto row = an::classify_row(good, bad, candidate, s.alpha, s.max_looks);
      side = row.side;
      if (side != an::BisectSide::Unsettled || static_cast<int>(candidate.size()) >= s.max_sessions ||
          looks >= look_budget) {
        break;
      }
      if (s.grow_endpoints && an::next_session({row}) == an::NextSession::Endpoints &&
          static_cast<int>(good.size()) < s.max_sessions && static_cast<int>(bad.size()) < s.max_sessions) {
        good.push_back(sessions(s.good_level, 1).front());
        bad.push_back(sessions(s.bad_level, 1).front());
        continue;
      }
      candidate.push_back(sessions(s.candidate_level, 1).front());
    }
    if (side == an::BisectSide::Good) ++tally.good;
    if (side == an::BisectSide::Bad) ++tally.bad;
    if (side == an::BisectSide::Unsettled) ++tally.unsettled;
  }
  return tally;
}

constexpr int kTrials = 4000;

TEST(BisectSimulation, GoodCommitsAreRarelyCalledBad) {
  Simulation s;  // a 10% regression, 1.5% session noise
  s.session_cv = 0.015;
  const Tally t = simulate(s, kTrials, 1);
  EXPECT_LT(t.bad, s.alpha * kTrials) << t.good << " good, " << t.bad << " bad, " << t.unsettled << " unsettled";
  EXPECT_GT(t.good, kTrials / 2);  // and mostly settled: the test is not vacuous
}

TEST(BisectSimulation, BadCommitsAreRarelyCalledGood) {
  Simulation s;
  s.session_cv = 0.015;
  s.candidate_level = s.bad_level;
  const Tally t = simulate(s, kTrials, 2);
  EXPECT_LT(t.good, s.alpha * kTrials) << t.good << " good, " << t.bad << " bad, " << t.unsettled << " unsettled";
  EXPECT_GT(t.bad, kTrials / 2);
}

// The hardest case for the error rate: a candidate exactly at the midpoint
// (neither side is right). Every settled answer is an error of the kind the
// level bounds; Bonferroni over the looks keeps them below alpha.
TEST(BisectSimulation, MidpointSettlesLessOftenThanAlpha) {
  Simulation s;
  s.candidate_level = std::sqrt(s.good_level * s.bad_level);
  s.session_cv = 0.05;
  const Tally t = simulate(s, kTrials, 3);
  EXPECT_LT(t.good + t.bad, s.alpha * kTrials) << t.good << " good, " << t.bad << " bad";
}

// Without the correction (every look at alpha) the same procedure settles
// the midpoint candidate far more often: the correction is what holds the
// rate, so the test above can fail.
TEST(BisectSimulation, WithoutCorrectionTheLooksInflateTheErrorRate) {
  Simulation s;
  s.candidate_level = std::sqrt(s.good_level * s.bad_level);
  s.session_cv = 0.05;
  s.max_looks = 1;
  const Tally t = simulate(s, kTrials, 3);
  EXPECT_GT(t.good + t.bad, s.alpha * kTrials) << t.good << " good, " << t.bad << " bad";
}

// Noisy sessions against a small step: wrong answers stay rare; the budget
// runs out instead (unsettled, a skip in bisect).
TEST(BisectSimulation, HighNoiseEndsUnsettledRatherThanWrong) {
  Simulation s;
  s.bad_level = 103;
  s.session_cv = 0.05;
  const Tally t = simulate(s, kTrials, 4);
  EXPECT_LT(t.bad, s.alpha * kTrials);
  EXPECT_GT(t.unsettled, 0);
}

// A small step against few endpoint sessions: adding sessions to the
// candidate alone leaves most commits unsettled, since the endpoints' three
// sessions bound the interval; adding them to the endpoints settles most,
// and wrong answers stay rare.
TEST(BisectSimulation, EndpointSessionsSettleWhatTheCandidateAloneCannot) {
  Simulation s;  // a 5% regression, 1% session noise, as getppid under QEMU's icount
  s.bad_level = 105;
  s.session_cv = 0.01;
  s.candidate_level = s.good_level;
  s.alpha = 0.01;
  Simulation candidate_only = s;
  candidate_only.grow_endpoints = false;
  const Tally with = simulate(s, kTrials, 5);
  const Tally without = simulate(candidate_only, kTrials, 5);
  std::cout << "of " << kTrials << " good commits: " << with.good << " good, " << with.bad << " bad, " << with.unsettled
            << " unsettled with endpoint sessions; " << without.good << " good, " << without.bad << " bad, "
            << without.unsettled << " unsettled without\n";
  EXPECT_LT(with.unsettled * 2, without.unsettled)
      << "unsettled: " << with.unsettled << " with endpoint sessions, " << without.unsettled << " without";
  EXPECT_GT(with.good, kTrials * 9 / 10) << with.good << " good, " << with.bad << " bad, " << with.unsettled;
  EXPECT_LT(with.bad, s.alpha * kTrials);
}

TEST(BisectNextSession, TheEndpointsWhenTheirPartOfTheVarianceIsLarger) {
  const std::vector<double> noisy_good{96, 100, 104}, noisy_bad{100, 105, 110};
  const std::vector<double> tight_candidate{100, 100.2, 99.8, 100.1, 99.9, 100, 100.1, 99.9, 100, 100.2};
  const auto waiting_on_endpoints = an::classify_row(noisy_good, noisy_bad, tight_candidate, 0.01, 10);
  ASSERT_TRUE(waiting_on_endpoints.valid);
  ASSERT_EQ(waiting_on_endpoints.side, an::BisectSide::Unsettled);
  EXPECT_GT(waiting_on_endpoints.endpoints_variance, waiting_on_endpoints.candidate_variance);
  EXPECT_EQ(an::next_session({waiting_on_endpoints}), an::NextSession::Endpoints);

  const std::vector<double> tight_good{100, 100.1, 99.9, 100, 100.1, 99.9}, tight_bad{105, 105.1, 104.9, 105, 105.1, 104.9};
  const std::vector<double> noisy_candidate{96, 104, 101};
  const auto waiting_on_candidate = an::classify_row(tight_good, tight_bad, noisy_candidate, 0.01, 10);
  ASSERT_EQ(waiting_on_candidate.side, an::BisectSide::Unsettled);
  EXPECT_EQ(an::next_session({waiting_on_candidate}), an::NextSession::Candidate);
  // A settled row asks for nothing; the unsettled one decides.
  EXPECT_EQ(an::next_session({settled(an::BisectSide::Good)}), an::NextSession::Candidate);
  EXPECT_EQ(an::next_session({settled(an::BisectSide::Good), waiting_on_endpoints}), an::NextSession::Endpoints);
}

}  // namespace
