// kbench noise: the A/A view. What does "no change" mean on this machine?
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/noise.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::cli {

namespace {

using report::csv_field;

struct NoiseCommandOptions {
  std::string profile;
  std::string format = "grid";
  std::string method = "welch";
  std::string fdr = "0.05";
  std::string sessions = "auto";
  store::SampleQuery filter;  // --sut/--benchmark/--resultclass
  std::string store_url;
};

std::vector<std::string> explanation(const analysis::NoiseReport& report) {
  return {
      fmt::format("A/A: the profile compared with itself; every mark is a false alarm ({} rows tested).",
                  report.legend.rows_tested),
      fmt::format("floor: the smallest change a comparison with as many samples and the same cv detects with "
                  "{:.0f}% probability (Welch, two-sided, level {}); below it, no mark does not mean no change.",
                  report.power * 100, report::format_exact(report.floor_alpha)),
      fmt::format("floor alone: the same at level {:.3g} (one real change among {} rows under Benjamini-Hochberg).",
                  report.floor_alone_alpha, report.floor_rows),
      "between: share of the variance between sessions (boots); (m): floor on session means, sessions counted."};
}

void render_grid(const analysis::NoiseReport& report, std::ostream& out) {
  for (const auto& table : report.tables) {
    report::TextTable text({{"Benchmark", report::Align::Left},
                            {"Result Class", report::Align::Left},
                            {"mean", report::Align::Right},
                            {"n", report::Align::Right},
                            {"sessions", report::Align::Right},
                            {"cv", report::Align::Right},
                            {"between", report::Align::Right},
                            {"floor", report::Align::Right},
                            {"floor alone", report::Align::Right},
                            {"A/A change", report::Align::Right}});
    report::Footnotes notes;
    const std::string* previous = nullptr;
    for (const auto& row : table.rows) {
      const bool new_group = previous == nullptr || *previous != row.benchmark;
      std::string aa;
      if (row.aa.present && row.aa_base_present) {
        report::Row model_row;
        model_row.result_class = row.result_class;
        model_row.base_present = true;
        const double change = report::signed_change(model_row, row.aa, report.legend.sign);
        aa = std::string(report::mark_prefix(row.aa.verdict)) + report::format_percent(change) +
             notes.markers(row.aa);
      }
      const std::string means_mark = row.floor_on_session_means ? " (m)" : "";
      text.add_row({new_group ? row.benchmark : "", row.result_class.label(), report::format_number(row.summary.mean),
                    std::to_string(row.summary.count), std::to_string(row.sessions),
                    std::isnan(row.summary.cv) ? "" : report::format_percent(row.summary.cv * 100),
                    std::isnan(row.between_share) ? "" : report::format_percent(row.between_share * 100, 0),
                    std::isnan(row.floor_pct) ? "" : report::format_percent(row.floor_pct) + means_mark,
                    std::isnan(row.floor_alone_pct) ? "" : report::format_percent(row.floor_alone_pct) + means_mark,
                    aa},
                   new_group);
      previous = &row.benchmark;
    }
    out << "Noise of swprofile " << report.profile << " on SUT Class " << table.sut << " (" << table.split
        << "):\n";
    if (!text.empty()) text.render_grid(out);
    for (const std::string& line : notes.lines()) out << line << '\n';
    for (const std::string& line : explanation(report)) out << line << '\n';
    for (const std::string& line : report::legend_lines(report.legend, false)) out << line << '\n';
    out << "A/A marks (false alarms): " << table.aa_marks << " of " << table.rows.size() << " rows\n";
  }
}

void render_csv(const analysis::NoiseReport& report, std::ostream& out) {
  out << "sut,swprofile,split,benchmark,result_class,unit,better,n,sessions,mean,cv,between_session_share,"
         "floor_basis,floor_n,floor_cv,noise_floor_pct,noise_floor_alone_pct,aa_change_pct,"
         "aa_change_ci95_low_pct,aa_change_ci95_high_pct,aa_p_value,aa_q_value,aa_verdict,aa_session_noisy,"
         "aa_note\n";
  for (const auto& table : report.tables) {
    for (const auto& row : table.rows) {
      const bool aa = row.aa.present && row.aa_base_present;
      const auto& ci = row.aa.change_ci;
      out << csv_field(table.sut) << ',' << csv_field(report.profile) << ',' << csv_field(table.split) << ','
          << csv_field(row.benchmark) << ',' << csv_field(row.result_class.name) << ','
          << csv_field(row.result_class.unit) << ',' << to_string(row.result_class.better) << ','
          << row.summary.count << ',' << row.sessions << ',' << report::format_exact(row.summary.mean) << ','
          << report::format_exact(row.summary.cv) << ',' << report::format_exact(row.between_share) << ','
          << (row.floor_on_session_means ? "session_means" : "samples") << ',' << row.floor_count << ','
          << report::format_exact(row.floor_cv) << ',' << report::format_exact(row.floor_pct) << ','
          << report::format_exact(row.floor_alone_pct) << ',' << (aa ? report::format_exact(row.aa.change_pct) : "")
          << ',' << (aa && ci.valid ? report::format_exact(ci.low) : "") << ','
          << (aa && ci.valid ? report::format_exact(ci.high) : "") << ','
          << (aa ? report::format_exact(row.aa.p_value) : "") << ','
          << (aa ? report::format_exact(row.aa.q_value) : "") << ','
          << (aa ? std::string(report::verdict_name(row.aa.verdict)) : "") << ','
          << (aa ? (row.aa.session_noisy ? "true" : "false") : "") << ',' << csv_field(row.aa.note) << '\n';
    }
  }
}

nlohmann::ordered_json number(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

void render_json(const analysis::NoiseReport& report, std::ostream& out) {
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
        aa_json = {{"change_pct", number(row.aa.change_pct)},
                   {"change_ci95_pct", row.aa.change_ci.valid
                                           ? Json{{"low", row.aa.change_ci.low}, {"high", row.aa.change_ci.high}}
                                           : Json(nullptr)},
                   {"p_value", number(row.aa.p_value)},
                   {"q_value", number(row.aa.q_value)},
                   {"verdict", std::string(report::verdict_name(row.aa.verdict))},
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
                      {"mean", number(row.summary.mean)},
                      {"cv", number(row.summary.cv)},
                      {"between_session_share", number(row.between_share)},
                      {"floor_basis", row.floor_on_session_means ? "session_means" : "samples"},
                      {"floor_n", row.floor_count},
                      {"floor_cv", number(row.floor_cv)},
                      {"noise_floor_pct", number(row.floor_pct)},
                      {"noise_floor_alone_pct", number(row.floor_alone_pct)},
                      {"aa", aa_json}});
    }
    doc["tables"].push_back(
        {{"sut", table.sut}, {"split", table.split}, {"aa_marks", table.aa_marks}, {"rows", rows}});
  }
  out << doc.dump(2) << '\n';
}

