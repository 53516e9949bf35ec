#include "analysis/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "common/errors.h"
#include "report/format.h"
#include "stats/stats.h"

namespace kbench::analysis {

namespace {

using Values = std::vector<double>;

// Parameters are part of a row's identity: hackbench with loops=40 and with
// loops=10 are two rows, never pooled or compared with each other.
struct RowKey {
  std::string benchmark;
  std::string params;  // report::params_text: canonical, so equal sets give equal keys
  std::string label;
  bool operator<(const RowKey& other) const {
    if (benchmark != other.benchmark) return benchmark < other.benchmark;
    if (params != other.params) return natural_less(params, other.params);
    return natural_less(label, other.label);
  }
};

// One profile's samples of one row: all repeats, and the same grouped by session.
struct ProfileSamples {
  Values values;
  std::map<std::int64_t, Values> by_session;  // session id -> values, in session order
};

struct RowSamples {
  ResultClass result_class;
  Params params;
  std::map<std::string, ProfileSamples> by_profile;  // swprofile -> samples
};

// sut -> row -> samples
using Grouped = std::map<std::string, std::map<RowKey, RowSamples>>;

Grouped group(const std::vector<store::SampleRow>& samples, const std::set<std::string>& profiles) {
  Grouped grouped;
  // The store delivers the repeats of one result class in one session one
  // after another: remembering the last target saves a map search (and a
  // label string) per sample, which is most of the time on big stores.
  const store::SampleRow* last = nullptr;
  ProfileSamples* target = nullptr;
  Values* session_target = nullptr;
  for (const auto& s : samples) {
    if (last && s.session == last->session && s.benchmark == last->benchmark &&
        s.result_class == last->result_class && s.sut == last->sut && s.swprofile == last->swprofile &&
        s.params == last->params) {
      target->values.push_back(s.value);
      session_target->push_back(s.value);
      continue;
    }
    if (!profiles.count(s.swprofile)) {
      last = nullptr;
      continue;
    }
    auto& row = grouped[s.sut][RowKey{s.benchmark, report::params_text(s.params), s.result_class.label()}];
    row.result_class = s.result_class;
    row.params = s.params;
    target = &row.by_profile[s.swprofile];
    session_target = &target->by_session[s.session];
    target->values.push_back(s.value);
    session_target->push_back(s.value);
    last = &s;
  }
  return grouped;
}

struct Tested {
  report::Cell* cell;
  const report::Row* row;
};

std::vector<std::vector<double>> session_groups(const ProfileSamples& samples) {
  std::vector<std::vector<double>> groups;
  groups.reserve(samples.by_session.size());
  for (const auto& [session, values] : samples.by_session) groups.push_back(values);
  return groups;
}

// What a cell is tested on: the pooled repeats, or one mean per session.
struct TestBasis {
  Values base;
  Values test;
  bool on_session_means = false;
  bool session_noisy = false;
};

TestBasis choose_basis(const ProfileSamples& base, const ProfileSamples& test, SessionMode mode) {
  TestBasis basis;
  if (mode != SessionMode::Pooled && base.by_session.size() >= 2 && test.by_session.size() >= 2) {
    const auto base_groups = session_groups(base);
    const auto test_groups = session_groups(test);
    // Either side noisy is enough: its repeats overstate the evidence, and
    // the test is only as sound as its weaker side (bench/stats-calibration (c)).
    basis.session_noisy = stats::session_noisy(stats::session_variance(base_groups)) ||
                          stats::session_noisy(stats::session_variance(test_groups));
    if (mode == SessionMode::Means || basis.session_noisy) {
      basis.on_session_means = true;
      basis.base = stats::session_means(base_groups);
      basis.test = stats::session_means(test_groups);
      return basis;
    }
  }
  basis.base = base.values;
  basis.test = test.values;
  return basis;
}

// Returns whether the 95% CIs of the tested samples are disjoint (ci-overlap).
bool evaluate_cell(const ProfileSamples& base_samples, const ProfileSamples& test_samples,
                   const CompareOptions& options, double level, report::Cell& cell,
                   const stats::Summary& base_summary) {
  cell.present = true;
  cell.test = stats::summarize(test_samples.values);
  if (std::isfinite(base_summary.mean) && base_summary.mean != 0) {
    cell.change_pct = (cell.test.mean - base_summary.mean) / base_summary.mean * 100.0;
  }
  const TestBasis basis = choose_basis(base_samples, test_samples, options.sessions);
  cell.session_noisy = basis.on_session_means && basis.session_noisy;
  const Values& base = basis.base;
  const Values& test = basis.test;
  // The interval of the change comes from the samples the test uses, so that
  // it excludes 0% exactly when Welch marks the row (docs/statistics.md).
  const stats::Summary base_tested = basis.on_session_means ? stats::summarize(base) : base_summary;
  const stats::Summary test_tested = basis.on_session_means ? stats::summarize(test) : cell.test;
  cell.change_ci = stats::relative_change_ci(base_tested, test_tested);
  const TestMethod method = options.method;
  if (method == TestMethod::Welch) {
    const auto t = stats::welch_t_test(base, test);
    if (t.valid) cell.p_value = t.p_value;
    else cell.note = t.reason;
  } else if (method == TestMethod::MannWhitney) {
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
  return method == TestMethod::CiOverlap && cell.note.empty() && stats::ci95_disjoint(base_tested, test_tested);
}

// The geomean reads like the rows beside it (docs/reports.md "Geometric
// mean"). G is the geometric mean of the test/base ratios turned so that
// above 1 is better (test/base where higher is better, base/test where lower
// is). A row prints a change as (test - base) / base, flipped where lower is
// better: G - 1 for a higher-is-better row, 1 - 1/G for a lower-is-better
// one. The geomean prints G the same way, averaged over the rows'
// directions, so with one row it is that row's change (a lower-is-better row
// at 69.85% used to have a geomean of 231.72%, base/test - 1).
void fill_geomeans(report::Table& table) {
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    double log_better_sum = 0;
    double log_raw_sum = 0;
    int higher = 0;
    int lower = 0;
    for (const report::Row& row : table.rows) {
      if (!row.base_present || c >= row.cells.size() || !row.cells[c].present) continue;
      const double base = row.base.mean;
      const double test = row.cells[c].test.mean;
      // A ratio needs two positive, finite means.
      if (!(base > 0 && test > 0 && std::isfinite(base) && std::isfinite(test))) continue;
      const double log_ratio = std::log(test / base);
      log_raw_sum += log_ratio;
      if (row.result_class.better == Better::Higher) {
        log_better_sum += log_ratio;
        ++higher;
      } else {
        log_better_sum -= log_ratio;
        ++lower;
      }
    }
    report::ColumnSummary& column = table.columns[c];
    column.geomean_rows = higher + lower;
    if (column.geomean_rows == 0) continue;
    const double log_g = log_better_sum / column.geomean_rows;
    column.geomean_change_pct = (higher * std::expm1(log_g) - lower * std::expm1(-log_g)) / column.geomean_rows * 100.0;
    column.geomean_raw_change_pct = std::expm1(log_raw_sum / column.geomean_rows) * 100.0;
  }
}

}  // namespace

SessionMode parse_session_mode(const std::string& text) {
  if (text == "auto") return SessionMode::Auto;
  if (text == "pooled") return SessionMode::Pooled;
  if (text == "means") return SessionMode::Means;
  throw InputError("--sessions " + text + ": expected auto, pooled or means");
}

std::string to_string(SessionMode mode) {
  switch (mode) {
    case SessionMode::Auto: return "auto";
    case SessionMode::Pooled: return "pooled";
    case SessionMode::Means: return "means";
  }
  return "auto";
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
  std::set<std::string> profiles(options.tests.begin(), options.tests.end());
  profiles.insert(options.base);
  const Grouped grouped = group(samples, profiles);

  report::Report out;
  out.legend.method = options.method;
  out.legend.fdr = options.fdr;
  out.legend.alpha = options.alpha;
  out.legend.sign = options.sign;
  out.legend.min_change_pct = options.min_change_pct;

  out.legend.sessions = to_string(options.sessions);

  std::vector<Tested> tested;
  // The seed report's rule has no p-value: a row is significant when the two
  // 95% CIs are disjoint, with no multiple-comparison control.
  std::set<const report::Cell*> disjoint;
  for (const auto& [sut, rows] : grouped) {
    const bool base_on_sut = std::any_of(rows.begin(), rows.end(), [&](const auto& row) {
      return row.second.by_profile.count(options.base) > 0;
    });
    if (!base_on_sut) continue;
    report::Table table;
    table.sut = sut;
    table.base_profile = options.base;
    table.test_profiles = options.tests;
    table.rows.reserve(rows.size());
    out.tables.push_back(std::move(table));
  }
  // Cells are filled in place: the tables and rows no longer move, so the
  // pointers collected below stay valid.
  std::size_t table_index = 0;
  for (const auto& [sut, rows] : grouped) {
    if (table_index >= out.tables.size() || out.tables[table_index].sut != sut) continue;
    report::Table& table = out.tables[table_index++];
    for (const auto& [key, row_samples] : rows) {
      report::Row& row = table.rows.emplace_back();
      row.benchmark = key.benchmark;
      row.params = row_samples.params;
      row.result_class = row_samples.result_class;
      const auto base_it = row_samples.by_profile.find(options.base);
      row.base_present = base_it != row_samples.by_profile.end();
      if (row.base_present) row.base = stats::summarize(base_it->second.values);
      row.cells.resize(options.tests.size());
      for (std::size_t c = 0; c < options.tests.size(); ++c) {
        const auto test_it = row_samples.by_profile.find(options.tests[c]);
        if (test_it == row_samples.by_profile.end()) continue;
        report::Cell& cell = row.cells[c];
        if (!row.base_present) {
          cell.present = true;
          cell.test = stats::summarize(test_it->second.values);
          continue;
        }
        const bool ci_disjoint = evaluate_cell(base_it->second, test_it->second, options,
                                               options.fdr.value_or(options.alpha), cell, row.base);
        if (cell.session_noisy || (options.sessions == SessionMode::Means &&
                                   base_it->second.by_session.size() >= 2 &&
                                   test_it->second.by_session.size() >= 2)) {
          ++out.legend.cells_on_session_means;
        }
        if (!gives_p_values(options.method)) {
          if (cell.note.empty()) ++out.legend.rows_tested;
          if (ci_disjoint) disjoint.insert(&cell);
        } else if (std::isfinite(cell.p_value)) {
          tested.push_back({&cell, &row});
        }
      }
    }
  }

  if (gives_p_values(options.method)) {
    std::vector<double> p_values;
    p_values.reserve(tested.size());
    for (const auto& t : tested) p_values.push_back(t.cell->p_value);
    out.legend.rows_tested = static_cast<int>(p_values.size());
    const std::vector<double> q_values =
        options.fdr ? stats::benjamini_hochberg(p_values) : p_values;
    for (std::size_t i = 0; i < tested.size(); ++i) tested[i].cell->q_value = q_values[i];
  }

  const double level = options.fdr ? *options.fdr : options.alpha;
  for (auto& table : out.tables) {
    table.columns.assign(table.test_profiles.size(), {});
    for (auto& row : table.rows) {
      for (std::size_t c = 0; c < row.cells.size(); ++c) {
        auto& cell = row.cells[c];
        if (!cell.present || !row.base_present) continue;
        const double better = report::signed_change(row, cell, report::SignConvention::Better);
        const bool significant = gives_p_values(options.method)
                                     ? std::isfinite(cell.q_value) && cell.q_value <= level
                                     : disjoint.count(&cell) > 0;
        if (significant && std::isfinite(better) && std::abs(cell.change_pct) >= options.min_change_pct &&
            cell.change_pct != 0) {
          cell.verdict = better > 0 ? report::Verdict::Improvement : report::Verdict::Regression;
          if (cell.verdict == report::Verdict::Improvement) ++table.columns[c].improvements;
          else ++table.columns[c].regressions;
        }
      }
    }
    fill_geomeans(table);
  }
  return out;
}

std::vector<report::ProfileTable> build_profile_tables(const std::vector<store::SampleRow>& samples,
                                                       const std::string& swprofile,
                                                       std::optional<std::int64_t> session) {
  struct Entry {
    ResultClass result_class;
    Params params;
    Values values;
  };
  std::map<std::string, std::map<RowKey, Entry>> by_sut;
  for (const auto& s : samples) {
    if (s.swprofile != swprofile || (session && s.session != *session)) continue;
    auto& entry = by_sut[s.sut][RowKey{s.benchmark, report::params_text(s.params), s.result_class.label()}];
    entry.result_class = s.result_class;
    entry.params = s.params;
    entry.values.push_back(s.value);
  }
  std::vector<report::ProfileTable> tables;
  for (const auto& [sut, rows] : by_sut) {
    report::ProfileTable table;
    table.sut = sut;
    table.swprofile = swprofile;
    for (const auto& [key, entry] : rows) {
      table.rows.push_back({key.benchmark, entry.result_class, stats::summarize(entry.values), entry.params});
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace kbench::analysis
