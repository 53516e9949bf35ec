// `kbench noise`: per SUT the between-session noise of every row, the noise
// model of the other profiles, the floor they imply and (with >= 4 sessions)
// the A/A comparison, as a grid for people or CSV/JSON with every number unrounded.
#include "report/noise_report.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::report {

using analysis::Row;
using analysis::signed_change;

namespace {

std::string percent_or_empty(double value) { return std::isnan(value) ? "" : format_percent(value); }

// "12 df, 2.31%" or "" with no model.
std::string model_text(const analysis::NoiseRow& row) {
  if (!(row.model.df > 0)) return "";
  return fmt::format("{:g} df, {}", row.model.df, format_percent(row.model_cv_pct));
}

std::string floor_text(const analysis::NoiseRow& row, double value) {
  if (row.floor_basis == analysis::FloorBasis::Unknown) return "unknown (1 session)";
  if (std::isnan(value)) return "";
  return format_percent(value) + (row.floor_basis == analysis::FloorBasis::Model ? " (m)" : "");
}

// "3 runs, 2.31%" or "" when no kernel was measured in 2 runs (one line under
// the table says so).
std::string run_text(const analysis::NoiseRow& row) {
  if (!(row.run_noise.df > 0)) return "";
  return fmt::format("{} runs, {}", row.run_noise.runs, format_percent(row.run_cv_pct));
}

std::string floor_runs_text(const analysis::NoiseRow& row) {
  if (!(row.run_noise.df > 0)) return "";
  return floor_text(row, row.floor_runs_pct);
}

bool any_run_noise(const analysis::NoiseReport& report) {
  for (const auto& table : report.tables) {
    if (table.rows_runs_unknown < static_cast<int>(table.rows.size())) return true;
  }
  return false;
}

// One line per table when some rows have no run-to-run noise, or "".
std::string run_noise_unknown_line(const analysis::NoiseTable& table) {
  if (table.rows_runs_unknown == 0) return "";
  if (table.rows_runs_unknown == static_cast<int>(table.rows.size())) {
    return "Run-to-run noise: unknown (" + analysis::unknown_run_noise_text() +
           ") - comparisons of separate runs are not tested.";
  }
  return fmt::format(
      "Run-to-run noise unknown for {} of {} rows (no kernel on this SUT was measured in 2 runs of them; kbench "
      "calibrate measures it) - comparisons of separate runs are not tested on those rows.",
      table.rows_runs_unknown, table.rows.size());
}

std::vector<std::string> explanation(const analysis::NoiseReport& report) {
  std::vector<std::string> lines{
      "between cv: sd of the log of the session means, the noise between sessions that decides every verdict; "
      "within cv: the noise of the repeats inside a session, which decides none.",
      "model: what the other profiles on this SUT with >= 2 sessions say about the row's between-session noise "
      "(pooled; its df and cv); a comparison borrows it as the prior of the session test."};
  if (any_run_noise(report)) {
    lines.push_back(
        "run cv: how much whole runs of one kernel differ on this SUT (sd of the runs' mean log session mean, "
        "pooled over every kernel measured in >= 2 runs, all profiles); it decides every comparison of two "
        "separate kbench runs.");
  }
  if (report.floor_rows == 0) return lines;  // no floor printed: nothing to explain
  lines.push_back(fmt::format(
      "floor: the smallest change the session test detects with {:.0f}% probability (two-sided, level {}) "
      "comparing this many sessions against as many; own sessions and model pooled; (m): from the model alone "
      "(1 session).",
      report.power * 100, format_exact(report.floor_alpha)));
  lines.push_back(fmt::format(
      "floor alone: the same at level {:.3g} (one real change among {} rows under Benjamini-Hochberg).",
      report.floor_alone_alpha, report.floor_rows));
  if (any_run_noise(report)) {
    lines.push_back(
        "floor runs: the floor for two separate runs, one a side, with this many sessions each: the run term "
        "2 x run cv^2 joins the variance, as compare tests them.");
  }
  return lines;
}

}  // namespace

