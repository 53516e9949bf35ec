// The whole model as JSON, every number unrounded (nlohmann prints the
// shortest form that reads back to the same double); NaN becomes null.
#include <nlohmann/json.hpp>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"

namespace kbench::report {

using analysis::Cell;
using analysis::ColumnSummary;
using analysis::Legend;
using analysis::Report;
using analysis::Row;
using analysis::SignConvention;
using analysis::signed_change;
using analysis::SutScope;
using analysis::Table;
using analysis::Verdict;

namespace {

using Json = nlohmann::ordered_json;

Json number(double v) { return std::isnan(v) ? Json(nullptr) : Json(v); }

Json summary_json(bool present, const stats::Summary& s) {
  if (!present) return nullptr;
  return Json{{"n", s.count},          {"mean", number(s.mean)},         {"median", number(s.median)},
              {"stddev", number(s.stddev)}, {"cv", number(s.cv)},        {"min", number(s.min)},
              {"max", number(s.max)},      {"ci95_low", number(s.ci95_low)}, {"ci95_high", number(s.ci95_high)}};
}

Json cell_json(const Row& row, const Cell& cell, const std::string& profile, SignConvention sign) {
  const bool both = row.base_present && cell.present;
  Json change_ci = nullptr;
  if (both && cell.change_ci.valid) change_ci = Json{{"low", number(cell.change_ci.low)}, {"high", number(cell.change_ci.high)}};
  return Json{{"test_profile", profile},
              {"present", cell.present},
              {"test", summary_json(cell.present, cell.test)},
              {"change_pct", both ? number(cell.change_pct) : Json(nullptr)},
              {"signed_change_pct", both ? number(signed_change(row, cell, sign)) : Json(nullptr)},
              {"change_ci95_pct", change_ci},
              {"p_value", both ? number(cell.p_value) : Json(nullptr)},
              {"q_value", both ? number(cell.q_value) : Json(nullptr)},
              {"verdict", verdict_name(cell.verdict)},
              {"session_noisy", cell.session_noisy},
              {"note", cell.note},
              {"sessions_to_decide", cell.verdict == Verdict::Undecided && cell.sessions_to_decide > 0
                                         ? Json(cell.sessions_to_decide)
                                         : Json(nullptr)},
              {"base_sessions", cell.base_sessions},
              {"test_sessions", cell.test_sessions},
              {"prior_df", number(cell.prior_df)},
              {"run_df", number(cell.run_df)},
              {"heavy_tail", cell.heavy_tail},
              {"bimodal", cell.bimodal},
              {"machines", cell.machines},
              {"pairs", cell.pairs}};
}

// Where a marked benchmark's kernel time went; shares 0..1 as stored.
Json kernel_time_json(const Table& table) {
  Json shifts = Json::array();
  for (const analysis::KernelTimeShift& shift : table.kernel_time) {
    Json functions = Json::array();
    for (const analysis::FunctionShift& function : shift.functions) {
      functions.push_back(Json{{"function", function.function},
                               {"base_samples", function.samples_a},
                               {"test_samples", function.samples_b},
                               {"base_share", function.share_a},
                               {"test_share", function.share_b},
                               {"kfunc_change_pct", function.timed ? number(function.timed->change_pct) : Json(nullptr)},
                               {"kfunc_verdict", function.timed ? Json(verdict_name(function.timed->verdict))
                                                                : Json(nullptr)}});
    }
    shifts.push_back(Json{{"benchmark", shift.benchmark},
                          {"params", shift.params},
                          {"test_profile", table.test_profiles.at(shift.column)},
                          {"verdict", verdict_name(shift.verdict)},
                          {"share", shift.verdict == Verdict::Regression ? "gained" : "lost"},
                          {"base_sessions", shift.base_sessions},
                          {"test_sessions", shift.test_sessions},
                          {"base_samples", shift.base_samples},
                          {"test_samples", shift.test_samples},
                          {"unavailable", shift.unavailable.empty() ? Json(nullptr) : Json(shift.unavailable)},
                          {"functions", std::move(functions)},
                          {"kfunc_commands", shift.kfunc_commands}});
  }
  return shifts;
}

class JsonRenderer : public Renderer {
 public:
  void render(const Report& report, std::ostream& out) const override {
    const Legend& legend = report.legend;
    Json doc;
    doc["legend"] = Json{{"method", legend.method},
                         {"fdr", legend.fdr ? Json(*legend.fdr) : Json(nullptr)},
                         {"alpha", legend.alpha},
                         {"sign", legend.sign == SignConvention::Better ? "better" : "raw"},
                         {"rows_tested", legend.rows_tested},
                         {"min_change_pct", legend.min_change_pct},
                         {"ci_level", legend.ci_level},
                         {"looks", legend.looks}};
    Json tables = Json::array();
    for (const Table& table : report.tables) {
      Json rows = Json::array();
      for (const Row& row : table.rows) {
        Json cells = Json::array();
        for (std::size_t c = 0; c < row.cells.size(); ++c)
          cells.push_back(cell_json(row, row.cells[c], c < table.test_profiles.size() ? table.test_profiles[c] : "",
                                    legend.sign));
        rows.push_back(Json{{"benchmark", row.benchmark},
                            {"params", row.params},
                            {"result_class", Json{{"name", row.result_class.name},
                                                  {"unit", row.result_class.unit},
                                                  {"better", to_string(row.result_class.better)},
                                                  {"label", row.result_class.label()}}},
                            {"base", summary_json(row.base_present, row.base)},
                            {"cells", std::move(cells)}});
      }
      Json columns = Json::array();
      for (std::size_t c = 0; c < table.columns.size(); ++c) {
        const ColumnSummary& column = table.columns[c];
        columns.push_back(Json{{"test_profile", c < table.test_profiles.size() ? table.test_profiles[c] : ""},
                               {"improvements", column.improvements},
                               {"regressions", column.regressions},
                               {"geomean_change_pct", number(column.geomean_change_pct)},
                               {"geomean_raw_change_pct", number(column.geomean_raw_change_pct)},
                               {"geomean_rows", column.geomean_rows},
                               {"unchanged", column.unchanged},
                               {"undecided", column.undecided},
                               {"untested", column.untested}});
      }
      tables.push_back(Json{{"sut", table.sut},
                            {"sut_scope", table.sut_scope == SutScope::SutClass ? "class" : "sut"},
                            {"sut_class", table.sut_class},
                            {"suts", table.suts},
                            {"base_profile", table.base_profile},
                            {"test_profiles", table.test_profiles},
                            {"rows", std::move(rows)},
                            {"columns", std::move(columns)},
                            {"environment_differences", table.environment_differences},
                            {"kernel_time", kernel_time_json(table)}});
    }
    doc["tables"] = std::move(tables);
    out << doc.dump(2) << '\n';
  }
};

}  // namespace

std::unique_ptr<Renderer> make_json_renderer() { return std::make_unique<JsonRenderer>(); }

}  // namespace kbench::report
