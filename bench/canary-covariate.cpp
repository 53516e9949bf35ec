// The analysis of bench/canary-covariate: does adjusting session means by the
// session's machine-speed canary (canary/loop) shrink the noise between runs?
//
// For every row of the store (SUT, benchmark, parameters, result class) and
// every canary result class, over the sessions holding both, the run model
// of compare (stats::fit_run_model: log session means, sessions nested in
// runs, one fixed level per kernel) is fitted three ways:
//   raw         y = log mean
//   ratio       y = log mean - log canary mean of the same session
//   regression  y = log mean - b log canary, b the row's slope on the canary,
//               pooled over all sessions (within kernels)
// and the run and session variance components are printed as cvs, with the
// variance ratios raw/adjusted, the correlation of row and canary over
// sessions and over run means, and the run variance pooled over the rows as
// compare pools it (stats::machine_runs). The keep rule reads the pooled
// ratio: the canary is worth keeping only if it cuts that by at least 2x.
//
// b is fitted on the very sessions it adjusts, which favours the regression
// a little (one df of the sessions'); with 30 sessions that is small beside
// the run variance's own uncertainty (runs - 1 df).
//
// Usage: canary-covariate STORE_URL
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/runs.h"
#include "common/errors.h"
#include "common/params.h"
#include "stats/run_model.h"
#include "stats/stats.h"
#include "store/result_store.h"

namespace st = kbench::stats;

namespace {

constexpr const char* kCanary = "canary/loop";
constexpr double kKeepRatio = 2.0;
// Below this many runs the run variances are too rough for the keep rule
// (the experiment makes 6): the figures are printed, the rule is not applied.
constexpr std::size_t kRunsForVerdict = 5;

constexpr std::string_view kPooledLabel = "pooled over the rows (run df weights)";
// Width of the row-name column: the longest name.
int name_width = static_cast<int>(kPooledLabel.size());

// One row's session means: session id -> mean of its repeats.
struct Row {
  std::string sut;
  std::string benchmark;
  std::string params;
  std::string label;
  std::map<std::int64_t, double> session_means;
  // benchmark and class, with the parameters only where one benchmark was
  // measured with several sets (as the reports name rows)
  std::string display;
  const std::string& name() const { return display; }
};

// Sessions a row and a canary share, with their log means and where they
// were measured, reindexed for the run model.
struct Paired {
  std::vector<double> row_log, canary_log;
  std::vector<std::size_t> group, run;
  std::size_t groups = 0, runs = 0;
};

Paired pair_up(const Row& row, const Row& canary, const kbench::analysis::SessionOrigins& origins) {
  Paired paired;
  std::map<std::string, std::size_t> group_index, run_index;
  for (const auto& [session, mean] : row.session_means) {
    const auto canary_mean = canary.session_means.find(session);
    const auto origin = origins.find(session);
    if (canary_mean == canary.session_means.end() || origin == origins.end()) continue;
    if (!(mean > 0) || !(canary_mean->second > 0)) continue;
    paired.row_log.push_back(std::log(mean));
    paired.canary_log.push_back(std::log(canary_mean->second));
    paired.group.push_back(group_index.emplace(origin->second.kernel, group_index.size()).first->second);
    paired.run.push_back(run_index.emplace(origin->second.run, run_index.size()).first->second);
  }
  paired.groups = group_index.size();
  paired.runs = run_index.size();
  return paired;
}

// Values with each kernel's mean taken out: what the pooled slope and the
// correlations look at, so that a difference between kernels does not pose
// as a common drift.
std::vector<double> centred_within_groups(const std::vector<double>& values, const Paired& paired) {
  std::vector<double> sum(paired.groups, 0.0), count(paired.groups, 0.0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    sum[paired.group[i]] += values[i];
    count[paired.group[i]] += 1;
  }
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i] - sum[paired.group[i]] / count[paired.group[i]];
  return out;
}

double pooled_slope(const std::vector<double>& y, const std::vector<double>& x) {
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    sxy += x[i] * y[i];
    sxx += x[i] * x[i];
  }
  return sxx > 0 ? sxy / sxx : st::kNaN;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 3) return st::kNaN;
  const double mean_a = st::summarize(a).mean, mean_b = st::summarize(b).mean;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - mean_a) * (b[i] - mean_b);
    saa += (a[i] - mean_a) * (a[i] - mean_a);
    sbb += (b[i] - mean_b) * (b[i] - mean_b);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : st::kNaN;
}

