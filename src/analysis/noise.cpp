#include "analysis/noise.h"

#include <cmath>
#include <map>
#include <set>

#include "stats/stats.h"

namespace kbench::analysis {

namespace {

constexpr const char* kFirstHalf = "A/A half 1";
constexpr const char* kSecondHalf = "A/A half 2";

struct RowData {
  ResultClass result_class;
  std::vector<double> values;
  std::map<std::int64_t, std::vector<double>> by_session;
};

std::string row_key(const std::string& benchmark, const ResultClass& result_class) {
  return benchmark + '\n' + result_class.label();
}

std::string index_range(const std::vector<int>& indices) {
  if (indices.size() == 1) return "#" + std::to_string(indices.front());
  return "#" + std::to_string(indices.front()) + "-#" + std::to_string(indices.back());
}

}  // namespace

NoiseReport build_noise_report(const std::vector<store::SampleRow>& samples, const NoiseOptions& options) {
  NoiseReport out;
  out.profile = options.profile;
  out.power = options.power;
  out.floor_alpha = options.compare.fdr.value_or(options.compare.alpha);

  // Which session indices each SUT has, to split them in order.
  std::map<std::string, std::set<int>> session_indices;
  for (const auto& s : samples) {
    if (s.swprofile == options.profile) session_indices[s.sut].insert(s.session_index);
  }
  std::map<std::string, std::string> split_text;
  std::map<std::string, int> first_half_end;  // session_index < this: first half; -1: split repeats
  for (const auto& [sut, indices] : session_indices) {
    const std::vector<int> ordered(indices.begin(), indices.end());
    if (ordered.size() >= 2) {
      const std::size_t half = ordered.size() / 2;
      const std::vector<int> first(ordered.begin(), ordered.begin() + half);
      const std::vector<int> second(ordered.begin() + half, ordered.end());
      first_half_end[sut] = second.front();
      split_text[sut] = "sessions split in order: " + index_range(first) + " (" + std::to_string(first.size()) +
                        ") against " + index_range(second) + " (" + std::to_string(second.size()) + ")";
    } else {
      first_half_end[sut] = -1;
      split_text[sut] = "one session: its even repeats against its odd repeats (interleaved)";
    }
  }

  std::vector<store::SampleRow> halves;
  halves.reserve(samples.size());
  std::map<std::string, std::map<std::string, RowData>> rows;  // sut -> row key -> data
  for (const auto& s : samples) {
    if (s.swprofile != options.profile) continue;
    auto& data = rows[s.sut][row_key(s.benchmark, s.result_class)];
    data.result_class = s.result_class;
    data.values.push_back(s.value);
    data.by_session[s.session].push_back(s.value);
    store::SampleRow half = s;
    const int boundary = first_half_end[s.sut];
    const bool first = boundary < 0 ? s.repeat % 2 == 0 : s.session_index < boundary;
    half.swprofile = first ? kFirstHalf : kSecondHalf;
    halves.push_back(std::move(half));
  }

  CompareOptions compare = options.compare;
  compare.base = kFirstHalf;
  compare.tests = {kSecondHalf};
  const report::Report aa = build_comparison(halves, compare);
  out.legend = aa.legend;

  for (const auto& [sut, by_key] : rows) {
    NoiseTable table;
    table.sut = sut;
    table.split = split_text[sut];
    const report::Table* aa_table = nullptr;
    for (const auto& t : aa.tables) {
      if (t.sut == sut) aa_table = &t;
    }
    std::map<std::string, const report::Row*> aa_rows;
    if (aa_table) {
      for (const auto& row : aa_table->rows) aa_rows[row_key(row.benchmark, row.result_class)] = &row;
      table.aa_marks = aa_table->columns.empty()
                           ? 0
                           : aa_table->columns[0].improvements + aa_table->columns[0].regressions;
    }
    for (const auto& [key, data] : by_key) {
      NoiseRow row;
      const std::size_t newline = key.find('\n');
      row.benchmark = key.substr(0, newline);
      row.result_class = data.result_class;
      row.summary = stats::summarize(data.values);
      row.sessions = data.by_session.size();
      const auto found = aa_rows.find(key);
      if (found != aa_rows.end()) {
        row.aa_base_present = found->second->base_present;
        if (!found->second->cells.empty()) row.aa = found->second->cells[0];
      }
      row.floor_count = data.values.size();
      row.floor_cv = row.summary.cv;
      if (row.sessions >= 2) {
        std::vector<std::vector<double>> groups;
        for (const auto& [session, values] : data.by_session) groups.push_back(values);
        const auto decomposition = stats::session_variance(groups);
        row.between_share = decomposition.valid ? decomposition.between_share : stats::kNaN;
        const bool noisy = stats::session_noisy(decomposition);
        // The floor assumes the comparison this row would get in `compare`
        // with the same session mode: on session means, the sessions count.
        if (options.compare.sessions == SessionMode::Sessions || noisy) {
          row.floor_on_session_means = true;
          const auto means = stats::session_means(groups);
          row.floor_count = means.size();
          row.floor_cv = stats::summarize(means).cv;
        }
      }
      row.floor_pct = stats::noise_floor_percent(row.floor_count, row.floor_cv, out.floor_alpha, options.power);
      if (std::isfinite(row.floor_pct)) ++out.floor_rows;
      table.rows.push_back(std::move(row));
    }
    out.tables.push_back(std::move(table));
  }
  // Under Benjamini-Hochberg a single real change among N rows is marked when
  // its p <= q / N: the floor at that level is what "alone" means.
  out.floor_alone_alpha = out.floor_alpha / std::max(1, out.floor_rows);
  for (auto& table : out.tables) {
    for (auto& row : table.rows) {
      row.floor_alone_pct =
          stats::noise_floor_percent(row.floor_count, row.floor_cv, out.floor_alone_alpha, options.power);
    }
  }
  return out;
}

}  // namespace kbench::analysis
