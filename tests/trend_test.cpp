// analysis/trend: kernel-version order, and a planted step found, tested
// and printed by the text renderer.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <tuple>

#include "analysis/trend.h"
#include "common/errors.h"
#include "report/trend.h"

namespace {

using kbench::analysis::order_swprofiles;
using kbench::analysis::parse_kernel_version;
using kbench::analysis::TrendOrder;

TEST(TrendVersion, ReadsTheNamesKernelsGoBy) {
  const auto rc = parse_kernel_version("6.12.0-rc3");
  ASSERT_TRUE(rc);
  EXPECT_EQ(std::tuple(rc->major, rc->minor, rc->patch, rc->rc), std::tuple(6, 12, 0, 3));
  const auto debian = parse_kernel_version("6.12.117+deb12-cloud-amd64");
  ASSERT_TRUE(debian);
  EXPECT_EQ(std::tuple(debian->major, debian->minor, debian->patch, debian->rc), std::tuple(6, 12, 117, 0));
  EXPECT_EQ(debian->suffix, "+deb12-cloud-amd64");
  const auto tag = parse_kernel_version("v6.13");
  ASSERT_TRUE(tag);
  EXPECT_EQ(std::tuple(tag->major, tag->minor, tag->patch), std::tuple(6, 13, 0));
  EXPECT_TRUE(parse_kernel_version("linux-6.1.5"));
  EXPECT_FALSE(parse_kernel_version("base"));
  EXPECT_FALSE(parse_kernel_version("patched-v2"));
  EXPECT_FALSE(parse_kernel_version("6"));
  EXPECT_FALSE(parse_kernel_version("6.12abc"));
}

TEST(TrendVersion, ReleaseCandidatesComeBeforeTheirRelease) {
  const std::vector<std::string> stored{"v6.13", "6.12.1", "6.12", "6.12-rc10", "6.12.0-rc2", "6.12-rc7",
                                        "6.11.117+deb12-cloud-amd64", "6.11.9"};
  const auto ordered = order_swprofiles(stored, TrendOrder::Version);
  EXPECT_EQ(ordered.order, TrendOrder::Version);
  EXPECT_EQ(ordered.note, "");
  EXPECT_EQ(ordered.names, (std::vector<std::string>{"6.11.9", "6.11.117+deb12-cloud-amd64", "6.12.0-rc2",
                                                     "6.12-rc7", "6.12-rc10", "6.12", "6.12.1", "v6.13"}));
}

TEST(TrendVersion, ANameThatIsNoVersionFallsBackToStoreOrderAndSaysSo) {
  const std::vector<std::string> stored{"6.13", "base", "6.12"};
  const auto ordered = order_swprofiles(stored, TrendOrder::Version);
  EXPECT_EQ(ordered.order, TrendOrder::Store);
  EXPECT_EQ(ordered.names, stored);
  EXPECT_NE(ordered.note.find("'base' is not a kernel version"), std::string::npos);
  EXPECT_EQ(order_swprofiles(stored, TrendOrder::Store).note, "");
}

TEST(TrendVersion, OrderOptionIsChecked) {
  EXPECT_EQ(kbench::analysis::parse_trend_order("store"), TrendOrder::Store);
  EXPECT_THROW(kbench::analysis::parse_trend_order("time"), kbench::InputError);
}

// Ten kernels, three sessions each, five repeats a session; the mean steps
// up 10 % (a regression: lower is better) at the seventh.
std::vector<kbench::store::SampleRow> planted_trend(std::vector<std::string>& names) {
  std::mt19937_64 random(11);
  std::normal_distribution<double> normal(0, 1);
  std::vector<kbench::store::SampleRow> samples;
  std::int64_t session = 0;
  for (int k = 0; k < 10; ++k) {
    const std::string name = "6." + std::to_string(10 + k);
    names.push_back(name);
    const double level = 100 * (k >= 6 ? 1.10 : 1.0) * std::exp(0.005 * normal(random));
    for (int s = 0; s < 3; ++s) {
      ++session;
      const double session_level = level * std::exp(0.005 * normal(random));
      for (int r = 0; r < 5; ++r) {
        kbench::store::SampleRow row;
        row.sut = "vm";
        row.swprofile = name;
        row.session = session;
        row.session_index = s;
        row.benchmark = "syscall/getpid";
        row.result_class = {"mean", "ns", kbench::Better::Lower};
        row.repeat = r;
        row.value = session_level * (1 + 0.002 * normal(random));
        samples.push_back(row);
      }
    }
  }
  return samples;
}

TEST(Trend, APlantedStepIsFoundTestedAndMarked) {
  std::vector<std::string> names;
  const auto samples = planted_trend(names);
  kbench::analysis::TrendOptions options;
  options.swprofiles = names;
  const auto trend = kbench::analysis::build_trend(samples, options);
  ASSERT_EQ(trend.rows.size(), 1u);
  const auto& row = trend.rows.front();
  ASSERT_TRUE(row.changes.valid) << row.changes.reason;
  ASSERT_EQ(row.points.size(), 10u);
  EXPECT_EQ(row.points[0].sessions, 3u);
  EXPECT_FALSE(row.points[0].ci_of_repeats);
  EXPECT_EQ(row.changes.segmentation.change_points, (std::vector<std::size_t>{6}));
  ASSERT_EQ(row.steps.size(), 1u);
  const auto& step = row.steps.front();
  EXPECT_EQ(step.before_label, "6.10..6.15");
  EXPECT_EQ(step.after_label, "6.16..6.19");
  ASSERT_EQ(step.row.cells.size(), 1u);
  EXPECT_EQ(step.row.cells[0].verdict, kbench::analysis::Verdict::Regression);
  EXPECT_NEAR(step.row.cells[0].change_pct, 10, 1.5);
  EXPECT_EQ(step.row.cells[0].base_sessions, 18u);

  std::ostringstream text;
  kbench::report::render_trend_text(trend, "", text);
  const std::string out = text.str();
  EXPECT_NE(out.find("Trend of syscall/getpid mean (ns) on SUT vm (lower is better):"), std::string::npos) << out;
  EXPECT_NE(out.find("| 6.16        |          3 |"), std::string::npos) << out;
  EXPECT_NE(out.find("change point: (R) -"), std::string::npos) << out;
  EXPECT_NE(out.find("Change points: 1 (6.10..6.15 -> 6.16..6.19)."), std::string::npos) << out;
  EXPECT_NE(out.find("| syscall/getpid | mean (ns)      | 6.10..6.15 -> 6.16..6.19 |"), std::string::npos) << out;
}

TEST(Trend, AFlatTrendHasNoChangePoint) {
  std::vector<std::string> names;
  auto samples = planted_trend(names);
  for (auto& sample : samples) {
    if (sample.swprofile >= "6.16") sample.value /= 1.10;
  }
  kbench::analysis::TrendOptions options;
  options.swprofiles = names;
  const auto trend = kbench::analysis::build_trend(samples, options);
  ASSERT_EQ(trend.rows.size(), 1u);
  EXPECT_TRUE(trend.rows[0].changes.valid);
  EXPECT_TRUE(trend.rows[0].steps.empty());
  std::ostringstream text;
  kbench::report::render_trend_text(trend, "", text);
  EXPECT_NE(text.str().find("Change points: none."), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("No change points: no steps to show."), std::string::npos) << text.str();
}

TEST(Trend, AnExactStepOfADeterministicRowIsReportedAndMarked) {
  // Six kernels, two sessions each, every repeat exactly 100 and then 110 (a
  // count, not a time): no noise at all, and a step of 10 %.
  std::vector<kbench::store::SampleRow> samples;
  std::vector<std::string> names;
  std::int64_t session = 0;
  for (int k = 0; k < 6; ++k) {
    names.push_back("6." + std::to_string(10 + k));
    for (int s = 0; s < 2; ++s) {
      ++session;
      for (int r = 0; r < 3; ++r) {
        kbench::store::SampleRow row;
        row.sut = "vm";
        row.swprofile = names.back();
        row.session = session;
        row.session_index = s;
        row.benchmark = "mm/pages";
        row.result_class = {"faults", "count", kbench::Better::Lower};
        row.repeat = r;
        row.value = k < 3 ? 100 : 110;
        samples.push_back(row);
      }
    }
  }
  kbench::analysis::TrendOptions options;
  options.swprofiles = names;
  const auto trend = kbench::analysis::build_trend(samples, options);
  ASSERT_EQ(trend.rows.size(), 1u);
  const auto& row = trend.rows.front();
  ASSERT_TRUE(row.changes.valid) << row.changes.reason;
  EXPECT_EQ(row.changes.segmentation.change_points, (std::vector<std::size_t>{3}));
  ASSERT_EQ(row.steps.size(), 1u);
  ASSERT_EQ(row.steps[0].row.cells.size(), 1u);
  EXPECT_EQ(row.steps[0].row.cells[0].verdict, kbench::analysis::Verdict::Regression);
  EXPECT_NEAR(row.steps[0].row.cells[0].change_pct, 10, 1e-9);
  std::ostringstream text;
  kbench::report::render_trend_text(trend, "", text);
  EXPECT_NE(text.str().find("Change points: 1 (6.10..6.12 -> 6.13..6.15)."), std::string::npos) << text.str();
}

TEST(Trend, SutsAndParameterSetsThatReadAsOneNumberAreRowsOfTheirOwn) {
  std::vector<std::string> names;
  const auto planted = planted_trend(names);
  std::vector<kbench::store::SampleRow> samples;
  // The planted trend on vm1 with loops=10, twice as slow on vm01 and three
  // times as slow with loops=010 on vm1: each in sessions of its own.
  const std::tuple<const char*, const char*, double> copies[] = {
      {"vm1", "10", 1}, {"vm01", "10", 2}, {"vm1", "010", 3}};
  std::int64_t offset = 0;
  for (const auto& [sut, loops, factor] : copies) {
    for (auto sample : planted) {
      sample.sut = sut;
      sample.params = {{"loops", loops}};
      sample.session += offset;
      sample.value *= factor;
      samples.push_back(sample);
    }
    offset += 1000;
  }
  kbench::analysis::TrendOptions options;
  options.swprofiles = names;
  const auto trend = kbench::analysis::build_trend(samples, options);
  ASSERT_EQ(trend.rows.size(), 3u);
  const std::tuple<std::string, std::string, double> expected[] = {
      {"vm01", "10", 200}, {"vm1", "010", 300}, {"vm1", "10", 100}};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& row = trend.rows[i];
    const auto& [sut, loops, level] = expected[i];
    EXPECT_EQ(row.sut, sut);
    EXPECT_EQ(row.params, (kbench::Params{{"loops", loops}}));
    ASSERT_EQ(row.points.size(), 10u);
    EXPECT_EQ(row.points[0].sessions, 3u) << sut << " loops=" << loops << ": pooled with another row";
    EXPECT_NEAR(row.points[0].samples.mean, level, level * 0.02) << sut << " loops=" << loops;
    ASSERT_EQ(row.steps.size(), 1u) << sut << " loops=" << loops;
    EXPECT_EQ(row.steps[0].row.cells.at(0).base_sessions, 18u) << sut << " loops=" << loops;
  }
}

