#include "analysis/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "common/errors.h"
#include "stats/stats.h"

namespace kbench::analysis {

namespace {

using Values = std::vector<double>;

struct RowKey {
  std::string benchmark;
  std::string label;
  bool operator<(const RowKey& other) const {
    if (benchmark != other.benchmark) return benchmark < other.benchmark;
    return natural_less(label, other.label);
  }
};

struct RowSamples {
  ResultClass result_class;
  std::map<std::string, Values> by_profile;  // swprofile -> values
};

// sut -> row -> samples
using Grouped = std::map<std::string, std::map<RowKey, RowSamples>>;

Grouped group(const std::vector<store::SampleRow>& samples, const std::set<std::string>& profiles) {
  Grouped grouped;
  for (const auto& s : samples) {
    if (!profiles.count(s.swprofile)) continue;
    auto& row = grouped[s.sut][RowKey{s.benchmark, s.result_class.label()}];
    row.result_class = s.result_class;
    row.by_profile[s.swprofile].push_back(s.value);
  }
  return grouped;
}

struct Tested {
  report::Cell* cell;
  const report::Row* row;
};

void evaluate_cell(const Values& base, const Values& test, const std::string& method, double level,
                   report::Cell& cell, const stats::Summary& base_summary) {
  cell.present = true;
  cell.test = stats::summarize(test);
  if (std::isfinite(base_summary.mean) && base_summary.mean != 0) {
    cell.change_pct = (cell.test.mean - base_summary.mean) / base_summary.mean * 100.0;
  }
  cell.change_ci = stats::relative_change_ci(base_summary, cell.test);
  if (method == "welch") {
    const auto t = stats::welch_t_test(base, test);
    if (t.valid) cell.p_value = t.p_value;
    else cell.note = t.reason;
  } else if (method == "mwu") {
    const auto u = stats::mann_whitney_u(base, test);
    // A rank test on tiny samples cannot reach any usual level: with n=2 a
    // side the smallest two-sided p is 2/C(4,2) = 0.33. Say so instead of
    // leaving the reader to wonder why an obvious change is unmarked.
    const double smallest_p = std::min(1.0, 2.0 / std::tgamma(base.size() + test.size() + 1.0) *
                                                std::tgamma(base.size() + 1.0) * std::tgamma(test.size() + 1.0));
    if (!u.valid) {
      cell.note = u.reason;
    } else if (smallest_p > level) {
      cell.note = "mwu needs more samples: the smallest possible p with these sizes is " +
                  std::to_string(smallest_p).substr(0, 4);
    } else {
      cell.p_value = u.p_value;
    }
  } else if (base.size() < 2 || test.size() < 2) {
    cell.note = "needs at least 2 samples per side";
  }
  // ci-overlap: decided over all rows in build_comparison.
}

}  // namespace

void validate_method(const std::string& method) {
  if (method != "welch" && method != "mwu" && method != "ci-overlap") {
    throw InputError("--method " + method + ": expected welch, mwu or ci-overlap");
  }
}

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      // Compare as numbers without overflow: strip leading zeros, then by length.
      std::size_t zi = i, zj = j;
      while (zi + 1 < ei && a[zi] == '0') ++zi;
      while (zj + 1 < ej && b[zj] == '0') ++zj;
      if (ei - zi != ej - zj) return ei - zi < ej - zj;
      const int cmp = a.compare(zi, ei - zi, b, zj, ej - zj);
      if (cmp != 0) return cmp < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

report::Report build_comparison(const std::vector<store::SampleRow>& samples, const CompareOptions& options) {
  validate_method(options.method);
  std::set<std::string> profiles(options.tests.begin(), options.tests.end());
  profiles.insert(options.base);
  const Grouped grouped = group(samples, profiles);

  report::Report out;
  out.legend.method = options.method;
  out.legend.fdr = options.fdr;
  out.legend.alpha = options.alpha;
  out.legend.sign = options.sign;
  out.legend.min_change_pct = options.min_change_pct;

  std::vector<Tested> tested;
  for (const auto& [sut, rows] : grouped) {
    const bool base_on_sut = std::any_of(rows.begin(), rows.end(), [&](const auto& row) {
      return row.second.by_profile.count(options.base) > 0;
    });
    if (!base_on_sut) continue;
    report::Table table;
    table.sut = sut;
    table.base_profile = options.base;
    table.test_profiles = options.tests;
    for (const auto& [key, row_samples] : rows) {
      report::Row row;
      row.benchmark = key.benchmark;
      row.result_class = row_samples.result_class;
      const auto base_it = row_samples.by_profile.find(options.base);
      row.base_present = base_it != row_samples.by_profile.end();
      static const Values kNone;
      const Values& base_values = row.base_present ? base_it->second : kNone;
      if (row.base_present) row.base = stats::summarize(base_values);
      row.cells.resize(options.tests.size());
      for (std::size_t c = 0; c < options.tests.size(); ++c) {
        const auto test_it = row_samples.by_profile.find(options.tests[c]);
        if (test_it == row_samples.by_profile.end()) continue;
        if (!row.base_present) {
          row.cells[c].present = true;
          row.cells[c].test = stats::summarize(test_it->second);
          continue;
        }
        evaluate_cell(base_values, test_it->second, options.method, options.fdr.value_or(options.alpha),
                      row.cells[c], row.base);
      }
      table.rows.push_back(std::move(row));
    }
    out.tables.push_back(std::move(table));
  }

  // Pointers into the finished tables: nothing is pushed after this point.
  for (auto& table : out.tables) {
    for (auto& row : table.rows) {
      for (auto& cell : row.cells) {
        if (cell.present && row.base_present && std::isfinite(cell.p_value)) tested.push_back({&cell, &row});
      }
    }
  }

  // The seed report's rule has no p-value: a row is significant when the two
  // 95% CIs are disjoint, with no multiple-comparison control.
  std::set<const report::Cell*> disjoint;
  if (options.method == "ci-overlap") {
    for (auto& table : out.tables) {
      for (auto& row : table.rows) {
        for (auto& cell : row.cells) {
          if (!cell.present || !row.base_present || !cell.note.empty()) continue;
          ++out.legend.rows_tested;
          if (stats::ci95_disjoint(row.base, cell.test)) disjoint.insert(&cell);
        }
      }
    }
  } else {
    std::vector<double> p_values;
    for (const auto& t : tested) p_values.push_back(t.cell->p_value);
    out.legend.rows_tested = static_cast<int>(p_values.size());
    const std::vector<double> q_values =
        options.fdr ? stats::benjamini_hochberg(p_values) : p_values;
    for (std::size_t i = 0; i < tested.size(); ++i) tested[i].cell->q_value = q_values[i];
  }

  const double level = options.fdr ? *options.fdr : options.alpha;
  for (auto& table : out.tables) {
    table.columns.assign(table.test_profiles.size(), {});
    std::vector<double> log_ratio_sum(table.test_profiles.size(), 0.0);
    for (auto& row : table.rows) {
      for (std::size_t c = 0; c < row.cells.size(); ++c) {
        auto& cell = row.cells[c];
        if (!cell.present || !row.base_present) continue;
        const double better = report::signed_change(row, cell, report::SignConvention::Better);
        const bool significant = options.method == "ci-overlap"
                                     ? disjoint.count(&cell) > 0
                                     : std::isfinite(cell.q_value) && cell.q_value <= level;
        if (significant && std::isfinite(better) && std::abs(cell.change_pct) >= options.min_change_pct &&
            cell.change_pct != 0) {
          cell.verdict = better > 0 ? report::Verdict::Improvement : report::Verdict::Regression;
          if (cell.verdict == report::Verdict::Improvement) ++table.columns[c].improvements;
          else ++table.columns[c].regressions;
        }
        if (row.base.mean > 0 && cell.test.mean > 0) {
          const double ratio = row.result_class.better == Better::Higher ? cell.test.mean / row.base.mean
                                                                         : row.base.mean / cell.test.mean;
          log_ratio_sum[c] += std::log(ratio);
          ++table.columns[c].geomean_rows;
        }
      }
    }
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      if (table.columns[c].geomean_rows > 0) {
        table.columns[c].geomean_change_pct =
            (std::exp(log_ratio_sum[c] / table.columns[c].geomean_rows) - 1.0) * 100.0;
      }
    }
  }
  return out;
}

std::vector<report::ProfileTable> build_profile_tables(const std::vector<store::SampleRow>& samples,
                                                       const std::string& swprofile,
                                                       std::optional<std::int64_t> session) {
  std::map<std::string, std::map<RowKey, std::pair<ResultClass, Values>>> by_sut;
  for (const auto& s : samples) {
    if (s.swprofile != swprofile || (session && s.session != *session)) continue;
    auto& entry = by_sut[s.sut][RowKey{s.benchmark, s.result_class.label()}];
    entry.first = s.result_class;
    entry.second.push_back(s.value);
  }
  std::vector<report::ProfileTable> tables;
  for (const auto& [sut, rows] : by_sut) {
    report::ProfileTable table;
    table.sut = sut;
    table.swprofile = swprofile;
    for (const auto& [key, entry] : rows) {
      table.rows.push_back({key.benchmark, entry.first, stats::summarize(entry.second)});
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace kbench::analysis