// Means per run of values already centred within kernels.
std::vector<double> run_means(const std::vector<double>& centred, const Paired& paired) {
  std::vector<double> sum(paired.runs, 0.0), count(paired.runs, 0.0);
  for (std::size_t i = 0; i < centred.size(); ++i) {
    sum[paired.run[i]] += centred[i];
    count[paired.run[i]] += 1;
  }
  for (std::size_t r = 0; r < paired.runs; ++r) sum[r] /= count[r];
  return sum;
}

st::RunModelFit fit(const std::vector<double>& log_means, const Paired& paired) {
  st::RunModelData data;
  data.log_means = log_means;
  data.group = paired.group;
  data.run = paired.run;
  data.groups = paired.groups;
  data.runs = paired.runs;
  return st::fit_run_model(data);
}

// The cv of a log-scale variance component, in percent, as kbench noise prints it.
std::string cv_text(const st::RunModelFit& f, double variance) {
  if (!f.valid || !std::isfinite(variance)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", std::sqrt(std::max(variance, 0.0)) * 100);
  return text;
}

std::string ratio_text(double raw, double adjusted) {
  if (!std::isfinite(raw) || !std::isfinite(adjusted)) return "-";
  if (adjusted <= 0) return raw > 0 ? "inf" : "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", raw / adjusted);
  return text;
}