void render_noise_grid(const analysis::NoiseReport& report, std::ostream& out) {
  for (const auto& table : report.tables) {
    std::vector<TextColumn> columns{{"Benchmark", Align::Left},    {"Result Class", Align::Left},
                                           {"mean", Align::Right},        {"n", Align::Right},
                                           {"sessions", Align::Right},    {"between cv", Align::Right},
                                           {"within cv", Align::Right},   {"model", Align::Right},
                                           {"floor", Align::Right},       {"floor alone", Align::Right},
                                           {"run cv", Align::Right},      {"floor runs", Align::Right}};
    if (table.aa_done) columns.push_back({"A/A change", Align::Right});
    TextTable text(columns);
    Footnotes notes;
    const std::string* previous = nullptr;
    for (const auto& row : table.rows) {
      const bool new_group = previous == nullptr || *previous != row.benchmark;
      std::vector<std::string> cells{new_group ? row.benchmark : "",
                                     row.result_class.label(),
                                     format_number(row.summary.mean),
                                     std::to_string(row.summary.count),
                                     std::to_string(row.sessions),
                                     percent_or_empty(row.between_cv_pct),
                                     percent_or_empty(row.within_cv_pct),
                                     model_text(row),
                                     floor_text(row, row.floor_pct),
                                     floor_text(row, row.floor_alone_pct),
                                     run_text(row),
                                     floor_runs_text(row)};
      if (table.aa_done) {
        std::string aa;
        if (row.aa.present && row.aa_base_present) {
          Row model_row;
          model_row.result_class = row.result_class;
          model_row.base_present = true;
          const double change = signed_change(model_row, row.aa, report.legend.sign);
          aa = std::string(mark_prefix(row.aa.verdict)) + format_percent(change) + notes.markers(row.aa);
        }
        cells.push_back(aa);
      }
      text.add_row(cells, new_group);
      previous = &row.benchmark;
    }
    out << "Noise between sessions of swprofile " << report.profile << " on SUT " << table.sut << " ("
        << table.sessions << (table.sessions == 1 ? " session" : " sessions") << "; "
        << table.other_profiles << (table.other_profiles == 1 ? " other profile" : " other profiles")
        << " on this SUT for the noise model):\n";
    if (!text.empty()) text.render_grid(out);
    for (const std::string& line : notes.lines()) out << line << '\n';
    for (const std::string& line : explanation(report)) out << line << '\n';
    if (table.rows_unknown > 0) {
      out << "Between-session noise unknown for " << table.rows_unknown << " of " << table.rows.size()
          << " rows: " << analysis::unknown_noise_text() << ".\n";
    }
    if (const std::string line = run_noise_unknown_line(table); !line.empty()) out << line << '\n';
    out << table.split << '\n';
    if (table.aa_done) {
      for (const std::string& line : legend_lines(report.legend, false)) out << line << '\n';
      out << "A/A marks (false alarms): " << table.aa_marks << " of " << table.rows.size() << " rows\n";
    }
  }
}

void render_noise_csv(const analysis::NoiseReport& report, std::ostream& out) {
  out << "sut,swprofile,split,benchmark,result_class,unit,better,n,sessions,mean,cv,between_session_cv_pct,"
         "within_session_cv_pct,between_session_share,model_profiles,model_df,model_cv_pct,floor_basis,"
         "floor_log_variance,floor_prior_df,noise_floor_pct,noise_floor_alone_pct,note,aa_change_pct,"
         "aa_change_ci95_low_pct,aa_change_ci95_high_pct,aa_p_value,aa_q_value,aa_verdict,aa_session_noisy,"
         "aa_note,run_cv_pct,run_df,runs,noise_floor_runs_pct\n";
  for (const auto& table : report.tables) {
    for (const auto& row : table.rows) {
      const bool aa = row.aa.present && row.aa_base_present;
      const auto& ci = row.aa.change_ci;
      out << csv_field(table.sut) << ',' << csv_field(report.profile) << ',' << csv_field(table.split) << ','
          << csv_field(row.benchmark) << ',' << csv_field(row.result_class.name) << ','
          << csv_field(row.result_class.unit) << ',' << to_string(row.result_class.better) << ','
          << row.summary.count << ',' << row.sessions << ',' << format_exact(row.summary.mean) << ','
          << format_exact(row.summary.cv) << ',' << format_exact(row.between_cv_pct) << ','
          << format_exact(row.within_cv_pct) << ',' << format_exact(row.between_share) << ','
          << row.model.profiles << ',' << format_exact(row.model.df) << ',' << format_exact(row.model_cv_pct) << ','
          << analysis::floor_basis_name(row.floor_basis) << ',' << format_exact(row.floor_log_variance) << ','
          << format_exact(row.floor_prior_df) << ',' << format_exact(row.floor_pct) << ','
          << format_exact(row.floor_alone_pct) << ',' << csv_field(row.note) << ','
          << (aa ? format_exact(row.aa.change_pct) : "") << ',' << (aa && ci.valid ? format_exact(ci.low) : "")
          << ',' << (aa && ci.valid ? format_exact(ci.high) : "") << ','
          << (aa ? format_exact(row.aa.p_value) : "") << ',' << (aa ? format_exact(row.aa.q_value) : "") << ','
          << (aa ? std::string(verdict_name(row.aa.verdict)) : "") << ','
          << (aa ? (row.aa.session_noisy ? "true" : "false") : "") << ',' << csv_field(row.aa.note) << ','
          << format_exact(row.run_cv_pct) << ',' << format_exact(row.run_noise.df) << ',' << row.run_noise.runs
          << ',' << format_exact(row.floor_runs_pct) << '\n';
    }
  }
}

