#include "analysis/noise.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/row_identity.h"
#include "stats/run_model.h"
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

std::string index_range(const std::vector<int>& indices) {
  if (indices.size() == 1) return "#" + std::to_string(indices.front());
  return "#" + std::to_string(indices.front()) + "-#" + std::to_string(indices.back());
}

std::vector<std::vector<double>> groups_of(const RowData& data) {
  std::vector<std::vector<double>> groups;
  for (const auto& [session, values] : data.by_session) groups.push_back(values);
  return groups;
}

double log_sd_pct(const std::vector<double>& means) {
  if (means.size() < 2) return stats::kNaN;
  std::vector<double> logs;
  for (double m : means) {
    if (!(m > 0) || !std::isfinite(m)) return stats::kNaN;
    logs.push_back(std::log(m));
  }
  return stats::summarize(logs).stddev * 100;
}

// sqrt(sum of squared deviations inside sessions / (N - k)) / |mean|: the
// repeat-to-repeat noise with the session offsets taken out.
double within_cv_pct(const std::vector<std::vector<double>>& groups, double mean) {
  double ss = 0;
  std::size_t n = 0, k = 0;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    const auto s = stats::summarize(g);
    if (g.size() >= 2) ss += s.stddev * s.stddev * static_cast<double>(g.size() - 1);
    n += g.size();
    ++k;
  }
  if (n <= k || mean == 0) return stats::kNaN;
  return std::sqrt(ss / static_cast<double>(n - k)) / std::abs(mean) * 100;
}

// kernel -> run -> session -> samples of one row on one SUT, every profile.
using KernelRuns = std::map<std::string, std::map<std::string, std::map<std::int64_t, std::vector<double>>>>;

// The row's run model as compare fits it, with no profile compared: every
// kernel a group of its own, every run a random effect (docs/statistics.md,
// "The run model"). `runs`: the runs of kernels measured in >= 2 runs, the
// ones that teach the run noise. A session mean <= 0 leaves the model empty.
struct NoiseRunModel {
  stats::RunModelData data;
  stats::RunModelFit fit;
  std::size_t runs = 0;
};

NoiseRunModel noise_run_model(const KernelRuns& kernels) {
  NoiseRunModel model;
  std::map<std::string, std::size_t> run_index;
  for (const auto& [kernel, runs] : kernels) {
    const std::size_t group = model.data.groups++;
    if (runs.size() >= 2) model.runs += runs.size();
    for (const auto& [run, sessions] : runs) {
      const std::size_t index = run_index.emplace(run, run_index.size()).first->second;
      for (const auto& [session, values] : sessions) {
        if (values.empty()) continue;
        const double mean = stats::summarize(values).mean;
        if (!(mean > 0) || !std::isfinite(mean)) return {};
        model.data.log_means.push_back(std::log(mean));
        model.data.group.push_back(group);
        model.data.run.push_back(index);
      }
    }
  }
  model.data.runs = run_index.size();
  model.fit = stats::fit_run_model(model.data);
  return model;
}

}  // namespace

const char* floor_basis_name(FloorBasis basis) {
  switch (basis) {
    case FloorBasis::Unknown: return "unknown";
    case FloorBasis::Sessions: return "sessions";
    case FloorBasis::SessionsAndModel: return "sessions+model";
    case FloorBasis::Model: return "model";
    case FloorBasis::NotRelative: return "not_relative";
  }
  return "unknown";
}

std::string unknown_run_noise_text() {
  return "no kernel on this SUT was measured in 2 runs; kbench calibrate measures it";
}

std::string unknown_noise_text() {
  return "1 session: the noise between sessions, which decides every verdict, is unknown; run kbench run again "
         "under this profile or kbench calibrate";
}

