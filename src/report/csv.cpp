// One line per (row, test profile), every number unrounded so a spreadsheet or
// script can redo any step. Quoting per RFC 4180; lines end in "\n".
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"

namespace kbench::report {

using analysis::Cell;
using analysis::ColumnSummary;
using analysis::Report;
using analysis::Row;
using analysis::signed_change;
using analysis::Table;
using analysis::Verdict;

namespace {

void summary_fields(std::vector<std::string>& fields, bool present, const stats::Summary& s) {
  if (!present) {
    fields.insert(fields.end(), 9, "");
    return;
  }
  fields.push_back(std::to_string(s.count));
  for (double v : {s.mean, s.median, s.stddev, s.cv, s.min, s.max, s.ci95_low, s.ci95_high})
    fields.push_back(format_exact(v));
}

const char* const kHeader[] = {
    "sut", "base_profile", "test_profile", "benchmark", "result_class", "unit", "better",
    "base_n", "base_mean", "base_median", "base_stddev", "base_cv", "base_min", "base_max", "base_ci95_low",
    "base_ci95_high", "test_n", "test_mean", "test_median", "test_stddev", "test_cv", "test_min", "test_max",
    "test_ci95_low", "test_ci95_high", "change_pct", "signed_change_pct", "change_ci95_low_pct",
    "change_ci95_high_pct", "p_value", "q_value", "verdict", "session_noisy", "note",
    // Added with the three-valued verdicts, after the older columns so
    // scripts that read columns by position keep working.
    "change_ci_level", "sessions_to_decide", "base_sessions", "test_sessions", "prior_df", "heavy_tail", "bimodal",
    "column_improvements", "column_regressions", "column_unchanged", "column_undecided", "column_untested",
    "environment_differences",
    // Last, so that the columns before it keep their places for scripts that
    // read them by position.
    "params",
    // Added with the run-to-run noise model, after params for the same reason.
    "run_df",
    // Added with SUT classes: the table's class, its machines (joined by
    // ' '), and how many machines a class cell was tested across.
    "sut_class", "suts", "machines",
    // Added with paired designs: how many pairs measured at the same moment
    // a cell was tested on.
    "pairs"};

// A table's environment differences in one field: lines joined by " | ".
std::string joined_differences(const Table& table) {
  std::string joined;
  for (const std::string& line : table.environment_differences) joined += (joined.empty() ? "" : " | ") + line;
  return joined;
}

class CsvRenderer : public Renderer {
 public:
  void render(const Report& report, std::ostream& out) const override {
    std::vector<std::string> header(std::begin(kHeader), std::end(kHeader));
    write(header, out);
    const Cell absent;
    for (const Table& table : report.tables) {
      const std::size_t columns = std::max<std::size_t>(1, table.test_profiles.size());
      const std::string differences = joined_differences(table);
      std::string suts;
      for (const std::string& sut : table.suts) suts += (suts.empty() ? "" : " ") + sut;
      for (const Row& row : table.rows) {
        for (std::size_t c = 0; c < columns; ++c) {
          const Cell& cell = c < row.cells.size() ? row.cells[c] : absent;
          std::vector<std::string> fields{table.sut,
                                          table.base_profile,
                                          c < table.test_profiles.size() ? table.test_profiles[c] : "",
                                          row.benchmark,
                                          row.result_class.name,
                                          row.result_class.unit,
                                          std::string(to_string(row.result_class.better))};
          summary_fields(fields, row.base_present, row.base);
          summary_fields(fields, cell.present, cell.test);
          const bool both = row.base_present && cell.present;
          fields.push_back(both ? format_exact(cell.change_pct) : "");
          fields.push_back(both ? format_exact(signed_change(row, cell, report.legend.sign)) : "");
          fields.push_back(both && cell.change_ci.valid ? format_exact(cell.change_ci.low) : "");
          fields.push_back(both && cell.change_ci.valid ? format_exact(cell.change_ci.high) : "");
          fields.push_back(both ? format_exact(cell.p_value) : "");
          fields.push_back(both ? format_exact(cell.q_value) : "");
          fields.push_back(std::string(verdict_name(cell.verdict)));
          fields.push_back(cell.session_noisy ? "true" : "false");
          fields.push_back(cell.note);
          fields.push_back(both && cell.change_ci.valid ? format_exact(report.legend.ci_level) : "");
          fields.push_back(cell.verdict == Verdict::Undecided && cell.sessions_to_decide > 0
                               ? std::to_string(cell.sessions_to_decide)
                               : "");
          fields.push_back(std::to_string(cell.base_sessions));
          fields.push_back(std::to_string(cell.test_sessions));
          fields.push_back(format_exact(cell.prior_df));
          fields.push_back(cell.heavy_tail ? "true" : "false");
          fields.push_back(cell.bimodal ? "true" : "false");
          const ColumnSummary counts = c < table.columns.size() ? table.columns[c] : ColumnSummary{};
          for (int count : {counts.improvements, counts.regressions, counts.unchanged, counts.undecided, counts.untested})
            fields.push_back(std::to_string(count));
          fields.push_back(differences);
          fields.push_back(params_text(row.params));
          fields.push_back(format_exact(cell.run_df));
          fields.push_back(table.sut_class);
          fields.push_back(suts);
          fields.push_back(std::to_string(cell.machines));
          fields.push_back(std::to_string(cell.pairs));
          write(fields, out);
        }
      }
    }
  }

 private:
  static void write(const std::vector<std::string>& fields, std::ostream& out) {
    for (std::size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_field(fields[i]);
    out << '\n';
  }
};

}  // namespace

std::unique_ptr<Renderer> make_csv_renderer() { return std::make_unique<CsvRenderer>(); }

}  // namespace kbench::report