namespace {

nlohmann::ordered_json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

}  // namespace

void render_noise_json(const analysis::NoiseReport& report, std::ostream& out) {
  using Json = nlohmann::ordered_json;
  Json doc = {{"swprofile", report.profile},
              {"method", report.legend.method},
              {"fdr", report.legend.fdr ? Json(*report.legend.fdr) : Json(nullptr)},
              {"sessions", report.legend.sessions},
              {"power", report.power},
              {"floor_alpha", report.floor_alpha},
              {"floor_alone_alpha", report.floor_alone_alpha},
              {"floor_rows", report.floor_rows},
              {"aa_rows_tested", report.legend.rows_tested},
              {"tables", Json::array()}};
  for (const auto& table : report.tables) {
    Json rows = Json::array();
    for (const auto& row : table.rows) {
      const bool aa = row.aa.present && row.aa_base_present;
      Json aa_json = nullptr;
      if (aa) {
        aa_json = {{"change_pct", finite_or_null(row.aa.change_pct)},
                   {"change_ci95_pct", row.aa.change_ci.valid
                                           ? Json{{"low", row.aa.change_ci.low}, {"high", row.aa.change_ci.high}}
                                           : Json(nullptr)},
                   {"p_value", finite_or_null(row.aa.p_value)},
                   {"q_value", finite_or_null(row.aa.q_value)},
                   {"verdict", std::string(verdict_name(row.aa.verdict))},
                   {"session_noisy", row.aa.session_noisy},
                   {"note", row.aa.note}};
      }
      rows.push_back({{"benchmark", row.benchmark},
                      {"result_class",
                       {{"name", row.result_class.name},
                        {"unit", row.result_class.unit},
                        {"better", std::string(to_string(row.result_class.better))},
                        {"label", row.result_class.label()}}},
                      {"n", row.summary.count},
                      {"sessions", row.sessions},
                      {"mean", finite_or_null(row.summary.mean)},
                      {"cv", finite_or_null(row.summary.cv)},
                      {"between_session_cv_pct", finite_or_null(row.between_cv_pct)},
                      {"within_session_cv_pct", finite_or_null(row.within_cv_pct)},
                      {"between_session_share", finite_or_null(row.between_share)},
                      {"model",
                       row.model.df > 0 ? Json{{"profiles", row.model.profiles},
                                               {"df", row.model.df},
                                               {"cv_pct", finite_or_null(row.model_cv_pct)}}
                                        : Json(nullptr)},
                      {"floor_basis", analysis::floor_basis_name(row.floor_basis)},
                      {"floor_log_variance", finite_or_null(row.floor_log_variance)},
                      {"floor_prior_df", row.floor_prior_df},
                      {"noise_floor_pct", finite_or_null(row.floor_pct)},
                      {"noise_floor_alone_pct", finite_or_null(row.floor_alone_pct)},
                      {"note", row.note},
                      {"run_noise", row.run_noise.df > 0 ? Json{{"cv_pct", finite_or_null(row.run_cv_pct)},
                                                                {"df", row.run_noise.df},
                                                                {"runs", row.run_noise.runs}}
                                                         : Json(nullptr)},
                      {"noise_floor_runs_pct", finite_or_null(row.floor_runs_pct)},
                      {"aa", aa_json}});
    }
    doc["tables"].push_back({{"sut", table.sut},
                             {"sessions", table.sessions},
                             {"other_profiles", table.other_profiles},
                             {"rows_unknown", table.rows_unknown},
                             {"noise_unknown", table.rows_unknown > 0 ? Json(analysis::unknown_noise_text())
                                                                      : Json(nullptr)},
                             {"rows_runs_unknown", table.rows_runs_unknown},
                             {"run_noise_unknown", table.rows_runs_unknown > 0
                                                       ? Json(analysis::unknown_run_noise_text())
                                                       : Json(nullptr)},
                             {"aa_done", table.aa_done},
                             {"split", table.split},
                             {"aa_marks", table.aa_done ? Json(table.aa_marks) : Json(nullptr)},
                             {"rows", rows}});
  }
  out << doc.dump(2) << '\n';
}

}  // namespace kbench::report