void noise_command(const NoiseCommandOptions& options) {
  if (options.format != "grid" && options.format != "csv" && options.format != "json") {
    throw InputError("--format " + options.format + ": expected grid, csv or json");
  }
  analysis::NoiseOptions noise;
  noise.profile = options.profile;
  noise.compare.method = analysis::parse_test_method(options.method);
  noise.compare.fdr = parse_fdr(options.fdr);
  noise.compare.sessions = analysis::parse_session_mode(options.sessions);

  const OpenedStore opened = open_existing_store(options.store_url);
  require_swprofiles(opened, {options.profile});
  store::SampleQuery query = options.filter;
  query.swprofiles = {options.profile};
  const auto report = analysis::build_noise_report(opened.store->samples(query), noise);
  if (report.tables.empty()) {
    throw InputError("noise: no rows for swprofile '" + options.profile + "' match --sut/--benchmark/--resultclass");
  }
  if (options.format == "csv") render_csv(report, std::cout);
  else if (options.format == "json") render_json(report, std::cout);
  else render_grid(report, std::cout);
}

}  // namespace

void add_noise_command(CLI::App& app) {
  auto options = std::make_shared<NoiseCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "noise", "A/A view of one swprofile: the smallest change kbench can detect here (noise floor)");
  cmd->add_option("profile", options->profile, "swprofile name")->required();
  cmd->add_option("--format", options->format, "grid (default), csv or json");
  cmd->add_option("--method", options->method, "test of the A/A comparison: " + analysis::method_names() + " (default: welch)");
  cmd->add_option("--fdr", options->fdr, "Benjamini-Hochberg level (default 0.05), or off");
  cmd->add_option("--sessions", options->sessions, "auto (default), pooled or means, as for compare");
  add_sample_filter_options(*cmd, options->filter);
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Splits the sessions of the profile in two halves (first against second, in session order),\n"
      "or with one session its even repeats against its odd ones, and compares them.\n"
      "Examples:\n"
      "  kbench noise base\n"
      "  kbench noise base --benchmark 'syscall/*' --format csv");
  cmd->callback([options] { noise_command(*options); });
}

}  // namespace kbench::cli