std::string number_text(double value, const char* format = "%.2f") {
  if (!std::isfinite(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

struct RowResult {
  const Row* row = nullptr;
  Paired paired;
  st::RunModelFit raw, ratio, regression;
  double slope = st::kNaN;
  double r_sessions = st::kNaN, r_runs = st::kNaN;
};

RowResult analyse(const Row& row, const Row& canary, const kbench::analysis::SessionOrigins& origins) {
  RowResult result;
  result.row = &row;
  result.paired = pair_up(row, canary, origins);
  const Paired& p = result.paired;
  if (p.row_log.size() < 2) return result;
  const auto y = centred_within_groups(p.row_log, p);
  const auto c = centred_within_groups(p.canary_log, p);
  result.slope = pooled_slope(y, c);
  result.r_sessions = pearson(y, c);
  result.r_runs = pearson(run_means(y, p), run_means(c, p));
  std::vector<double> by_ratio(p.row_log.size()), by_regression(p.row_log.size());
  for (std::size_t i = 0; i < p.row_log.size(); ++i) {
    by_ratio[i] = p.row_log[i] - p.canary_log[i];
    by_regression[i] = p.row_log[i] - (std::isfinite(result.slope) ? result.slope : 0.0) * p.canary_log[i];
  }
  result.raw = fit(p.row_log, p);
  result.ratio = fit(by_ratio, p);
  result.regression = fit(by_regression, p);
  return result;
}

double pooled_run_variance(const std::vector<RowResult>& results, st::RunModelFit RowResult::*which) {
  std::vector<const st::RunModelFit*> fits;
  for (const auto& r : results) {
    if ((r.*which).valid && (r.*which).run_df > 0) fits.push_back(&(r.*which));
  }
  return fits.empty() ? st::kNaN : st::machine_runs(fits).variance;
}

void print_run_matrix(const Row& canary, const std::vector<RowResult>& results,
                      const kbench::analysis::SessionOrigins& origins) {
  // Each run's mean of the log session means, as % from the mean over runs:
  // a common drift shows as columns where canary and rows move together.
  std::vector<std::string> run_names;
  std::map<std::string, std::size_t> run_column;
  for (const auto& [session, mean] : canary.session_means) {
    const auto origin = origins.find(session);
    if (origin == origins.end()) continue;
    if (run_column.emplace(origin->second.run, run_names.size()).second) run_names.push_back(origin->second.run);
  }
  auto print_line = [&](const std::string& name, const Row& row) {
    std::vector<double> sum(run_names.size(), 0.0), count(run_names.size(), 0.0);
    for (const auto& [session, mean] : row.session_means) {
      const auto origin = origins.find(session);
      if (origin == origins.end() || !(mean > 0)) continue;
      const auto column = run_column.find(origin->second.run);
      if (column == run_column.end()) continue;
      sum[column->second] += std::log(mean);
      count[column->second] += 1;
    }
    std::vector<double> means;
    for (std::size_t r = 0; r < run_names.size(); ++r) means.push_back(count[r] > 0 ? sum[r] / count[r] : st::kNaN);
    double total = 0, n = 0;
    for (double m : means) {
      if (std::isfinite(m)) total += m, n += 1;
    }
    std::printf("  %-*s", name_width, name.c_str());
    for (double m : means) std::printf(" %7s", number_text((m - total / n) * 100, "%+.2f").c_str());
    std::printf("\n");
  };
  std::printf("\nrun means, %% from the mean over runs (log scale; runs in the order measured):\n");
  std::printf("  %-*s", name_width, "");
  for (std::size_t r = 0; r < run_names.size(); ++r) std::printf(" %7s", ("run" + std::to_string(r + 1)).c_str());
  std::printf("\n");
  print_line(canary.name() + " (canary)", canary);
  for (const auto& r : results) print_line(r.row->name(), *r.row);
}

void print_canary_table(const Row& canary, const std::vector<Row>& rows,
                        const kbench::analysis::SessionOrigins& origins) {
  std::vector<RowResult> results;
  for (const auto& row : rows) {
    if (row.sut == canary.sut && row.benchmark != kCanary) results.push_back(analyse(row, canary, origins));
  }

  // The canary's own noise: how much the machine's speed moved at all.
  const RowResult own = analyse(canary, canary, origins);
  std::vector<double> means;
  for (const auto& [session, mean] : canary.session_means) means.push_back(mean);
  std::printf("\n== %s on SUT %s: %s ns per iteration, run cv %s %%, session cv %s %% (%zu sessions, %zu runs)\n",
              canary.name().c_str(), canary.sut.c_str(), number_text(st::summarize(means).mean, "%.4f").c_str(),
              cv_text(own.raw, own.raw.run_variance).c_str(), cv_text(own.raw, own.raw.session_variance).c_str(),
              own.paired.row_log.size(), own.paired.runs);
  if (own.raw.valid && own.raw.runs_folded) {
    std::printf("   every session is a run of its own: run and session noise cannot be told apart\n");
  }

  std::printf("\n  %-*s %4s %4s | %-30s | %-13s | %-20s | %-13s\n", name_width, "", "", "", "run cv %", "var ratio raw/",
              "session cv %", "r with canary");
  std::printf("  %-*s %4s %4s | %7s %7s %7s %6s | %6s %6s | %6s %6s %6s | %6s %6s\n", name_width, "row", "n", "runs", "raw",
              "ratio", "regr", "b", "ratio", "regr", "raw", "ratio", "regr", "sess", "runs");
  for (const auto& r : results) {
    std::printf("  %-*s %4zu %4zu | %7s %7s %7s %6s | %6s %6s | %6s %6s %6s | %6s %6s\n", name_width,
                r.row->name().c_str(),
                r.paired.row_log.size(), r.paired.runs, cv_text(r.raw, r.raw.run_variance).c_str(),
                cv_text(r.ratio, r.ratio.run_variance).c_str(),
                cv_text(r.regression, r.regression.run_variance).c_str(), number_text(r.slope).c_str(),
                ratio_text(r.raw.run_variance, r.ratio.run_variance).c_str(),
                ratio_text(r.raw.run_variance, r.regression.run_variance).c_str(),
                cv_text(r.raw, r.raw.session_variance).c_str(), cv_text(r.ratio, r.ratio.session_variance).c_str(),
                cv_text(r.regression, r.regression.session_variance).c_str(), number_text(r.r_sessions).c_str(),
                number_text(r.r_runs).c_str());
    if (!r.raw.valid) std::printf("  %-*s   (no fit: %s)\n", name_width, "", r.raw.reason.c_str());
  }

  const double raw = pooled_run_variance(results, &RowResult::raw);
  const double ratio = pooled_run_variance(results, &RowResult::ratio);
  const double regression = pooled_run_variance(results, &RowResult::regression);
  auto pooled_cv = [](double variance) {
    return std::isfinite(variance) ? number_text(std::sqrt(std::max(variance, 0.0)) * 100) : std::string("-");
  };
  std::printf("  %-*s %4s %4s | %7s %7s %7s %6s | %6s %6s |\n", name_width, std::string(kPooledLabel).c_str(), "", "",
              pooled_cv(raw).c_str(), pooled_cv(ratio).c_str(), pooled_cv(regression).c_str(), "",
              ratio_text(raw, ratio).c_str(), ratio_text(raw, regression).c_str());

  std::size_t most_runs = 0;
  for (const auto& r : results) most_runs = std::max(most_runs, r.paired.runs);
  auto verdict = [&](const char* method, double adjusted) {
    if (most_runs < kRunsForVerdict) {
      std::printf("keep rule, %s adjustment: pooled run variance ratio %s; not applied: %zu runs are too few (needs %zu)\n",
                  method, ratio_text(raw, adjusted).c_str(), most_runs, kRunsForVerdict);
      return;
    }
    if (!std::isfinite(raw) || !std::isfinite(adjusted)) {
      std::printf("keep rule, %s adjustment: no pooled run variance (too few runs or sessions)\n", method);
      return;
    }
    const bool keep = adjusted <= 0 ? raw > 0 : raw / adjusted >= kKeepRatio;
    std::printf("keep rule, %s adjustment: pooled run variance cut %s-fold (needs >= %.0f): %s\n", method,
                ratio_text(raw, adjusted).c_str(), kKeepRatio, keep ? "KEEP" : "drop");
  };
  std::printf("\n");
  verdict("ratio", ratio);
  verdict("regression", regression);
  print_run_matrix(canary, results, origins);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]).empty() || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: canary-covariate STORE_URL   (a store measured by bench/canary-covariate)\n");
    return 2;
  }
  try {
    auto store = kbench::store::open_store(argv[1], kbench::store::OpenMode::ReadOnly);
    kbench::store::SampleQuery query;
    query.settled_only = true;
    std::map<std::string, std::map<std::int64_t, std::vector<double>>> values;
    std::map<std::string, Row> rows_by_key;
    for (const auto& sample : store->samples(query)) {
      const std::string params = kbench::params_text(sample.params);
      const std::string key = sample.sut + '\n' + sample.benchmark + '\n' + params + '\n' + sample.result_class.label();
      auto& row = rows_by_key[key];
      row.sut = sample.sut;
      row.benchmark = sample.benchmark;
      row.params = params;
      row.label = sample.result_class.label();
      values[key][sample.session].push_back(sample.value);
    }
    std::map<std::string, std::set<std::string>> param_sets;  // sut, benchmark, class -> parameter sets
    for (const auto& [key, row] : rows_by_key) param_sets[row.sut + '\n' + row.benchmark + '\n' + row.label].insert(row.params);
    for (auto& [key, row] : rows_by_key) {
      row.display = row.benchmark + " " + row.label;
      if (param_sets[row.sut + '\n' + row.benchmark + '\n' + row.label].size() > 1) row.display += " [" + row.params + "]";
      const bool canary = row.benchmark == kCanary;
      name_width = std::max(name_width, static_cast<int>(row.display.size() + (canary ? 9 : 0)));
    }
    std::vector<Row> rows, canaries;
    for (auto& [key, row] : rows_by_key) {
      for (const auto& [session, repeats] : values[key]) row.session_means[session] = st::summarize(repeats).mean;
      (row.benchmark == kCanary ? canaries : rows).push_back(row);
    }
    if (canaries.empty()) {
      std::fprintf(stderr, "canary-covariate: %s holds no %s samples; bench/canary-covariate measures them\n", argv[1],
                   kCanary);
      return 2;
    }
    const auto origins = kbench::analysis::session_origins(*store);
    std::printf("canary-covariate: %s\n", argv[1]);
    std::printf("run cv, session cv: sqrt of the REML run and session variance components of log session means\n"
                "(stats::fit_run_model); var ratio: raw run variance / adjusted (the keep rule needs >= %.0f on the\n"
                "pooled line); b: the row's pooled slope on the log canary; r: correlation with the canary across\n"
                "sessions and across run means (within kernels)\n",
                kKeepRatio);
    for (const auto& canary : canaries) print_canary_table(canary, rows, origins);
    return 0;
  } catch (const kbench::InputError& bad) {
    std::fprintf(stderr, "canary-covariate: %s\n", bad.what());
    return 2;
  } catch (const std::exception& failed) {
    std::fprintf(stderr, "canary-covariate: %s\n", failed.what());
    return 1;
  }
}
