// `kbench noise` reports the noise BETWEEN sessions: the cv of the log session
// means, the noise model of the other profiles on the same SUT, the floor of
// the session test, and plainly that the noise is unknown with one session.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/noise.h"
#include "report/format_table.h"
#include "stats/stats.h"

namespace {

namespace analysis = kbench::analysis;
namespace stats = kbench::stats;
using kbench::Better;
using kbench::store::SampleRow;

std::int64_t next_session_id = 1;

// Sessions of one profile on one SUT, each a list of repeats of row b/x "mean (ns)".
void add(std::vector<SampleRow>& rows, const std::string& sut, const std::string& profile,
         const std::vector<std::vector<double>>& sessions, const std::string& result_class = "mean") {
  for (std::size_t s = 0; s < sessions.size(); ++s) {
    const std::int64_t id = next_session_id++;
    for (std::size_t r = 0; r < sessions[s].size(); ++r) {
      SampleRow row;
      row.sut = sut;
      row.swprofile = profile;
      row.session = id;
      row.session_index = static_cast<int>(s);
      row.benchmark = "b/x";
      row.result_class = {result_class, "ns", Better::Lower};
      row.repeat = static_cast<int>(r);
      row.value = sessions[s][r];
      rows.push_back(row);
    }
  }
}

analysis::NoiseReport noise_of(const std::vector<SampleRow>& rows, const std::string& profile = "base") {
  analysis::NoiseOptions options;
  options.profile = profile;
  return analysis::build_noise_report(rows, options);
}

std::string render(const analysis::NoiseReport& report, std::string_view format) {
  std::ostringstream out;
  kbench::report::find_format(format, kbench::report::View::Noise).noise(report, out);
  return out.str();
}

double log_variance(const std::vector<double>& means) {
  std::vector<double> logs;
  for (double m : means) logs.push_back(std::log(m));
  const double sd = stats::summarize(logs).stddev;
  return sd * sd;
}

TEST(NoiseBetween, OneSessionWithoutModelSaysTheNoiseIsUnknownAndPrintsNoFloor) {
  std::vector<SampleRow> rows;
  add(rows, "lab", "base", {{100.0, 100.2, 99.9, 100.1, 99.8}});
  const auto report = noise_of(rows);
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& table = report.tables[0];
  EXPECT_EQ(table.rows_unknown, 1);
  EXPECT_FALSE(table.aa_done);
  const auto& row = table.rows.at(0);
  EXPECT_EQ(row.floor_basis, analysis::FloorBasis::Unknown);
  EXPECT_TRUE(std::isnan(row.floor_pct));
  EXPECT_TRUE(std::isnan(row.floor_alone_pct));
  EXPECT_TRUE(std::isnan(row.between_cv_pct));
  EXPECT_GT(row.within_cv_pct, 0);  // the repeats' noise is known, and is not the floor
  EXPECT_EQ(row.note, analysis::unknown_noise_text());
  EXPECT_EQ(report.floor_rows, 0);

  const std::string grid = render(report, "grid");
  EXPECT_NE(grid.find("unknown (1 session)"), std::string::npos) << grid;
  EXPECT_NE(grid.find("Between-session noise unknown for 1 of 1 rows: 1 session: the noise between sessions, "
                      "which decides every verdict, is unknown; run kbench run again under this profile or "
                      "kbench calibrate."),
            std::string::npos)
      << grid;
  EXPECT_EQ(grid.find("A/A marks"), std::string::npos) << grid;  // no repeats split presented as A/A
  EXPECT_EQ(grid.find("floor alone: the same at level"), std::string::npos) << grid;  // no floor to explain
  EXPECT_NE(grid.find("no A/A comparison: it needs 4 sessions (2 a half), this profile has 1"), std::string::npos);

  const std::string csv = render(report, "csv");
  EXPECT_NE(csv.find(",unknown,"), std::string::npos) << csv;
  const std::string json = render(report, "json");
  EXPECT_NE(json.find("\"noise_floor_pct\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"noise_unknown\": \"1 session: the noise between sessions"), std::string::npos) << json;
}

TEST(NoiseBetween, OneSessionBorrowsTheModelOfOtherProfilesOnTheSameSut) {
  std::vector<SampleRow> rows;
  add(rows, "lab", "base", {{100.0, 100.2, 99.9}});
  add(rows, "lab", "q2", {{101.0, 101.1}, {98.0, 98.2}, {103.0, 102.9}});
  add(rows, "lab", "q3", {{200.0}, {206.0}});
  add(rows, "lab", "single", {{50.0, 50.1}});                    // 1 session: adds nothing
  add(rows, "other-sut", "q4", {{100.0}, {150.0}, {70.0}});      // another machine's noise: ignored
  const auto report = noise_of(rows);
  ASSERT_EQ(report.tables.size(), 1u);
  EXPECT_EQ(report.tables[0].sut, "lab");
  EXPECT_EQ(report.tables[0].other_profiles, 3);
  EXPECT_EQ(report.tables[0].rows_unknown, 0);
  const auto& row = report.tables[0].rows.at(0);
  const auto q2 = std::vector<double>{101.05, 98.1, 102.95};
  const auto q3 = std::vector<double>{200.0, 206.0};
  const double expected_variance = (2 * log_variance(q2) + 1 * log_variance(q3)) / 3;
  EXPECT_EQ(row.model.df, 3);
  EXPECT_EQ(row.model.profiles, 2u);
  EXPECT_NEAR(row.model.variance, expected_variance, 1e-15);
  EXPECT_NEAR(row.model_cv_pct, std::sqrt(expected_variance) * 100, 1e-12);
  EXPECT_EQ(row.floor_basis, analysis::FloorBasis::Model);
  EXPECT_NEAR(row.floor_pct, stats::session_floor_percent(1, expected_variance, 3, 0.05, 0.8), 1e-12);
  EXPECT_TRUE(row.note.empty());
  const std::string grid = render(report, "grid");
  EXPECT_NE(grid.find("(m)"), std::string::npos) << grid;
  EXPECT_NE(grid.find("3 df, "), std::string::npos) << grid;
}

TEST(NoiseBetween, BetweenCvIsTheSdOfLogSessionMeansAndWithinCvThePooledRepeatNoise) {
  std::vector<SampleRow> rows;
  const std::vector<std::vector<double>> sessions{{100.0, 101.0, 99.0}, {104.0, 104.5, 103.5}, {97.0, 97.2, 96.8}};
  add(rows, "lab", "base", sessions);
  const auto report = noise_of(rows);
  const auto& row = report.tables.at(0).rows.at(0);
  EXPECT_EQ(row.sessions, 3u);
  const std::vector<double> means{100.0, 104.0, 97.0};
  EXPECT_NEAR(row.between_cv_pct, std::sqrt(log_variance(means)) * 100, 1e-12);
  // Squared deviations inside sessions: 2, 0.5, 0.08 over N - k = 6 df.
  const double mean = (300.0 + 312.0 + 291.0) / 9;
  EXPECT_NEAR(row.within_cv_pct, std::sqrt(2.58 / 6) / mean * 100, 1e-12);
  EXPECT_GT(row.between_cv_pct, 5 * row.within_cv_pct);
  EXPECT_EQ(row.floor_basis, analysis::FloorBasis::Sessions);
  EXPECT_NEAR(row.floor_pct, stats::session_floor_percent(3, log_variance(means), 0, 0.05, 0.8), 1e-12);
  // The old floor, from the repeats as if they were independent, is far lower:
  // exactly what made one-session reports look precise.
  EXPECT_LT(stats::noise_floor_percent(9, row.summary.cv), row.floor_pct);
}

TEST(NoiseBetween, OwnSessionsPoolWithTheModelAsTheSessionTestPoolsThem) {
  std::vector<SampleRow> rows;
  add(rows, "lab", "base", {{100.0}, {102.0}});
  add(rows, "lab", "q2", {{50.0}, {51.0}, {49.0}, {50.5}});
  const auto report = noise_of(rows);
  const auto& row = report.tables.at(0).rows.at(0);
  const double own = log_variance({100.0, 102.0});
  const double model = log_variance({50.0, 51.0, 49.0, 50.5});
  EXPECT_EQ(row.floor_basis, analysis::FloorBasis::SessionsAndModel);
  EXPECT_NEAR(row.floor_log_variance, (3 * model + 1 * own) / 4, 1e-15);
  EXPECT_EQ(row.floor_prior_df, 3);
  EXPECT_NEAR(row.floor_pct, stats::session_floor_percent(2, (3 * model + own) / 4, 3, 0.05, 0.8), 1e-12);
}

TEST(NoiseBetween, FloorAloneIsAtTheLevelOverTheRowsWithAFloor) {
  std::vector<SampleRow> rows;
  add(rows, "lab", "base", {{100.0}, {102.0}, {99.0}});
  add(rows, "lab", "base", {{10.0}, {10.1}, {10.3}}, "p99");
  add(rows, "lab", "lonely", {{5.0}}, "p50");  // another profile's row: not one of base's rows
  const auto report = noise_of(rows);
  ASSERT_EQ(report.tables.at(0).rows.size(), 2u);
  EXPECT_EQ(report.floor_rows, 2);
  EXPECT_DOUBLE_EQ(report.floor_alone_alpha, 0.025);
  for (const auto& row : report.tables[0].rows) {
    EXPECT_NEAR(row.floor_alone_pct,
                stats::session_floor_percent(3, row.floor_log_variance, 0, 0.025, 0.8), 1e-12);
    EXPECT_GT(row.floor_alone_pct, row.floor_pct);
  }
}

TEST(NoiseBetween, HalfSplitOnlyWithTwoSessionsInEachHalf) {
  std::vector<SampleRow> three;
  add(three, "lab", "base", {{100.0, 100.1}, {101.0, 101.1}, {99.0, 99.1}});
  const auto no_split = noise_of(three);
  EXPECT_FALSE(no_split.tables.at(0).aa_done);
  EXPECT_FALSE(no_split.tables[0].rows.at(0).aa.present);
  EXPECT_EQ(no_split.tables[0].split, "no A/A comparison: it needs 4 sessions (2 a half), this profile has 3");
  EXPECT_EQ(render(no_split, "grid").find("A/A change"), std::string::npos);

  std::vector<SampleRow> four;
  add(four, "lab", "base", {{100.0, 100.1}, {101.0, 101.1}, {99.0, 99.1}, {100.5, 100.4}});
  const auto split = noise_of(four);
  EXPECT_TRUE(split.tables.at(0).aa_done);
  EXPECT_EQ(split.tables[0].split, "A/A: sessions split in order: #0-#1 (2) against #2-#3 (2)");
  EXPECT_TRUE(split.tables[0].rows.at(0).aa.present);
  const std::string grid = render(split, "grid");
  EXPECT_NE(grid.find("A/A marks (false alarms): "), std::string::npos) << grid;
}

TEST(NoiseBetween, ASessionMeanAtOrBelowZeroHasNoRelativeFloor) {
  std::vector<SampleRow> rows;
  add(rows, "lab", "base", {{1.0, -3.0}, {2.0, 2.5}});
  const auto report = noise_of(rows);
  const auto& row = report.tables.at(0).rows.at(0);
  EXPECT_EQ(row.floor_basis, analysis::FloorBasis::NotRelative);
  EXPECT_TRUE(std::isnan(row.floor_pct));
  EXPECT_FALSE(row.note.empty());
}

}  // namespace