TEST(Trend, TooFewSwprofilesSaysWhy) {
  std::vector<std::string> names;
  auto samples = planted_trend(names);
  kbench::analysis::TrendOptions options;
  options.swprofiles = {"6.10", "6.11", "6.12"};
  const auto trend = kbench::analysis::build_trend(samples, options);
  ASSERT_EQ(trend.rows.size(), 1u);
  EXPECT_FALSE(trend.rows[0].changes.valid);
  std::ostringstream text;
  kbench::report::render_trend_text(trend, "", text);
  EXPECT_NE(text.str().find("No change point detection: needs at least 4 swprofiles"), std::string::npos);
}

}  // namespace

// The per-swprofile CI of a heavy-tailed row (a p99.9, ten sessions, two of
// them lifted by preemption bursts) stays above zero: it is computed on the
// log scale (stats::positive_mean_ci), where the plain t-interval of the
// session means read -59.13 .. 2106.03 ns (tests/data/positive_ci_reference.json).
TEST(Trend, AHeavyTailedPointsCiStaysAboveZero) {
  const std::vector<double> session_means{412.0, 398.5, 405.2, 1890.0, 401.7, 399.9, 407.3, 403.1, 396.8, 5120.0};
  std::vector<kbench::store::SampleRow> samples;
  std::int64_t session = 0;
  for (const std::string name : {"6.10", "6.11"}) {
    for (std::size_t s = 0; s < session_means.size(); ++s) {
      kbench::store::SampleRow row;
      row.sut = "vm";
      row.swprofile = name;
      row.session = ++session;
      row.session_index = int(s);
      row.benchmark = "syscall/getpid";
      row.result_class = {"p99.9", "ns", kbench::Better::Lower};
      row.repeat = 0;
      row.value = session_means[s];
      samples.push_back(row);
    }
  }
  kbench::analysis::TrendOptions options;
  options.swprofiles = {"6.10", "6.11"};
  const auto trend = kbench::analysis::build_trend(samples, options);
  ASSERT_EQ(trend.rows.size(), 1u);
  ASSERT_EQ(trend.rows.front().points.size(), 2u);
  const auto& point = trend.rows.front().points.front();
  EXPECT_EQ(point.sessions, 10u);
  EXPECT_FALSE(point.ci_of_repeats);
  EXPECT_NEAR(point.ci_low, 419.494, 0.001);
  EXPECT_NEAR(point.ci_high, 1947.272, 0.001);
  EXPECT_GT(point.ci_low, 0);
}
