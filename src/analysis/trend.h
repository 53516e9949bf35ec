#pragma once
// `kbench trend`: one row (SUT, benchmark, parameters, result class) across
// many swprofiles in kernel-version or store order, its change points
// (stats/changepoint.h) and the step at each, tested as compare tests two
// swprofiles (docs/statistics.md, "Trends").
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare.h"
#include "analysis/report_model.h"
#include "stats/changepoint.h"
#include "store/result_store.h"

namespace kbench::analysis {

enum class TrendOrder { Version, Store };

// "version" | "store"; throws InputError naming --order otherwise.
TrendOrder parse_trend_order(const std::string& text);
std::string_view trend_order_name(TrendOrder order);

// A swprofile name read as a kernel version: "6.12.0-rc3", "v6.13",
// "linux-6.12", "6.12.117+deb12-cloud-amd64" (patch 117, suffix
// "+deb12-cloud-amd64"). A release candidate sorts before its release
// (6.12-rc7 < 6.12 = 6.12.0 < 6.12.1); equal numbers sort by suffix, digit
// runs as numbers.
struct KernelVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  int rc = 0;  // 0: a release
  std::string suffix;
};
std::optional<KernelVersion> parse_kernel_version(std::string_view name);
bool version_less(const KernelVersion& a, const KernelVersion& b);

struct TrendProfiles {
  std::vector<std::string> names;  // in trend order
  TrendOrder order = TrendOrder::Store;  // the order used
  std::string note;                // why the order asked for was not used; "" when it was
};
// `store_order`: the swprofiles by their first session. With Version, every
// name must read as a version; otherwise the store order is used and `note`
// names the first name that does not.
TrendProfiles order_swprofiles(const std::vector<std::string>& store_order, TrendOrder requested);

struct TrendOptions {
  std::vector<std::string> swprofiles;  // in trend order
  SignConvention sign = SignConvention::Better;
  double min_change_pct = kDefaultMinChangePct;
  std::size_t min_segment = 1;  // swprofiles per segment
  double penalty_factor = stats::kTrendPenaltyFactor;
  double alpha = 0.05;  // level of each step's test
};

struct TrendPoint {
  std::string swprofile;
  std::size_t sessions = 0;
  stats::Summary samples;  // every repeat: the mean printed
  // The 95% CI printed: of the session means with 2 or more sessions, else
  // of the one session's repeats (ci_of_repeats), which says less.
  double ci_low = stats::kNaN;
  double ci_high = stats::kNaN;
  bool ci_of_repeats = false;
};

// The step at one change point: the segment before it against the segment
// after it, as compare tests a base against a test swprofile.
struct TrendStep {
  std::size_t at = 0;            // index in TrendRow::points of the first swprofile after the step
  std::size_t before_begin = 0;  // the segment before: points [before_begin, at)
  std::size_t after_end = 0;     // the segment after: points [at, after_end)
  std::string before_label;      // "6.10" or "6.10..6.11"
  std::string after_label;
  Row row;                       // base: before; cells[0]: after
};

struct TrendRow {
  std::string sut;
  std::string benchmark;
  Params params{};
  ResultClass result_class;
  std::vector<TrendPoint> points;  // the trend's swprofiles with data for this row, in trend order
  std::vector<std::string> missing;  // the trend's swprofiles without
  stats::TrendChanges changes;  // valid false: no detection (reason says why)
  std::vector<TrendStep> steps;  // one per change point
};

struct TrendReport {
  TrendProfiles profiles;
  std::vector<TrendRow> rows;  // by SUT, benchmark, parameters, result class
  Legend legend;               // of the step tests
  std::size_t min_segment = 1;
  double penalty_factor = stats::kTrendPenaltyFactor;
};

// `samples`: every settled sample of the selected rows in every swprofile of
// their SUTs (those outside the trend teach the step tests the SUT's noise
// model, as in compare); `origins` as for build_comparison.
TrendReport build_trend(const std::vector<store::SampleRow>& samples, const TrendOptions& options,
                        const std::optional<SessionOrigins>& origins = std::nullopt);

}  // namespace kbench::analysis
