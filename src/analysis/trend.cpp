#include "analysis/trend.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "analysis/row_identity.h"
#include "common/errors.h"

namespace kbench::analysis {

namespace {

// Reads digits at `at` into `value`; false when there are none (or too many).
bool read_number(std::string_view text, std::size_t& at, int& value) {
  const char* begin = text.data() + at;
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
  if (error != std::errc() || end == begin) return false;
  at += static_cast<std::size_t>(end - begin);
  return true;
}

std::string segment_label(const std::vector<TrendPoint>& points, std::size_t begin, std::size_t end) {
  if (end - begin == 1) return points[begin].swprofile;
  return points[begin].swprofile + ".." + points[end - 1].swprofile;
}

TrendPoint summarize_point(const std::string& swprofile, const std::map<std::int64_t, std::vector<double>>& sessions,
                           std::vector<double>& session_means) {
  TrendPoint point;
  point.swprofile = swprofile;
  std::vector<double> all;
  for (const auto& [session, values] : sessions) {
    if (values.empty()) continue;
    all.insert(all.end(), values.begin(), values.end());
    session_means.push_back(stats::summarize(values).mean);
  }
  point.sessions = session_means.size();
  point.samples = stats::summarize(all);
  point.ci_of_repeats = point.sessions < 2;
  // On the log scale (modified Cox, docs/statistics.md): a heavy right tail
  // across sessions (a p99.9 row) would take a plain t-interval below zero.
  const stats::MeanInterval ci = stats::positive_mean_ci(point.sessions >= 2 ? session_means : all);
  point.ci_low = ci.low;
  point.ci_high = ci.high;
  return point;
}

}  // namespace

TrendOrder parse_trend_order(const std::string& text) {
  if (text == "version") return TrendOrder::Version;
  if (text == "store") return TrendOrder::Store;
  throw InputError("--order " + text + ": expected version or store");
}

std::string_view trend_order_name(TrendOrder order) { return order == TrendOrder::Version ? "version" : "store"; }

std::optional<KernelVersion> parse_kernel_version(std::string_view name) {
  std::size_t at = 0;
  if (name.substr(0, 6) == "linux-") at = 6;
  if (at < name.size() && (name[at] == 'v' || name[at] == 'V')) ++at;
  KernelVersion version;
  if (!read_number(name, at, version.major) || at >= name.size() || name[at] != '.') return std::nullopt;
  ++at;
  if (!read_number(name, at, version.minor)) return std::nullopt;
  if (at + 1 < name.size() && name[at] == '.' && std::isdigit(static_cast<unsigned char>(name[at + 1]))) {
    ++at;
    if (!read_number(name, at, version.patch)) return std::nullopt;
  }
  if (name.substr(at, 3) == "-rc") {
    std::size_t rc_at = at + 3;
    if (read_number(name, rc_at, version.rc) && version.rc > 0) at = rc_at;
    else version.rc = 0;
  }
  // "6.12abc" is a name, not a version; a suffix starts with a separator.
  if (at < name.size() && std::isalnum(static_cast<unsigned char>(name[at]))) return std::nullopt;
  version.suffix = std::string(name.substr(at));
  return version;
}

bool version_less(const KernelVersion& a, const KernelVersion& b) {
  // A release candidate comes before the release: rank a release above every rc.
  const auto rank = [](int rc) { return rc == 0 ? std::numeric_limits<int>::max() : rc; };
  const auto key = [&](const KernelVersion& v) { return std::tuple(v.major, v.minor, v.patch, rank(v.rc)); };
  if (key(a) != key(b)) return key(a) < key(b);
  return natural_less(a.suffix, b.suffix);
}

TrendProfiles order_swprofiles(const std::vector<std::string>& store_order, TrendOrder requested) {
  TrendProfiles out;
  out.names = store_order;
  out.order = TrendOrder::Store;
  if (requested == TrendOrder::Store) return out;
  std::vector<std::pair<KernelVersion, std::string>> versions;
  for (const std::string& name : store_order) {
    const auto version = parse_kernel_version(name);
    if (!version) {
      out.note = "'" + name + "' is not a kernel version (such as 6.12.0-rc3 or v6.13): ordered by store order "
                 "(first session) instead";
      return out;
    }
    versions.emplace_back(*version, name);
  }
  std::stable_sort(versions.begin(), versions.end(),
                   [](const auto& a, const auto& b) { return version_less(a.first, b.first); });
  out.names.clear();
  for (const auto& [version, name] : versions) out.names.push_back(name);
  out.order = TrendOrder::Version;
  return out;
}

TrendReport build_trend(const std::vector<store::SampleRow>& samples, const TrendOptions& options,
                        const std::optional<SessionOrigins>& origins) {
  TrendReport report;
  report.min_segment = options.min_segment;
  report.penalty_factor = options.penalty_factor;
  std::map<std::string, std::size_t> position;  // swprofile -> index in the trend
  for (std::size_t i = 0; i < options.swprofiles.size(); ++i) position[options.swprofiles[i]] = i;

  // Every sample of a row (all swprofiles of its SUT), and the trend's
  // swprofiles' sessions of it.
  struct Gathered {
    std::vector<store::SampleRow> all;
    std::vector<std::map<std::int64_t, std::vector<double>>> sessions;  // per trend swprofile
    bool in_trend = false;
  };
  // SUTs in natural order (vm2 before vm10), each SUT's rows as compare orders them.
  std::map<std::string, std::map<RowIdentity, Gathered>, decltype(&natural_less)> rows(&natural_less);
  for (const auto& sample : samples) {
    auto& row = rows[sample.sut][row_identity(sample)];
    row.all.push_back(sample);
    const auto found = position.find(sample.swprofile);
    if (found == position.end()) continue;
    row.sessions.resize(options.swprofiles.size());
    row.sessions[found->second][sample.session].push_back(sample.value);
    row.in_trend = true;
  }

  CompareOptions compare;
  compare.sign = options.sign;
  compare.min_change_pct = options.min_change_pct;
  compare.fdr = std::nullopt;  // each step on its own (docs/statistics.md, "Trends")
  compare.alpha = options.alpha;
  compare.per_sut = true;
  report.legend.sign = options.sign;
  report.legend.fdr = std::nullopt;
  report.legend.alpha = options.alpha;
  report.legend.min_change_pct = options.min_change_pct;
  report.legend.sessions = to_string(SessionMode::Sessions);

  for (auto& [sut, by_row] : rows) {
    for (auto& [key, gathered] : by_row) {
      if (!gathered.in_trend) continue;
      TrendRow& row = report.rows.emplace_back();
      row.sut = sut;
      row.benchmark = key.benchmark;
      row.params = gathered.all.front().params;
      row.result_class = gathered.all.front().result_class;
      std::vector<std::vector<double>> session_means;
      for (std::size_t i = 0; i < options.swprofiles.size(); ++i) {
        if (gathered.sessions[i].empty()) {
          row.missing.push_back(options.swprofiles[i]);
          continue;
        }
        row.points.push_back(
            summarize_point(options.swprofiles[i], gathered.sessions[i], session_means.emplace_back()));
      }
      row.changes = stats::detect_trend_changes(session_means, options.min_segment, options.penalty_factor);
      if (!row.changes.valid) continue;
      const auto& cuts = row.changes.segmentation.change_points;
      for (std::size_t c = 0; c < cuts.size(); ++c) {
        TrendStep& step = row.steps.emplace_back();
        step.at = cuts[c];
        step.before_begin = c == 0 ? 0 : cuts[c - 1];
        step.after_end = c + 1 < cuts.size() ? cuts[c + 1] : row.points.size();
        step.before_label = segment_label(row.points, step.before_begin, step.at);
        step.after_label = segment_label(row.points, step.at, step.after_end);
        // The two segments as two swprofiles; the trend's other swprofiles and
        // those outside it stay what they are, the SUT's noise model.
        std::map<std::string, const std::string*> relabel;
        for (std::size_t p = step.before_begin; p < step.at; ++p) relabel[row.points[p].swprofile] = &step.before_label;
        for (std::size_t p = step.at; p < step.after_end; ++p) relabel[row.points[p].swprofile] = &step.after_label;
        std::vector<store::SampleRow> segments = gathered.all;
        for (auto& sample : segments) {
          const auto found = relabel.find(sample.swprofile);
          if (found != relabel.end()) sample.swprofile = *found->second;
        }
        compare.base = step.before_label;
        compare.tests = {step.after_label};
        Report tested = build_comparison(segments, compare, origins);
        if (tested.tables.empty() || tested.tables.front().rows.empty()) {
          step.row.benchmark = row.benchmark;
          step.row.result_class = row.result_class;
          continue;
        }
        step.row = std::move(tested.tables.front().rows.front());
        report.legend.rows_tested += tested.legend.rows_tested;
        report.legend.cells_on_session_means += tested.legend.cells_on_session_means;
      }
    }
  }
  return report;
}

}  // namespace kbench::analysis
