// `kbench noise` reports the SUT's run-to-run noise per row as compare tests
// separate runs with it (the run model's REML run variance, every kernel a
// group, all profiles; shrunk toward the SUT's other rows and floored), and
// the floor of a comparison of two separate runs; with no kernel measured in
// 2 runs it says plainly that the run noise is unknown, once per table.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/noise.h"
#include "report/format_table.h"
#include "stats/run_model.h"
#include "stats/stats.h"

namespace {

namespace analysis = kbench::analysis;
namespace stats = kbench::stats;
using kbench::Better;
using kbench::store::SampleRow;

struct Store {
  std::vector<SampleRow> samples;
  analysis::SessionOrigins origins;
  std::int64_t next_session = 1;
  std::map<std::string, int> next_index;

  // One session of `profile` on SUT "lab": one repeat per row, each row's
  // value 100 * exp(offset), measured in `run` of `kernel`.
  void session(const std::string& profile, const std::string& kernel, const std::string& run,
               const std::vector<std::pair<std::string, double>>& offsets) {
    const std::int64_t id = next_session++;
    origins[id] = {run, kernel, "", {}, {}};
    for (const auto& [benchmark, offset] : offsets) {
      SampleRow row;
      row.sut = "lab";
      row.swprofile = profile;
      row.session = id;
      row.session_index = next_index[profile];
      row.benchmark = benchmark;
      row.result_class = {"mean", "ns", Better::Lower};
      row.repeat = 0;
      row.value = 100 * std::exp(offset);
      samples.push_back(row);
    }
    ++next_index[profile];
  }
};

analysis::NoiseReport noise_of(const Store& store) {
  analysis::NoiseOptions options;
  options.profile = "base";
  return analysis::build_noise_report(store.samples, options, store.origins);
}

std::string render(const analysis::NoiseReport& report, std::string_view format) {
  std::ostringstream out;
  kbench::report::find_format(format, kbench::report::View::Noise).noise(report, out);
  return out.str();
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(NoiseRuns, RunNoiseIsTheRunModelsOverEveryKernelMeasuredInTwoRuns) {
  Store store;
  // Kernel k1 (profile base): run a with log offsets 0.00, 0.02, run b with
  // 0.04, 0.06.
  store.session("base", "k1", "a", {{"b/x", 0.00}});
  store.session("base", "k1", "a", {{"b/x", 0.02}});
  store.session("base", "k1", "b", {{"b/x", 0.04}});
  store.session("base", "k1", "b", {{"b/x", 0.06}});
  // Kernel k2 (another profile): three runs of one session.
  store.session("other", "k2", "c", {{"b/x", 0.00}});
  store.session("other", "k2", "d", {{"b/x", 0.03}});
  store.session("other", "k2", "e", {{"b/x", -0.03}});
  // Kernel k3: two sessions in one run teach nothing about runs.
  store.session("third", "k3", "f", {{"b/x", 0.50}});
  store.session("third", "k3", "f", {{"b/x", -0.50}});

  // The same sessions as the run model sees them: groups k1 k2 k3, runs a-f.
  const double base = std::log(100.0);
  stats::RunModelData data;
  data.log_means = {base, base + 0.02, base + 0.04, base + 0.06, base, base + 0.03, base - 0.03, base + 0.5, base - 0.5};
  data.group = {0, 0, 0, 0, 1, 1, 1, 2, 2};
  data.run = {0, 0, 1, 1, 2, 3, 4, 5, 5};
  data.groups = 3;
  data.runs = 6;
  const auto fit = stats::fit_run_model(data);
  ASSERT_TRUE(fit.valid) << fit.reason;
  ASSERT_FALSE(fit.runs_folded);
  // 6 runs, 3 components (each kernel its own runs): 3 run df.
  EXPECT_EQ(fit.run_df, 3);
  // One row: the machine is that row, so the variance is its own REML one,
  // or the floor of the session noise of a run mean (9 sessions in 6
  // kernel-run cells), whichever is larger.
  const double expected = std::max(fit.run_variance, fit.session_variance / (9.0 / 6.0));

  const auto report = noise_of(store);
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& table = report.tables[0];
  EXPECT_EQ(table.rows_runs_unknown, 0);
  ASSERT_EQ(table.rows.size(), 1u);
  const auto& row = table.rows[0];
  EXPECT_FALSE(row.runs_folded);
  EXPECT_NEAR(row.run_noise.variance, expected, 1e-12);
  EXPECT_NEAR(row.run_cv_pct, std::sqrt(expected) * 100, 1e-9);
  EXPECT_EQ(row.run_noise.df, 3);
  EXPECT_EQ(row.run_noise.runs, 5u);  // k1's 2 and k2's 3; k3's one run teaches nothing

  ASSERT_TRUE(std::isfinite(row.floor_pct));
  EXPECT_GT(row.floor_runs_pct, row.floor_pct);
  EXPECT_DOUBLE_EQ(row.floor_runs_pct,
                   stats::session_floor_runs_percent(4, row.floor_log_variance, row.floor_prior_df, row.run_noise,
                                                     report.floor_alpha, report.power));

  const std::string grid = render(report, "grid");
  EXPECT_NE(grid.find("5 runs, "), std::string::npos) << grid;
  EXPECT_EQ(grid.find("Run-to-run noise"), std::string::npos) << grid;
  const auto json = nlohmann::json::parse(render(report, "json"));
  const auto& json_row = json.at("tables").at(0).at("rows").at(0);
  EXPECT_NEAR(json_row.at("run_noise").at("cv_pct").get<double>(), std::sqrt(expected) * 100, 1e-9);
  EXPECT_EQ(json_row.at("run_noise").at("df").get<double>(), 3);
  EXPECT_EQ(json_row.at("run_noise").at("runs").get<int>(), 5);
  EXPECT_DOUBLE_EQ(json_row.at("noise_floor_runs_pct").get<double>(), row.floor_runs_pct);
}

TEST(NoiseRuns, TwoRunsThatHappenToAgreeDoNotMakeTheRunNoiseZero) {
  // The store of the false mark compare once made: base measured in two runs
  // whose means agree, though sessions scatter. REML puts the run variance
  // at 0; the run noise noise reports (and compare tests with) is floored
  // at the session noise of a run mean, never 0.
  Store store;
  for (const double offset : {0.05, -0.05}) store.session("base", "k1", "a", {{"b/x", offset}});
  for (const double offset : {-0.05, 0.05}) store.session("base", "k1", "b", {{"b/x", offset}});
  const auto report = noise_of(store);
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& row = report.tables[0].rows.at(0);
  EXPECT_EQ(row.run_noise.df, 1);
  const double base = std::log(100.0);
  stats::RunModelData data;
  data.log_means = {base + 0.05, base - 0.05, base - 0.05, base + 0.05};
  data.group = {0, 0, 0, 0};
  data.run = {0, 0, 1, 1};
  data.groups = 1;
  data.runs = 2;
  const auto fit = stats::fit_run_model(data);
  ASSERT_TRUE(fit.valid) << fit.reason;
  EXPECT_NEAR(fit.run_variance, 0, 1e-12);
  ASSERT_GT(fit.session_variance, 0);
  // A run mean of 2 sessions varies by half the session variance.
  EXPECT_NEAR(row.run_noise.variance, fit.session_variance / 2, 1e-12);
  EXPECT_GT(row.floor_runs_pct, row.floor_pct);
}

TEST(NoiseRuns, SessionsThatAreEachARunFoldTheRunNoiseIntoTheSessions) {
  // kbench calibrate --spread: every session a run of its own. Run and
  // session noise are one; the floor already covers separate runs.
  Store store;
  int run = 0;
  for (const double offset : {0.0, 0.03, -0.02, 0.01}) store.session("base", "k1", "r" + std::to_string(run++), {{"b/x", offset}});
  const auto report = noise_of(store);
  const auto& row = report.tables.at(0).rows.at(0);
  EXPECT_TRUE(row.runs_folded);
  EXPECT_EQ(row.run_noise.df, 3);  // 4 sessions, 1 group
  EXPECT_EQ(row.run_noise.runs, 4u);
  const double mean = (0.0 + 0.03 - 0.02 + 0.01) / 4;
  double squares = 0;
  for (const double offset : {0.0, 0.03, -0.02, 0.01}) squares += (offset - mean) * (offset - mean);
  EXPECT_NEAR(row.run_noise.variance, squares / 3, 1e-9);
  EXPECT_DOUBLE_EQ(row.floor_runs_pct, row.floor_pct);
}

TEST(NoiseRuns, WithoutAKernelInTwoRunsTheTableSaysOnceThatTheRunNoiseIsUnknown) {
  Store store;
  for (double offset : {0.0, 0.01, -0.01}) store.session("base", "k1", "a", {{"b/x", offset}, {"b/y", offset}});
  store.session("other", "k2", "b", {{"b/x", 0.0}, {"b/y", 0.0}});
  store.session("other", "k2", "b", {{"b/x", 0.02}, {"b/y", 0.02}});

  const auto report = noise_of(store);
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& table = report.tables[0];
  EXPECT_EQ(table.rows_runs_unknown, 2);
  for (const auto& row : table.rows) {
    EXPECT_EQ(row.run_noise.df, 0);
    EXPECT_TRUE(std::isnan(row.run_cv_pct));
    EXPECT_TRUE(std::isnan(row.floor_runs_pct));
    EXPECT_TRUE(std::isfinite(row.floor_pct));  // the sessions' floor is still known
  }
  const std::string grid = render(report, "grid");
  EXPECT_EQ(occurrences(grid,
                        "Run-to-run noise: unknown (no kernel on this SUT was measured in 2 runs; kbench calibrate "
                        "measures it) - comparisons of separate runs are not tested."),
            1u)
      << grid;
  EXPECT_EQ(grid.find("floor runs:"), std::string::npos) << grid;  // nothing to explain
  const auto json = nlohmann::json::parse(render(report, "json"));
  EXPECT_EQ(json.at("tables").at(0).at("run_noise_unknown"), analysis::unknown_run_noise_text());
  EXPECT_TRUE(json.at("tables").at(0).at("rows").at(0).at("run_noise").is_null());
  const std::string csv = render(report, "csv");
  EXPECT_NE(csv.find(",run_cv_pct,run_df,runs,noise_floor_runs_pct\n"), std::string::npos) << csv;
  EXPECT_EQ(occurrences(csv, ",,0,0,\n"), 2u) << csv;  // NaN cv, 0 df, 0 runs, no floor
}

TEST(NoiseRuns, ARowMeasuredInOneRunBorrowsTheMachinesRunNoise) {
  Store store;
  // b/x measured by base in runs a and b; b/y only in run a. The machine's
  // drift is shared by its rows: b/y's comparisons across runs are tested
  // with what b/x measured (compare does the same), so b/y's run noise is
  // known, with b/x's df.
  store.session("base", "k1", "a", {{"b/x", 0.0}, {"b/y", 0.0}});
  store.session("base", "k1", "a", {{"b/x", 0.01}, {"b/y", 0.01}});
  store.session("base", "k1", "b", {{"b/x", 0.03}});
  const auto report = noise_of(store);
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& table = report.tables[0];
  EXPECT_EQ(table.rows_runs_unknown, 0);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].run_noise.df, 1);
  EXPECT_EQ(table.rows[1].run_noise.df, 1);
  EXPECT_GT(table.rows[1].run_noise.variance, 0);
  const std::string grid = render(report, "grid");
  EXPECT_EQ(grid.find("Run-to-run noise unknown"), std::string::npos) << grid;
  EXPECT_NE(grid.find("2 runs, "), std::string::npos) << grid;
}

TEST(NoiseRuns, WithoutOriginsEveryProfileIsOneRunAndTheRunNoiseIsUnknown) {
  Store store;
  store.session("base", "k1", "a", {{"b/x", 0.0}});
  store.session("base", "k1", "b", {{"b/x", 0.05}});
  analysis::NoiseOptions options;
  options.profile = "base";
  const auto report = analysis::build_noise_report(store.samples, options);
  ASSERT_EQ(report.tables.size(), 1u);
  EXPECT_EQ(report.tables[0].rows_runs_unknown, 1);
  EXPECT_EQ(report.tables[0].rows[0].run_noise.df, 0);
}

}  // namespace
