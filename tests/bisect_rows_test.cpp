// The rows bisect classifies by: a benchmark measured at two parameter sets
// is two rows, as in compare, never one pooled row.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "app/bisect.h"
#include "common/params.h"
#include "store/result_store.h"

namespace {

using kbench::analysis::RowIdentity;

kbench::store::SampleRow sample(std::int64_t session, const std::string& loops, double value) {
  kbench::store::SampleRow row;
  row.sut = "lab-1";
  row.swprofile = "bisect-0123456789ab";
  row.session = session;
  row.benchmark = "hackbench/pipe";
  row.result_class = {"mean", "ns", kbench::Better::Lower};
  row.params = {{"loops", loops}, {"groups", "2"}};
  row.value = value;
  return row;
}

// Two sessions of one commit, each measuring loops=10 (values near 100) and
// loops=40 (near 400).
std::vector<kbench::store::SampleRow> two_parameter_sets() {
  return {sample(1, "10", 100), sample(1, "10", 102), sample(1, "40", 400), sample(1, "40", 404),
          sample(2, "10", 101), sample(2, "10", 103), sample(2, "40", 402), sample(2, "40", 406)};
}

TEST(BisectRows, ParameterSetsOfOneBenchmarkAreNotPooled) {
  const auto means = kbench::app::session_means_by_row(two_parameter_sets(), {1, 2});
  ASSERT_EQ(means.size(), 2u);
  const RowIdentity loops10{"hackbench/pipe", kbench::params_text({{"groups", "2"}, {"loops", "10"}}), "mean (ns)"};
  const RowIdentity loops40{"hackbench/pipe", kbench::params_text({{"groups", "2"}, {"loops", "40"}}), "mean (ns)"};
  ASSERT_TRUE(means.count(loops10));
  ASSERT_TRUE(means.count(loops40));
  // One mean per session, each of its own parameter set's values only.
  ASSERT_EQ(means.at(loops10).size(), 2u);
  ASSERT_EQ(means.at(loops40).size(), 2u);
  for (const double mean : means.at(loops10)) EXPECT_LT(mean, 110);
  for (const double mean : means.at(loops40)) EXPECT_GT(mean, 390);
}

TEST(BisectRows, OnlyTheSessionsUsedCount) {
  const auto means = kbench::app::session_means_by_row(two_parameter_sets(), {2});
  ASSERT_EQ(means.size(), 2u);
  for (const auto& [row, session_means] : means) EXPECT_EQ(session_means.size(), 1u) << row.params;
}

TEST(BisectRows, ARowSelectorPicksEveryParameterSetAsARowOfItsOwn) {
  const auto means = kbench::app::session_means_by_row(two_parameter_sets(), {1, 2});
  const auto rows = kbench::app::select_rows({{"hackbench/pipe", "mean (ns)"}}, means);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0].params, rows[1].params);
  // loops=10 before loops=40: parameters in natural order.
  EXPECT_NE(rows[0].params.find("loops=10"), std::string::npos) << rows[0].params;
}

TEST(BisectRows, ASelectorMatchingNothingStaysARowToReportAsNotMeasured) {
  const auto means = kbench::app::session_means_by_row(two_parameter_sets(), {1, 2});
  const auto rows = kbench::app::select_rows({{"hackbench/pipe", "p99 (ns)"}}, means);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].benchmark, "hackbench/pipe");
  EXPECT_EQ(rows[0].label, "p99 (ns)");
  EXPECT_TRUE(rows[0].params.empty());
  EXPECT_FALSE(means.count(rows[0]));
}

TEST(BisectRows, RowsFollowTheOrderOfTheSelectors) {
  auto samples = two_parameter_sets();
  kbench::store::SampleRow getpid = sample(1, "10", 50);
  getpid.benchmark = "syscall/getpid";
  getpid.params = {};
  samples.push_back(getpid);
  const auto means = kbench::app::session_means_by_row(samples, {1, 2});
  const auto rows =
      kbench::app::select_rows({{"syscall/getpid", "mean (ns)"}, {"hackbench/pipe", "mean (ns)"}}, means);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].benchmark, "syscall/getpid");
  EXPECT_EQ(rows[1].benchmark, "hackbench/pipe");
  EXPECT_EQ(rows[2].benchmark, "hackbench/pipe");
}

}  // namespace