NoiseReport build_noise_report(const std::vector<store::SampleRow>& samples, const NoiseOptions& options,
                               const std::optional<SessionOrigins>& origins) {
  NoiseReport out;
  out.profile = options.profile;
  out.power = options.power;
  out.floor_alpha = options.compare.fdr.value_or(options.compare.alpha);

  std::map<std::string, std::set<int>> session_indices;
  for (const auto& s : samples) {
    if (s.swprofile == options.profile) session_indices[s.sut].insert(s.session_index);
  }
  // The halves: only where each has >= 2 sessions, since a half of one
  // session (or the repeats of one session) shows only the noise inside a
  // session and calls it the noise between runs.
  std::map<std::string, std::string> split_text;
  std::map<std::string, int> first_half_end;  // session_index < this: first half; absent: no A/A
  for (const auto& [sut, indices] : session_indices) {
    const std::vector<int> ordered(indices.begin(), indices.end());
    const std::size_t half = ordered.size() / 2;
    if (half >= kAaMinSessionsPerHalf) {
      const std::vector<int> first(ordered.begin(), ordered.begin() + half);
      const std::vector<int> second(ordered.begin() + half, ordered.end());
      first_half_end[sut] = second.front();
      split_text[sut] = "A/A: sessions split in order: " + index_range(first) + " (" + std::to_string(first.size()) +
                        ") against " + index_range(second) + " (" + std::to_string(second.size()) + ")";
    } else {
      split_text[sut] = "no A/A comparison: it needs " + std::to_string(2 * kAaMinSessionsPerHalf) +
                        " sessions (2 a half), this profile has " + std::to_string(ordered.size());
    }
  }

  std::vector<store::SampleRow> halves;
  std::map<std::string, std::map<RowIdentity, RowData>> rows;  // sut -> row -> data
  // sut -> row -> other profile -> session -> samples
  std::map<std::string, std::map<RowIdentity, std::map<std::string, std::map<std::int64_t, std::vector<double>>>>>
      others;
  std::map<std::string, std::set<std::string>> other_profiles;
  // sut -> row -> kernel -> run -> session -> samples, of every profile
  std::map<std::string, std::map<RowIdentity, KernelRuns>> by_kernel;
  for (const auto& s : samples) {
    if (!session_indices.contains(s.sut)) continue;
    const RowIdentity key = row_identity(s);
    const SessionOrigin* origin = nullptr;
    if (origins) {
      if (const auto found = origins->find(s.session); found != origins->end()) origin = &found->second;
    }
    by_kernel[s.sut][key][origin ? origin->kernel : "profile:" + s.swprofile]
             [origin ? origin->run : "profile:" + s.swprofile][s.session]
                 .push_back(s.value);
    if (s.swprofile != options.profile) {
      others[s.sut][key][s.swprofile][s.session].push_back(s.value);
      other_profiles[s.sut].insert(s.swprofile);
      continue;
    }
    auto& data = rows[s.sut][key];
    data.result_class = s.result_class;
    data.values.push_back(s.value);
    data.by_session[s.session].push_back(s.value);
    const auto boundary = first_half_end.find(s.sut);
    if (boundary != first_half_end.end()) {
      store::SampleRow half = s;
      half.swprofile = s.session_index < boundary->second ? kFirstHalf : kSecondHalf;
      halves.push_back(std::move(half));
    }
  }

  CompareOptions compare = options.compare;
  compare.base = kFirstHalf;
  compare.tests = {kSecondHalf};
  compare.per_sut = true;  // the noise report is per machine
  const Report aa = build_comparison(halves, compare);
  out.legend = aa.legend;

  for (const auto& [sut, by_key] : rows) {
    NoiseTable table;
    table.sut = sut;
    table.sessions = session_indices[sut].size();
    table.aa_done = first_half_end.contains(sut);
    table.split = split_text[sut];
    table.other_profiles = static_cast<int>(other_profiles[sut].size());
    std::map<RowIdentity, const Row*> aa_rows;
    for (const auto& t : aa.tables) {
      if (t.sut != sut) continue;
      for (const auto& row : t.rows) aa_rows[row_identity(row)] = &row;
      table.aa_marks = t.columns.empty() ? 0 : t.columns[0].improvements + t.columns[0].regressions;
    }
    // Every row's run model first: the machine's run noise pools what all
    // of them say of the runs, as compare pools it. Without origins every
    // profile is one run, and nothing is known of runs.
    std::map<RowIdentity, NoiseRunModel> run_models;
    std::vector<const stats::RunModelFit*> fits;
    if (origins) {
      for (const auto& [key, kernels] : by_kernel[sut]) {
        if (!by_key.contains(key)) continue;
        fits.push_back(&run_models.emplace(key, noise_run_model(kernels)).first->second.fit);
      }
    }
    const stats::MachineRuns machine = stats::machine_runs(fits);
    // The runs a row that borrows the machine's run noise names: the most
    // any row was measured in.
    std::size_t machine_runs_seen = 0;
    for (const auto& [key, model] : run_models) machine_runs_seen = std::max(machine_runs_seen, model.runs);
    std::map<std::string, std::set<std::string>> parameter_sets;  // benchmark -> params texts
    for (const auto& [key, data] : by_key) parameter_sets[key.benchmark].insert(key.params);
    for (const auto& [key, data] : by_key) {
      NoiseRow row;
      row.benchmark = key.benchmark;
      // A benchmark measured with several parameter sets names its set.
      if (parameter_sets[key.benchmark].size() > 1) row.benchmark += " [" + key.params + "]";
      row.result_class = data.result_class;
      row.summary = stats::summarize(data.values);
      row.sessions = data.by_session.size();
      const auto groups = groups_of(data);
      const auto means = stats::session_means(groups);
      row.between_cv_pct = log_sd_pct(means);
      row.within_cv_pct = within_cv_pct(groups, row.summary.mean);
      if (row.sessions >= 2) {
        const auto decomposition = stats::session_variance(groups);
        if (decomposition.valid) row.between_share = decomposition.between_share;
      }
      if (const auto found = aa_rows.find(key); found != aa_rows.end()) {
        row.aa_base_present = found->second->base_present;
        if (!found->second->cells.empty()) row.aa = found->second->cells[0];
      }

      std::vector<std::vector<double>> model_means;
      if (const auto sut_others = others.find(sut); sut_others != others.end()) {
        if (const auto row_others = sut_others->second.find(key); row_others != sut_others->second.end()) {
          for (const auto& [profile, sessions] : row_others->second) {
            std::vector<std::vector<double>> profile_groups;
            for (const auto& [session, values] : sessions) profile_groups.push_back(values);
            model_means.push_back(stats::session_means(profile_groups));
          }
        }
      }
      row.model = stats::pool_log_session_variance(model_means);
      if (row.model.df > 0) row.model_cv_pct = std::sqrt(row.model.variance) * 100;

      // The floor of a comparison against a profile with as many sessions:
      // the profile's own sessions and the model pooled, as the moderated
      // session test pools them.
      const bool own_usable = std::isfinite(row.between_cv_pct);
      const bool relative = std::all_of(means.begin(), means.end(), [](double m) { return m > 0 && std::isfinite(m); });
      if (!relative) {
        row.floor_basis = FloorBasis::NotRelative;
        row.note = "a session mean is <= 0: no relative floor";
      } else if (own_usable) {
        const double own_df = static_cast<double>(row.sessions - 1);
        const double own_variance = std::pow(row.between_cv_pct / 100, 2);
        if (row.model.df > 0) {
          row.floor_basis = FloorBasis::SessionsAndModel;
          row.floor_log_variance = (row.model.df * row.model.variance + own_df * own_variance) / (row.model.df + own_df);
          row.floor_prior_df = row.model.df;
        } else {
          row.floor_basis = FloorBasis::Sessions;
          row.floor_log_variance = own_variance;
        }
      } else if (row.model.df > 0) {
        row.floor_basis = FloorBasis::Model;
        row.floor_log_variance = row.model.variance;
        row.floor_prior_df = row.model.df;
      } else {
        row.floor_basis = FloorBasis::Unknown;
        row.note = unknown_noise_text();
        ++table.rows_unknown;
      }
      if (std::isfinite(row.floor_log_variance)) {
        row.floor_pct = stats::session_floor_percent(row.sessions, row.floor_log_variance, row.floor_prior_df,
                                                     out.floor_alpha, options.power);
      }
      if (std::isfinite(row.floor_pct)) ++out.floor_rows;

      // The run noise compare tests separate runs with: the row's REML run
      // variance, shrunk toward the machine's and floored as compare does,
      // with the machine's df. Where every session is a run of its own the
      // two noises cannot be told apart: the sessions' spread is the runs'
      // (cv and df of the sessions), and the floor already covers separate
      // runs.
      if (const auto found = run_models.find(key); found != run_models.end() && found->second.fit.valid) {
        const auto& model = found->second;
        if (model.fit.runs_folded) {
          row.run_noise = {model.fit.session_variance, model.fit.session_df, model.data.runs};
          row.runs_folded = true;
        } else if (machine.df > 0) {
          row.run_noise = {stats::row_run_variance(model.data, model.fit, machine), machine.df,
                           model.runs > 0 ? model.runs : machine_runs_seen};
        }
      }
      if (row.run_noise.df > 0) {
        row.run_cv_pct = std::sqrt(row.run_noise.variance) * 100;
        if (row.runs_folded) {
          row.floor_runs_pct = row.floor_pct;
        } else if (std::isfinite(row.floor_log_variance)) {
          row.floor_runs_pct = stats::session_floor_runs_percent(row.sessions, row.floor_log_variance,
                                                                 row.floor_prior_df, row.run_noise, out.floor_alpha,
                                                                 options.power);
        }
      } else {
        ++table.rows_runs_unknown;
      }
      table.rows.push_back(std::move(row));
    }
    out.tables.push_back(std::move(table));
  }
  // Under Benjamini-Hochberg a single real change among N rows is marked when
  // its p <= q / N: the floor at that level is what "alone" means.
  out.floor_alone_alpha = out.floor_alpha / std::max(1, out.floor_rows);
  for (auto& table : out.tables) {
    for (auto& row : table.rows) {
      if (!std::isfinite(row.floor_pct)) continue;
      row.floor_alone_pct = stats::session_floor_percent(row.sessions, row.floor_log_variance, row.floor_prior_df,
                                                         out.floor_alone_alpha, options.power);
    }
  }
  return out;
}

}  // namespace kbench::analysis
