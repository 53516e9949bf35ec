// The A/A view of `kbench noise`: per SUT the noise floor of every row and the
// A/A comparison, as a grid for people or CSV/JSON with every number unrounded.
#include "report/noise_report.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "common/errors.h"
#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::report {

namespace {

std::vector<std::string> explanation(const analysis::NoiseReport& report) {
  return {
      fmt::format("A/A: the profile compared with itself; every mark is a false alarm ({} rows tested).",
                  report.legend.rows_tested),
      fmt::format("floor: the smallest change a comparison with as many samples and the same cv detects with "
                  "{:.0f}% probability (Welch, two-sided, level {}); below it, no mark does not mean no change.",
                  report.power * 100, format_exact(report.floor_alpha)),
      fmt::format("floor alone: the same at level {:.3g} (one real change among {} rows under Benjamini-Hochberg).",
                  report.floor_alone_alpha, report.floor_rows),
      "between: share of the variance between sessions (boots); (m): floor on session means, sessions counted."};
}

void render_grid(const analysis::NoiseReport& report, std::ostream& out) {
  for (const auto& table : report.tables) {
    TextTable text({{"Benchmark", Align::Left},
                            {"Result Class", Align::Left},
                            {"mean", Align::Right},
                            {"n", Align::Right},
                            {"sessions", Align::Right},
                            {"cv", Align::Right},
                            {"between", Align::Right},
                            {"floor", Align::Right},
                            {"floor alone", Align::Right},
                            {"A/A change", Align::Right}});
    Footnotes notes;
    const std::string* previous = nullptr;
    for (const auto& row : table.rows) {
      const bool new_group = previous == nullptr || *previous != row.benchmark;
      std::string aa;
      if (row.aa.present && row.aa_base_present) {
        Row model_row;
        model_row.result_class = row.result_class;
        model_row.base_present = true;
        const double change = signed_change(model_row, row.aa, report.legend.sign);
        aa = std::string(mark_prefix(row.aa.verdict)) + format_percent(change) +
             notes.markers(row.aa);
      }
      const std::string means_mark = row.floor_on_session_means ? " (m)" : "";
      text.add_row({new_group ? row.benchmark : "", row.result_class.label(), format_number(row.summary.mean),
                    std::to_string(row.summary.count), std::to_string(row.sessions),
                    std::isnan(row.summary.cv) ? "" : format_percent(row.summary.cv * 100),
                    std::isnan(row.between_share) ? "" : format_percent(row.between_share * 100, 0),
                    std::isnan(row.floor_pct) ? "" : format_percent(row.floor_pct) + means_mark,
                    std::isnan(row.floor_alone_pct) ? "" : format_percent(row.floor_alone_pct) + means_mark,
                    aa},
                   new_group);
      previous = &row.benchmark;
    }
    out << "Noise of swprofile " << report.profile << " on SUT " << table.sut << " (" << table.split
        << "):\n";
    if (!text.empty()) text.render_grid(out);
    for (const std::string& line : notes.lines()) out << line << '\n';
    for (const std::string& line : explanation(report)) out << line << '\n';
    for (const std::string& line : legend_lines(report.legend, false)) out << line << '\n';
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
          << row.summary.count << ',' << row.sessions << ',' << format_exact(row.summary.mean) << ','
          << format_exact(row.summary.cv) << ',' << format_exact(row.between_share) << ','
          << (row.floor_on_session_means ? "session_means" : "samples") << ',' << row.floor_count << ','
          << format_exact(row.floor_cv) << ',' << format_exact(row.floor_pct) << ','
          << format_exact(row.floor_alone_pct) << ',' << (aa ? format_exact(row.aa.change_pct) : "")
          << ',' << (aa && ci.valid ? format_exact(ci.low) : "") << ','
          << (aa && ci.valid ? format_exact(ci.high) : "") << ','
          << (aa ? format_exact(row.aa.p_value) : "") << ','
          << (aa ? format_exact(row.aa.q_value) : "") << ','
          << (aa ? std::string(verdict_name(row.aa.verdict)) : "") << ','
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

}  // namespace

NoiseFormat parse_noise_format(const std::string& text) {
  if (text == "grid") return NoiseFormat::Grid;
  if (text == "csv") return NoiseFormat::Csv;
  if (text == "json") return NoiseFormat::Json;
  throw InputError("--format " + text + ": expected grid, csv or json");
}

void render_noise(const analysis::NoiseReport& report, NoiseFormat format, std::ostream& out) {
  switch (format) {
    case NoiseFormat::Grid: render_grid(report, out); return;
    case NoiseFormat::Csv: render_csv(report, out); return;
    case NoiseFormat::Json: render_json(report, out); return;
  }
}

}  // namespace kbench::report
