#include "analysis/compare.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/row_identity.h"
#include "common/errors.h"
#include "common/params.h"
#include "stats/distributions.h"
#include "stats/paired.h"
#include "stats/run_model.h"
#include "stats/stats.h"

namespace kbench::analysis {

namespace {

using Values = std::vector<double>;

using RowKey = RowIdentity;

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

// A machine's rows: its SUT name under its class ("" when the tables are
// per SUT, or for sessions that name no class).
struct SutKey {
  std::string sut_class;
  std::string sut;
  bool operator<(const SutKey& other) const {
    return std::tie(sut_class, sut) < std::tie(other.sut_class, other.sut);
  }
};

// (class, sut) -> row -> samples
using Grouped = std::map<SutKey, std::map<RowKey, RowSamples>>;

Grouped group(const std::vector<store::SampleRow>& samples, const std::set<std::string>& profiles, bool per_sut) {
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
    auto& row = grouped[SutKey{per_sut ? std::string() : s.sut_class, s.sut}]
                       [row_identity(s)];
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


// Session id -> its SUT and number within (sut, swprofile): how the html
// report names a boot.
using SessionNames = std::map<std::int64_t, std::pair<std::string, int>>;

SessionNames session_names(const std::vector<store::SampleRow>& samples) {
  SessionNames names;
  const store::SampleRow* previous = nullptr;
  for (const auto& s : samples) {
    if (previous && previous->session == s.session) continue;
    names.emplace(s.session, std::pair{s.sut, s.session_number()});
    previous = &s;
  }
  return names;
}

std::vector<SessionSamples> samples_by_session(const ProfileSamples& samples, const SessionNames& names) {
  std::vector<SessionSamples> sessions;
  sessions.reserve(samples.by_session.size());
  for (const auto& [session, values] : samples.by_session) {
    const auto name = names.find(session);
    if (values.empty() || name == names.end()) continue;
    sessions.push_back({name->second.first, name->second.second, values});
  }
  return sessions;
}

std::vector<double> means_of_sessions(const ProfileSamples& samples) {
  std::vector<double> means;
  means.reserve(samples.by_session.size());
  for (const auto& [session, values] : samples.by_session) {
    if (!values.empty()) means.push_back(stats::summarize(values).mean);
  }
  return means;
}

// Runs and kernels of sessions; with no origins every profile is one run of
// its own kernel, so the session statistics are what is left.
class Origins {
 public:
  explicit Origins(const std::optional<SessionOrigins>& origins) : origins_(origins) {}
  bool modelled() const { return origins_.has_value(); }
  std::string run(std::int64_t session, const std::string& profile) const {
    const auto* o = find(session);
    return o ? o->run : "profile:" + profile;
  }
  std::string kernel(std::int64_t session, const std::string& profile) const {
    const auto* o = find(session);
    return o ? o->kernel : "profile:" + profile;
  }
  std::string round(std::int64_t session) const {
    const auto* o = find(session);
    return o && !o->round.empty() ? o->round : "session:" + std::to_string(session);
  }
  const SessionOrigin* find(std::int64_t session) const {
    if (!origins_) return nullptr;
    const auto found = origins_->find(session);
    return found == origins_->end() ? nullptr : &found->second;
  }

 private:
  const std::optional<SessionOrigins>& origins_;
};

// One row's sessions on one SUT as the run model sees them
// (docs/statistics.md, "The run model"): each compared profile is a group of
// its own; the other profiles are grouped by kernel, so every kernel the SUT
// measured, in however many runs, teaches the session and the run noise.
struct RowModel {
  stats::RunModelData data;
  std::map<std::string, std::size_t> group_of;  // compared profile -> its group
  std::set<std::string> nonpositive;            // compared profiles with a session mean <= 0
  stats::RunModelFit fit;
};

// `kept`: the compared profiles this model holds (the cell's base and test);
// the other compared profiles are left out, so a noisy test column never
// widens another column's test, as a two-sample test's variance is its own.
RowModel row_model(const RowSamples& row, const std::set<std::string>& compared, const Origins& origins,
                   const std::set<std::string>& kept) {
  RowModel model;
  std::map<std::string, std::size_t> groups, runs, rounds;
  const auto index = [](std::map<std::string, std::size_t>& names, const std::string& name) {
    return names.emplace(name, names.size()).first->second;
  };
  for (const auto& [profile, samples] : row.by_profile) {
    const bool own = compared.count(profile) > 0;
    if (own && !kept.count(profile)) continue;
    struct Session {
      std::string group, run, round;
      double log_mean;
    };
    std::vector<Session> sessions;
    for (const auto& [session, values] : samples.by_session) {
      if (values.empty()) continue;
      const double mean = stats::summarize(values).mean;
      // A profile whose means have no log scale teaches nothing; a compared
      // one cannot be tested relatively, and its cells say so.
      if (!(mean > 0) || !std::isfinite(mean)) {
        if (own) model.nonpositive.insert(profile);
        sessions.clear();
        break;
      }
      sessions.push_back({own ? "compared:" + profile : "kernel:" + origins.kernel(session, profile),
                          origins.run(session, profile), origins.round(session), std::log(mean)});
    }
    for (const auto& session : sessions) {
      const std::size_t group = index(groups, session.group);
      if (own) model.group_of[profile] = group;
      model.data.log_means.push_back(session.log_mean);
      model.data.group.push_back(group);
      model.data.run.push_back(index(runs, session.run));
      model.data.round.push_back(index(rounds, session.run + "\n" + session.round));
    }
  }
  model.data.groups = groups.size();
  model.data.runs = runs.size();
  model.data.rounds = rounds.size();
  model.fit = stats::fit_run_model(model.data);
  return model;
}

// What one row knows of its SUT's noise, for every cell of the row.
struct RowNoise {
  std::string sut;
  const RowSamples* samples = nullptr;
  const std::set<std::string>* compared = nullptr;
  const Origins* origins = nullptr;
  stats::MachineRuns machine;
  bool runs_modelled = false;
};

// A mean carried by a few extreme repeats: values beyond 5 scaled MADs of the
// median whose removal moves the mean by more than 1 %.
bool carried_by_extremes(const Values& values) {
  if (values.size() < 5) return false;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const double median = stats::summarize(sorted).median;
  std::vector<double> deviations;
  for (double v : sorted) deviations.push_back(std::abs(v - median));
  std::sort(deviations.begin(), deviations.end());
  const double mad = 1.4826 * stats::summarize(deviations).median;
  if (!(mad > 0)) return false;
  Values kept;
  for (double v : sorted) {
    if (std::abs(v - median) <= 5 * mad) kept.push_back(v);
  }
  if (kept.size() == sorted.size() || kept.empty()) return false;
  const double all = stats::summarize(sorted).mean, trimmed = stats::summarize(kept).mean;
  return trimmed != 0 && std::abs(all - trimmed) / std::abs(trimmed) > 0.01;
}

// Two separate groups of repeats, and a session with repeats in both: the
// modes are inside a session (placement, layout), not a session effect.
bool bimodal(const ProfileSamples& samples) {
  if (samples.values.size() < 6) return false;
  std::vector<double> sorted = samples.values;
  std::sort(sorted.begin(), sorted.end());
  std::size_t split = 0;
  double widest = 0;
  for (std::size_t i = 2; i + 1 < sorted.size(); ++i) {  // both groups >= 2 values
    if (sorted[i] - sorted[i - 1] > widest) {
      widest = sorted[i] - sorted[i - 1];
      split = i;
    }
  }
  if (split == 0) return false;
  const auto low = stats::summarize(std::span(sorted).first(split));
  const auto high = stats::summarize(std::span(sorted).subspan(split));
  const double spread = std::max(low.stddev, high.stddev);
  if (!(widest > 3 * spread) || !(widest > 0.01 * std::abs(low.median))) return false;
  const double threshold = sorted[split];
  for (const auto& [session, values] : samples.by_session) {
    const bool has_low = std::any_of(values.begin(), values.end(), [&](double v) { return v < threshold; });
    const bool has_high = std::any_of(values.begin(), values.end(), [&](double v) { return v >= threshold; });
    if (has_low && has_high) return true;
  }
  return false;
}

// The smallest p-value a rank test can reach with these sizes: 2 / C(n+m, n).
// lgamma, because the factorials overflow a double from 171 on.
double smallest_rank_p(std::size_t n, std::size_t m) {
  const double log_choose = std::lgamma(n + m + 1.0) - std::lgamma(n + 1.0) - std::lgamma(m + 1.0);
  return std::min(1.0, 2.0 * std::exp(-log_choose));
}

// Mann-Whitney U, or why it cannot reach the level: a rank test on tiny
// samples cannot (with 2 a side the smallest two-sided p is 2/C(4,2) = 0.33);
// saying so spares the reader wondering why an obvious change is unmarked.
void rank_test(const Values& base, const Values& test, double level, const char* units, Cell& cell) {
  const auto u = stats::mann_whitney_u(base, test);
  const double smallest_p = smallest_rank_p(base.size(), test.size());
  if (!u.valid) cell.note = u.reason;
  else if (smallest_p > level)
    cell.note = fmt::format("mwu needs more {}: the smallest possible p with {}+{} is {:.2f}", units, base.size(),
                            test.size(), smallest_p);
  else cell.p_value = u.p_value;
}

// Both sides gave one value, the same: there is no change and no noise, so
// nothing to test, whatever the method (scipy's Welch test gives NaN; a rank
// test's p of 1 would count in the FDR's number of tests). The session test
// says the same of session means.
constexpr const char* kConstantAndEqual = "both sides are constant and equal";

bool constant_and_equal(const Values& base, const Values& test) {
  if (base.empty() || test.empty()) return false;
  const double value = base.front();
  const auto same = [&](double v) { return v == value; };
  return std::all_of(base.begin(), base.end(), same) && std::all_of(test.begin(), test.end(), same);
}

// Tests one cell on the repeats pooled (--sessions pooled). Returns whether
// the 95% CIs are disjoint (ci-overlap).
bool test_pooled(const Values& base, const Values& test, const CompareOptions& options, double level,
                 const stats::Summary& base_summary, Cell& cell) {
  cell.change_ci = stats::relative_change_ci(base_summary, cell.test);
  if (constant_and_equal(base, test)) {
    cell.note = kConstantAndEqual;
    return false;
  }
  switch (options.method) {
    case TestMethod::Welch: {
      const auto t = stats::welch_t_test(base, test);
      if (t.valid) cell.p_value = t.p_value;
      else cell.note = t.reason;
      return false;
    }
    case TestMethod::MannWhitney:
      rank_test(base, test, level, "samples", cell);
      return false;
    case TestMethod::CiOverlap:
      if (base.size() < 2 || test.size() < 2) {
        cell.note = "needs at least 2 samples per side";
        return false;
      }
      return stats::ci95_disjoint(base_summary, cell.test);
  }
  return false;
}

// A row's samples on each machine a cell covers, with the machine's name.
using MachineRows = std::vector<std::pair<std::string, const RowSamples*>>;

// Fewer pairs leave the row to the run model (or the machines' test):
// the pairs' model has two parameters and needs a residual df besides.
constexpr std::size_t kMinPairs = 3;

// The log ratios of a cell's complete pairs (docs/statistics.md, "Paired
// designs"): a base and a test session sharing a pair id, one of each, on two
// different units. A unit is named with its machine, so that CPU sets of two
// hosts are never one unit. Sessions without a pair (a resumed one) or whose
// partner is missing are left out; a pair with a mean <= 0 has no log ratio.
struct PairedSides {
  std::vector<double> log_ratios;
  std::vector<int> unit_signs;  // +1: the base side ran on the pair's first unit (sorted)
  bool nonpositive = false;
};

PairedSides collect_pairs(const MachineRows& machines, const std::string& base_profile, const std::string& test_profile,
                          const Origins& origins) {
  struct Side {
    int sessions = 0;
    double mean = stats::kNaN;
    std::string unit;
  };
  std::map<std::string, std::array<Side, 2>> by_pair;  // pair id -> base side, test side
  for (const auto& [sut, row] : machines) {
    for (std::size_t side = 0; side < 2; ++side) {
      const auto found = row->by_profile.find(side == 0 ? base_profile : test_profile);
      if (found == row->by_profile.end()) continue;
      for (const auto& [session, values] : found->second.by_session) {
        const SessionOrigin* origin = origins.find(session);
        if (!origin || origin->pair.empty() || origin->pair_unit.empty() || values.empty()) continue;
        Side& entry = by_pair[origin->pair][side];
        ++entry.sessions;
        entry.mean = stats::summarize(values).mean;
        entry.unit = sut + "\n" + origin->pair_unit;
      }
    }
  }
  PairedSides sides;
  for (const auto& [pair, entries] : by_pair) {
    const Side& base = entries[0];
    const Side& test = entries[1];
    if (base.sessions != 1 || test.sessions != 1 || base.unit == test.unit) continue;
    if (!(base.mean > 0 && test.mean > 0 && std::isfinite(base.mean) && std::isfinite(test.mean))) {
      sides.nonpositive = true;
      continue;
    }
    sides.log_ratios.push_back(std::log(test.mean) - std::log(base.mean));
    sides.unit_signs.push_back(natural_less(base.unit, test.unit) ? 1 : -1);
  }
  return sides;
}

// Tests one cell on its pairs, whatever --method (the pairs' test is a
// t-test; the legend says so under another method). nullopt: too few pairs,
// the cell is tested as it would be without them. Else whether the CI
// excludes 0, what ci-overlap marks on.
std::optional<bool> test_pairs(const PairedSides& sides, const CompareOptions& options, Cell& cell,
                               stats::PairedTest& result) {
  if (sides.nonpositive || sides.log_ratios.size() < kMinPairs) return std::nullopt;
  result = stats::paired_test(sides.log_ratios, sides.unit_signs);
  cell.pairs = result.pairs;
  if (!result.valid) {
    cell.note = result.reason;
    return false;
  }
  cell.change_pct = std::expm1(result.log_change) * 100;
  cell.change_ci = {true, result.ci_low_pct, result.ci_high_pct};
  if (gives_p_values(options.method)) cell.p_value = result.p_value;
  return result.ci_low_pct > 0 || result.ci_high_pct < 0;
}

// Tests one cell on its sessions with the run model: the change is the
// contrast of the two profiles' groups, its variance the sessions' part plus
// the runs' part that the design does not cancel. The change CI always comes
// from it (it decides "unchanged"); --method picks what gives the p-value.
bool test_sessions(const std::string& base_profile, const ProfileSamples& base, const std::string& test_profile,
                   const ProfileSamples& test, const RowNoise& noise, const CompareOptions& options, double level,
                   Cell& cell, stats::SessionTest& result) {
  const auto base_means = means_of_sessions(base);
  const auto test_means = means_of_sessions(test);
  cell.base_sessions = base_means.size();
  cell.test_sessions = test_means.size();
  const RowModel model = row_model(*noise.samples, *noise.compared, *noise.origins, {base_profile, test_profile});
  if (model.nonpositive.count(base_profile) || model.nonpositive.count(test_profile)) {
    cell.note = "a session mean is <= 0: no relative test";
    return false;
  }
  if (!model.fit.valid) {
    cell.note = "1 session a side and no noise model of this row on this SUT: run another session, or kbench calibrate";
    return false;
  }
  const auto base_group = model.group_of.find(base_profile), test_group = model.group_of.find(test_profile);
  if (base_group == model.group_of.end() || test_group == model.group_of.end()) {
    cell.note = "no session on one side";
    return false;
  }
  const bool runs_apart = noise.runs_modelled && !model.fit.runs_folded;
  const double run_variance = runs_apart ? stats::row_run_variance(model.data, model.fit, noise.machine) : 0;
  auto contrast = stats::run_contrast(model.data, base_group->second, test_group->second, model.fit.session_variance,
                                      run_variance, model.fit.round_variance);
  // Sides measured side by side in every run (plan exec alternating them)
  // cancel the runs' drift; otherwise the drift is part of the change.
  const bool exposed = runs_apart && contrast.run_exposure > 1e-9;
  if (!exposed) {
    contrast.run_part = 0;
    contrast.session_part = contrast.variance - contrast.round_part;
  } else if (!(noise.machine.df > 0)) {
    cell.note = "the sides come from different runs and no kernel on this SUT was measured in 2 runs: the "
                "run-to-run noise is unknown (kbench calibrate, or a second run of the base, measures it)";
    return false;
  }
  result = stats::run_model_test(contrast, stats::within_df(model.fit, contrast), noise.machine.df, base_means.size(),
                                 test_means.size());
  if (!result.valid) {
    cell.note = result.reason;
    return false;
  }
  // One change for the row: the one tested, whose CI and mark it carries.
  cell.change_pct = std::expm1(result.log_change) * 100;
  cell.prior_df = result.prior_df;
  cell.run_df = result.run_df;
  cell.change_ci = {true, result.ci_low_pct, result.ci_high_pct};
  // A rank test or the CI-overlap rule on session means sees only the
  // sessions: across runs it would mark the machine's drift.
  if (exposed && options.method != TestMethod::Welch) {
    cell.note = fmt::format("the sides come from different runs: --method {} cannot carry the run-to-run noise "
                            "(welch does, or interleave the sides with plan exec)",
                            method_name(options.method));
    return false;
  }
  switch (options.method) {
    case TestMethod::Welch:
      cell.p_value = result.p_value;
      return false;
    case TestMethod::MannWhitney:
      rank_test(base_means, test_means, level, "sessions", cell);
      return false;
    case TestMethod::CiOverlap:
      if (base_means.size() < 2 || test_means.size() < 2) {
        cell.note = "ci-overlap needs at least 2 sessions a side";
        return false;
      }
      return stats::ci95_disjoint(stats::summarize(base_means), stats::summarize(test_means));
  }
  return false;
}

bool all_finite(const Values& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

// Fills one cell; returns whether the 95% CIs are disjoint (ci-overlap).
bool evaluate_cell(const std::string& base_profile, const ProfileSamples& base_samples, const std::string& test_profile,
                   const ProfileSamples& test_samples, const RowNoise& noise, const CompareOptions& options,
                   double level, Cell& cell, const stats::Summary& base_summary, stats::SessionTest& session_result,
                   stats::PairedTest& paired_result) {
  cell.present = true;
  cell.test = stats::summarize(test_samples.values);
  cell.heavy_tail = carried_by_extremes(base_samples.values) || carried_by_extremes(test_samples.values);
  cell.bimodal = bimodal(base_samples) || bimodal(test_samples);
  if (!all_finite(base_samples.values) || !all_finite(test_samples.values)) {
    cell.note = "a value is not finite (NaN or infinite): no change computed";
    return false;
  }
  if (!std::isfinite(base_summary.mean) || !std::isfinite(cell.test.mean)) {
    cell.note = "values overflow a double sum: no mean to compare";
    return false;
  }
  if (base_summary.mean == 0) {
    cell.note = "base mean is 0: no relative change";
    return false;
  }
  // Divided by |base|: a negative base (a signed metric) must not flip the
  // direction of the change, and so the verdict.
  cell.change_pct = (cell.test.mean - base_summary.mean) / std::abs(base_summary.mean) * 100.0;
  if (options.sessions == SessionMode::Pooled) {
    return test_pooled(base_samples.values, test_samples.values, options, level, base_summary, cell);
  }
  if (noise.origins->modelled()) {
    const PairedSides sides = collect_pairs({{noise.sut, noise.samples}}, base_profile, test_profile, *noise.origins);
    if (const auto ci_excludes_zero = test_pairs(sides, options, cell, paired_result)) {
      cell.base_sessions = base_samples.by_session.size();
      cell.test_sessions = test_samples.by_session.size();
      return *ci_excludes_zero;
    }
  }
  return test_sessions(base_profile, base_samples, test_profile, test_samples, noise, options, level, cell,
                       session_result);
}

// A mean row whose benchmark also reports p99: a mean above its own p99 is
// carried by the last percent of calls (seen on syscall/* under a noisy host).
void flag_means_above_p99(Table& table) {
  // Keyed like the rows themselves: a mean is held against the p99 of its
  // own parameter set, never another set's.
  const auto key = [](const Row& row) {
    return std::tuple(row.benchmark, params_text(row.params), row.result_class.unit);
  };
  std::map<std::tuple<std::string, std::string, std::string>, const Row*> p99_rows;
  for (const auto& row : table.rows) {
    if (row.result_class.name == "p99") p99_rows[key(row)] = &row;
  }
  for (auto& row : table.rows) {
    if (row.result_class.name != "mean") continue;
    const auto p99 = p99_rows.find(key(row));
    if (p99 == p99_rows.end()) continue;
    const bool base_above = row.base_present && p99->second->base_present && row.base.mean > p99->second->base.mean;
    for (std::size_t c = 0; c < row.cells.size() && c < p99->second->cells.size(); ++c) {
      const auto& p99_cell = p99->second->cells[c];
      const bool test_above = row.cells[c].present && p99_cell.present && row.cells[c].test.mean > p99_cell.test.mean;
      if (base_above || test_above) row.cells[c].heavy_tail = true;
    }
  }
}

// The geomean reads like the rows beside it (docs/reports.md "Geometric
// mean"). G is the geometric mean of the test/base ratios turned so that
// above 1 is better (test/base where higher is better, base/test where lower
// is). A row prints a change as (test - base) / base, flipped where lower is
// better: G - 1 for a higher-is-better row, 1 - 1/G for a lower-is-better
// one. The geomean prints G the same way, averaged over the rows'
// directions, so with one row it is that row's change (a lower-is-better row
// at 69.85% used to have a geomean of 231.72%, base/test - 1).
void fill_geomeans(Table& table) {
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    double log_better_sum = 0;
    double log_raw_sum = 0;
    int higher = 0;
    int lower = 0;
    for (const Row& row : table.rows) {
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
    ColumnSummary& column = table.columns[c];
    column.geomean_rows = higher + lower;
    if (column.geomean_rows == 0) continue;
    const double log_g = log_better_sum / column.geomean_rows;
    column.geomean_change_pct = (higher * std::expm1(log_g) - lower * std::expm1(-log_g)) / column.geomean_rows * 100.0;
    column.geomean_raw_change_pct = std::expm1(log_raw_sum / column.geomean_rows) * 100.0;
  }
}

// One cell of a class table from its machines' cells: one log change per
// machine that measured both sides, tested against 0 across machines (a
// one-sample t-test, df = machines - 1). Machine-to-machine variation of the
// change is what the test sees, so a change one machine shows and another
// does not stays unmarked; the sessions inside each machine count only
// through that machine's mean.
void test_across_machines(const std::vector<std::pair<const Row*, const Cell*>>& paired, const CompareOptions& options,
                          Cell& cell) {
  std::vector<double> changes;
  for (const auto& [row, member] : paired) {
    const double base = row->base.mean, test = member->test.mean;
    if (!(base > 0 && test > 0 && std::isfinite(base) && std::isfinite(test))) {
      cell.note = "a machine's mean is not positive: no change per machine to test across machines";
      return;
    }
    changes.push_back(std::log(test / base));
  }
  const auto summary = stats::summarize(changes);
  cell.machines = changes.size();
  cell.change_pct = std::expm1(summary.mean) * 100.0;
  if (!(summary.stddev > 0)) {
    cell.note = "every machine shows the same change: no spread across machines to test it against";
    return;
  }
  const double df = static_cast<double>(changes.size() - 1);
  const double se = summary.stddev / std::sqrt(static_cast<double>(changes.size()));
  const double half = stats::student_t_quantile(0.975, df) * se;
  cell.change_ci = {true, std::expm1(summary.mean - half) * 100.0, std::expm1(summary.mean + half) * 100.0};
  if (options.method != TestMethod::Welch) {
    cell.note = fmt::format("several machines: a class row is tested with a t-test across the machines' changes, "
                            "which --method {} is not (--per-sut tests each machine with it)",
                            method_name(options.method));
    return;
  }
  cell.p_value = 2 * stats::detail::student_t_upper_tail(std::abs(summary.mean / se), df);
}

// What the verdicts need beyond a cell: the tests behind its CI, by cell.
struct CellTests {
  std::set<const Cell*> disjoint;  // ci-overlap: the CIs do not overlap (pairs: the CI excludes 0)
  std::map<const Cell*, stats::SessionTest> sessions;
  std::map<const Cell*, stats::PairedTest> pairs;
  void forget(const Cell* cell) {
    disjoint.erase(cell);
    sessions.erase(cell);
    pairs.erase(cell);
  }
};

// The tables of one class's machines (in `members`, per SUT) as one class
// table. A row only one machine measured moves over as it is, cells included
// (so a class of one machine reads exactly like its SUT's table). A row with
// pairs measured at the same moment (crossover: the pair's sessions on two
// of the machines) is tested on them rather than across the machines.
Table combine_class(const std::string& sut_class, std::vector<Table>& members,
                    const std::vector<const std::map<RowKey, RowSamples>*>& samples, const CompareOptions& options,
                    const Origins& origins, CellTests& tests) {
  Table table;
  table.sut = sut_class;
  table.sut_class = sut_class;
  table.sut_scope = SutScope::SutClass;
  table.base_profile = options.base;
  table.test_profiles = options.tests;
  std::map<RowKey, std::vector<std::size_t>> rows;  // row -> index in members[m].rows, per member (npos: none)
  for (std::size_t m = 0; m < members.size(); ++m) {
    table.suts.push_back(members[m].sut);
    for (std::size_t r = 0; r < members[m].rows.size(); ++r) {
      auto& where = rows[row_identity(members[m].rows[r])];
      where.resize(members.size(), std::string::npos);
      where[m] = r;
    }
  }
  for (const auto& entry : rows) {
    // Named, not bound: clang before 16 cannot capture a structured binding (pooled, below).
    const RowKey& key = entry.first;
    const std::vector<std::size_t>& where = entry.second;
    std::vector<std::size_t> present;
    for (std::size_t m = 0; m < where.size(); ++m) {
      if (where[m] != std::string::npos) present.push_back(m);
    }
    if (present.size() == 1) {
      table.rows.push_back(std::move(members[present[0]].rows[where[present[0]]]));
      continue;
    }
    const Row& first = members[present[0]].rows[where[present[0]]];
    Row& row = table.rows.emplace_back();
    row.benchmark = first.benchmark;
    row.params = first.params;
    row.result_class = first.result_class;
    const auto pooled = [&](const std::string& profile) {
      Values values;
      for (const std::size_t m : present) {
        const auto& by_profile = samples[m]->at(key).by_profile;
        const auto found = by_profile.find(profile);
        if (found != by_profile.end()) values.insert(values.end(), found->second.values.begin(), found->second.values.end());
      }
      return values;
    };
    if (options.keep_samples) {
      row.samples.resize(1 + options.tests.size());
      for (const std::size_t m : present) {
        const Row& member = members[m].rows[where[m]];
        for (std::size_t p = 0; p < member.samples.size() && p < row.samples.size(); ++p)
          row.samples[p].insert(row.samples[p].end(), member.samples[p].begin(), member.samples[p].end());
      }
    }
    const Values base = pooled(options.base);
    row.base_present = !base.empty();
    if (row.base_present) row.base = stats::summarize(base);
    row.cells.resize(options.tests.size());
    for (std::size_t c = 0; c < options.tests.size(); ++c) {
      const Values test = pooled(options.tests[c]);
      if (test.empty()) continue;
      Cell& cell = row.cells[c];
      cell.present = true;
      cell.test = stats::summarize(test);
      if (!row.base_present) continue;
      std::vector<std::pair<const Row*, const Cell*>> paired;
      for (const std::size_t m : present) {
        const Row& member = members[m].rows[where[m]];
        const Cell& member_cell = member.cells[c];
        cell.heavy_tail = cell.heavy_tail || member_cell.heavy_tail;
        cell.bimodal = cell.bimodal || member_cell.bimodal;
        if (member.base_present && member_cell.present) paired.emplace_back(&member, &member_cell);
      }
      if (options.sessions == SessionMode::Sessions && origins.modelled()) {
        MachineRows machines;
        for (const std::size_t m : present) machines.emplace_back(members[m].sut, &samples[m]->at(key));
        stats::PairedTest paired_result;
        const auto ci_excludes_zero =
            test_pairs(collect_pairs(machines, options.base, options.tests[c], origins), options, cell, paired_result);
        if (ci_excludes_zero) {
          if (paired_result.valid) tests.pairs[&cell] = paired_result;
          if (*ci_excludes_zero) tests.disjoint.insert(&cell);
          continue;
        }
      }
      if (paired.size() < 2) {
        cell.change_pct = (cell.test.mean - row.base.mean) / std::abs(row.base.mean) * 100.0;
        cell.note = fmt::format("{} of the class's {} machines with this row measured both sides: not tested across "
                                "machines (--per-sut shows each machine)",
                                paired.size(), present.size());
        continue;
      }
      test_across_machines(paired, options, cell);
    }
  }
  return table;
}

}  // namespace

SessionMode parse_session_mode(const std::string& text) {
  if (text == "sessions") return SessionMode::Sessions;
  if (text == "pooled") return SessionMode::Pooled;
  throw InputError("--sessions " + text + ": expected sessions or pooled");
}

std::string to_string(SessionMode mode) {
  return mode == SessionMode::Pooled ? "pooled" : "sessions";
}

namespace {

// <0, 0, >0 as `a` sorts before, with or after `b`, digit runs read as
// numbers: "node01" and "node1" come out 0.
int natural_order(const std::string& a, const std::string& b) {
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
      if (ei - zi != ej - zj) return ei - zi < ej - zj ? -1 : 1;
      const int cmp = a.compare(zi, ei - zi, b, zj, ej - zj);
      if (cmp != 0) return cmp;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j] ? -1 : 1;
    ++i;
    ++j;
  }
  const std::size_t rest_a = a.size() - i, rest_b = b.size() - j;
  return rest_a == rest_b ? 0 : (rest_a < rest_b ? -1 : 1);
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  const int order = natural_order(a, b);
  // Texts equal as numbers are still two names ("node01" and "node1" are two
  // SUTs, "loops=010" and "loops=10" two parameter sets): the bytes decide,
  // so that a map keyed in this order never takes one for the other.
  return order != 0 ? order < 0 : a < b;
}

Report build_comparison(const std::vector<store::SampleRow>& samples, const CompareOptions& options,
                        const std::optional<SessionOrigins>& session_origins) {
  const Origins origins(session_origins);
  std::set<std::string> compared(options.tests.begin(), options.tests.end());
  compared.insert(options.base);
  // Every profile: the ones not compared are the noise model of their SUT.
  std::set<std::string> every_profile;
  const std::string* last_profile = nullptr;
  for (const auto& s : samples) {
    if (last_profile && *last_profile == s.swprofile) continue;
    every_profile.insert(s.swprofile);
    last_profile = &s.swprofile;
  }
  const Grouped grouped = group(samples, every_profile, options.per_sut);
  const SessionNames names = options.keep_samples ? session_names(samples) : SessionNames{};
  // The classes each SUT's sessions name, for the per-SUT tables.
  std::map<std::string, std::set<std::string>> classes_of;
  if (options.per_sut) {
    const store::SampleRow* previous = nullptr;
    for (const auto& s : samples) {
      if (previous && previous->session == s.session) continue;
      if (!s.sut_class.empty()) classes_of[s.sut].insert(s.sut_class);
      previous = &s;
    }
  }
  const int looks = std::max(1, options.looks);
  const double level = options.fdr.value_or(options.alpha) / looks;

  Report out;
  out.legend.method = options.method;
  out.legend.fdr = options.fdr;
  out.legend.alpha = options.alpha;
  out.legend.sign = options.sign;
  out.legend.min_change_pct = options.min_change_pct;
  out.legend.sessions = to_string(options.sessions);
  out.legend.looks = looks;

  // The seed report's rule has no p-value: a row is significant when the two
  // 95% CIs are disjoint, with no multiple-comparison control. The session
  // and pair tests are kept to say how many more sessions would decide a row.
  CellTests tests;
  // One table per machine first; rows pointing at these samples, for the class tables.
  std::vector<const std::map<RowKey, RowSamples>*> table_samples;
  for (const auto& [sut_key, rows] : grouped) {
    const bool base_on_sut = std::any_of(rows.begin(), rows.end(), [&](const auto& row) {
      return row.second.by_profile.count(options.base) > 0;
    });
    if (!base_on_sut) continue;
    Table table;
    table.sut = sut_key.sut;
    table.suts = {sut_key.sut};
    if (options.per_sut) {
      for (const auto& name : classes_of[sut_key.sut]) table.sut_class += (table.sut_class.empty() ? "" : ",") + name;
    } else {
      table.sut_class = sut_key.sut_class;
    }
    table_samples.push_back(&rows);
    table.base_profile = options.base;
    table.test_profiles = options.tests;
    table.rows.reserve(rows.size());
    out.tables.push_back(std::move(table));
  }
  // Cells are filled in place: the tables and rows no longer move, so the
  // pointers collected below stay valid.
  std::size_t table_index = 0;
  for (const auto& [sut_key, rows] : grouped) {
    if (table_index >= out.tables.size() || table_samples[table_index] != &rows) continue;
    Table& table = out.tables[table_index++];
    const auto compared_here = [&](const RowSamples& row_samples) {
      return std::any_of(compared.begin(), compared.end(),
                         [&](const auto& p) { return row_samples.by_profile.count(p) > 0; });
    };
    // Every row's model with every compared profile first: the machine's run
    // noise pools what all of them say of the runs.
    std::map<RowKey, RowModel> models;
    std::vector<const stats::RunModelFit*> fits;
    if (options.sessions == SessionMode::Sessions) {
      for (const auto& [key, row_samples] : rows) {
        if (!compared_here(row_samples)) continue;
        fits.push_back(&models.emplace(key, row_model(row_samples, compared, origins, compared)).first->second.fit);
      }
    }
    const stats::MachineRuns machine = origins.modelled() ? stats::machine_runs(fits) : stats::MachineRuns{};
    for (const auto& [key, row_samples] : rows) {
      if (!compared_here(row_samples)) continue;
      Row& row = table.rows.emplace_back();
      row.benchmark = key.benchmark;
      row.params = row_samples.params;
      row.result_class = row_samples.result_class;
      const auto base_it = row_samples.by_profile.find(options.base);
      row.base_present = base_it != row_samples.by_profile.end();
      if (row.base_present) row.base = stats::summarize(base_it->second.values);
      row.cells.resize(options.tests.size());
      if (options.keep_samples) {
        row.samples.resize(1 + options.tests.size());
        if (row.base_present) row.samples[0] = samples_by_session(base_it->second, names);
        for (std::size_t c = 0; c < options.tests.size(); ++c) {
          const auto test_it = row_samples.by_profile.find(options.tests[c]);
          if (test_it != row_samples.by_profile.end()) row.samples[c + 1] = samples_by_session(test_it->second, names);
        }
      }
      RowNoise noise;
      noise.sut = sut_key.sut;
      noise.samples = &row_samples;
      noise.compared = &compared;
      noise.origins = &origins;
      noise.machine = machine;
      noise.runs_modelled = origins.modelled();
      for (std::size_t c = 0; c < options.tests.size(); ++c) {
        const auto test_it = row_samples.by_profile.find(options.tests[c]);
        if (test_it == row_samples.by_profile.end()) continue;
        Cell& cell = row.cells[c];
        if (!row.base_present) {
          cell.present = true;
          cell.test = stats::summarize(test_it->second.values);
          continue;
        }
        stats::SessionTest session_result;
        stats::PairedTest paired_result;
        const bool ci_disjoint = evaluate_cell(options.base, base_it->second, options.tests[c], test_it->second,
                                               noise, options, level, cell, row.base, session_result, paired_result);
        if (session_result.valid) tests.sessions[&cell] = session_result;
        if (paired_result.valid) tests.pairs[&cell] = paired_result;
        if (ci_disjoint) tests.disjoint.insert(&cell);
      }
    }
  }

  // The machines of a class as one table (docs/statistics.md, "Machines").
  // Rows and cells move, never copy: the cell pointers above stay valid.
  if (!options.per_sut) {
    std::vector<Table> tables;
    for (std::size_t t = 0; t < out.tables.size();) {
      const std::string sut_class = out.tables[t].sut_class;
      if (sut_class.empty()) {
        tables.push_back(std::move(out.tables[t++]));
        continue;
      }
      std::vector<Table> members;
      std::vector<const std::map<RowKey, RowSamples>*> member_samples;
      for (; t < out.tables.size() && out.tables[t].sut_class == sut_class; ++t) {
        members.push_back(std::move(out.tables[t]));
        member_samples.push_back(table_samples[t]);
      }
      tables.push_back(combine_class(sut_class, members, member_samples, options, origins, tests));
      // The member cells not moved over go with `members`: their addresses
      // may come back as cells of the next class.
      for (const Table& member : members)
        for (const Row& row : member.rows)
          for (const Cell& cell : row.cells) tests.forget(&cell);
    }
    out.tables = std::move(tables);
  }

  std::vector<Cell*> tested;
  for (auto& table : out.tables) {
    for (auto& row : table.rows) {
      if (!row.base_present) continue;
      for (auto& cell : row.cells) {
        if (!cell.present) continue;
        // Cells tested on pairs have a legend line of their own.
        if (tests.sessions.count(&cell)) ++out.legend.cells_on_session_means;
        if (!gives_p_values(options.method)) {
          if (cell.note.empty()) ++out.legend.rows_tested;
        } else if (std::isfinite(cell.p_value)) {
          tested.push_back(&cell);
        }
      }
    }
  }

  if (gives_p_values(options.method)) {
    std::vector<double> p_values;
    p_values.reserve(tested.size());
    for (const auto* cell : tested) p_values.push_back(cell->p_value);
    out.legend.rows_tested = static_cast<int>(p_values.size());
    const std::vector<double> q_values =
        options.fdr ? stats::benjamini_hochberg(p_values) : p_values;
    for (std::size_t i = 0; i < tested.size(); ++i) tested[i]->q_value = q_values[i];
  }

  const double min_change = options.min_change_pct;
  // "Unchanged" is an equivalence test (two one-sided tests at 2.5 %), split
  // over the looks as the marks' level is: each look's CI is at 1 - 0.05/looks.
  const double equivalence_confidence = 1 - 0.05 / looks;
  const auto inside_margin = [&](const Cell& cell) {
    if (!(min_change > 0)) return false;
    if (const auto paired = tests.pairs.find(&cell); paired != tests.pairs.end() && looks > 1) {
      const auto ci = stats::paired_change_ci(paired->second, equivalence_confidence);
      return ci.valid && ci.low >= -min_change && ci.high <= min_change;
    }
    const auto found = tests.sessions.find(&cell);
    if (found == tests.sessions.end() || looks == 1) {
      return cell.change_ci.valid && cell.change_ci.low >= -min_change && cell.change_ci.high <= min_change;
    }
    const auto& t = found->second;
    const double half = stats::student_t_quantile(0.5 + equivalence_confidence / 2, t.test_df) * t.standard_error;
    return std::expm1(t.log_change - half) * 100 >= -min_change && std::expm1(t.log_change + half) * 100 <= min_change;
  };
  std::vector<Cell*> undecided;
  int marks = 0;
  for (auto& table : out.tables) {
    flag_means_above_p99(table);
    table.columns.assign(table.test_profiles.size(), {});
    for (auto& row : table.rows) {
      for (std::size_t c = 0; c < row.cells.size(); ++c) {
        auto& cell = row.cells[c];
        if (!cell.present || !row.base_present) continue;
        auto& column = table.columns[c];
        const bool testable = cell.note.empty() && (gives_p_values(options.method) ? std::isfinite(cell.p_value) : true);
        if (!testable) {
          ++column.untested;
        } else {
          const double better = signed_change(row, cell, SignConvention::Better);
          const bool significant = gives_p_values(options.method)
                                       ? std::isfinite(cell.q_value) && cell.q_value <= level
                                       : tests.disjoint.count(&cell) > 0;
          if (significant && std::isfinite(better) && std::abs(cell.change_pct) >= min_change &&
              cell.change_pct != 0) {
            cell.verdict = better > 0 ? Verdict::Improvement : Verdict::Regression;
            if (cell.verdict == Verdict::Improvement) ++column.improvements;
            else ++column.regressions;
            ++marks;
          } else if (inside_margin(cell)) {
            cell.verdict = Verdict::Unchanged;
            ++column.unchanged;
          } else {
            cell.verdict = Verdict::Undecided;
            ++column.undecided;
            undecided.push_back(&cell);
          }
        }
      }
    }
    fill_geomeans(table);
  }
  // More sessions decide a row when its p-value would pass the marks' rule:
  // under Benjamini-Hochberg, p <= level (R + 1) / m marks it beside the R
  // marks there are (the step-up keeps them), so that is the level the
  // projection uses; a row whose 95 % CI already excludes 0 but misses it
  // still needs sessions, and says how many.
  const double tested_cells = std::max(1, out.legend.rows_tested);
  const double mark_level =
      options.fdr && gives_p_values(options.method) ? std::min(level, level * (marks + 1) / tested_cells) : level;
  for (Cell* cell : undecided) {
    if (const auto paired = tests.pairs.find(cell); paired != tests.pairs.end()) {
      // One more pair is one more session a side.
      cell->sessions_to_decide = stats::pairs_to_decide(paired->second, min_change, 1 - mark_level,
                                                        kSessionsToDecideLimit, equivalence_confidence);
      continue;
    }
    const auto found = tests.sessions.find(cell);
    if (found == tests.sessions.end()) continue;
    cell->sessions_to_decide = stats::sessions_to_decide(found->second, min_change, 1 - mark_level,
                                                         kSessionsToDecideLimit, equivalence_confidence);
  }
  return out;
}

std::vector<ProfileTable> build_profile_tables(const std::vector<store::SampleRow>& samples,
                                               const std::string& swprofile, std::optional<std::int64_t> session) {
  struct Entry {
    ResultClass result_class;
    Params params;
    Values values;
  };
  std::map<std::string, std::map<RowKey, Entry>> by_sut;
  for (const auto& s : samples) {
    if (s.swprofile != swprofile || (session && s.session != *session)) continue;
    auto& entry = by_sut[s.sut][row_identity(s)];
    entry.result_class = s.result_class;
    entry.params = s.params;
    entry.values.push_back(s.value);
  }
  std::vector<ProfileTable> tables;
  for (const auto& [sut, rows] : by_sut) {
    ProfileTable table;
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