TEST(NoiseBetween, ParameterSetsAreRowsOfTheirOwn) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", {{100.0, 101.0}, {100.5, 99.5}});
  for (auto& row : rows) row.params = {{"calls", "1000"}};
  std::vector<SampleRow> other;
  add(other, "m", "base", {{200.0, 201.0}, {200.5, 199.5}});
  for (auto& row : other) row.params = {{"calls", "10000"}};
  rows.insert(rows.end(), other.begin(), other.end());
  const auto report = noise_of(rows);
  ASSERT_EQ(report.tables.size(), 1u);
  const auto& table = report.tables[0];
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].benchmark, "b/x [calls=1000]");
  EXPECT_EQ(table.rows[1].benchmark, "b/x [calls=10000]");
  EXPECT_EQ(table.rows[0].summary.count, 4u);  // not pooled with the other set
  EXPECT_NEAR(table.rows[1].summary.mean, 200.25, 1e-9);
}

TEST(NoiseBetween, ParameterSetsThatReadAsOneNumberKeepTheirOwnAaComparison) {
  std::vector<SampleRow> rows;
  add(rows, "m", "base", {{100.0, 101.0}, {100.5, 99.5}, {100.2, 100.8}, {99.8, 100.1}});
  for (auto& row : rows) row.params = {{"loops", "10"}};
  std::vector<SampleRow> padded;
  add(padded, "m", "base", {{200.0, 201.0}, {200.5, 199.5}, {200.2, 200.8}, {199.8, 200.1}});
  for (auto& row : padded) row.params = {{"loops", "010"}};
  rows.insert(rows.end(), padded.begin(), padded.end());
  const auto report = noise_of(rows);
  const auto& table = report.tables.at(0);
  ASSERT_TRUE(table.aa_done);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].benchmark, "b/x [loops=010]");
  EXPECT_EQ(table.rows[1].benchmark, "b/x [loops=10]");
  for (const auto& row : table.rows) {
    ASSERT_TRUE(row.aa.present) << row.benchmark;
    EXPECT_EQ(row.aa.test.count, 4u) << row.benchmark << ": the A/A comparison pooled the two sets";
    EXPECT_NEAR(row.aa.test.mean, row.summary.mean, 1.0) << row.benchmark;
  }
}
