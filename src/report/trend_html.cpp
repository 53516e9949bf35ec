// `kbench trend --format html`: one self-contained page (report/html_page.h)
// with a Vega-Lite plot per row, the change points as labelled rules, and the
// same tables as the text (docs/reports.md, "Trends").
//
// For scripts and the browser tests: each row is <section class="trend-row"
// id="trend-row-N"> holding <div id="trend-plot-N" class="plot trend-plot">;
// each plot's view has the layers trend_ci, trend_means, changepoint_rules
// and changepoint_labels (SVG groups of class "<layer>_marks") and the data
// sets "points" (one per swprofile: index,
// swprofile, mean, ci_low, ci_high, sessions) and "changepoints" (one per
// change point: position, before, after, label, verdict); the step table is
// <table id="trend-steps">, its rows class "trend-step" with data-at naming
// the first swprofile after the step. window.kbenchData holds the same per
// row.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <ostream>
#include <sstream>

#include "report/format.h"
#include "report/html_page.h"
#include "report/trend.h"

namespace kbench::report {

using analysis::Cell;
using analysis::SignConvention;
using analysis::signed_change;
using analysis::Table;
using analysis::Verdict;

namespace {

using nlohmann::json;

json number_or_null(double value) { return std::isfinite(value) ? json(value) : json(); }

char verdict_letter(Verdict verdict) {
  switch (verdict) {
    case Verdict::Improvement: return 'I';
    case Verdict::Regression: return 'R';
    case Verdict::Unchanged: return 'U';
    case Verdict::Undecided: return 'Q';
    case Verdict::None: break;
  }
  return ' ';
}

// "(R) -10.12%" as the text prints it, without footnote markers.
std::string step_change_text(const analysis::TrendStep& step, SignConvention sign) {
  if (step.row.cells.empty() || !step.row.base_present) return "not tested";
  const Cell& cell = step.row.cells.front();
  const std::string change = format_percent(signed_change(step.row, cell, sign));
  return std::string(mark_prefix(cell.verdict)) + (change.empty() ? "not tested" : change);
}

std::string row_heading(const analysis::TrendRow& row) {
  const std::string params = params_text(row.params);
  return fmt::format("{}{} {} on SUT {}", row.benchmark, params.empty() ? "" : " [" + params + "]",
                     row.result_class.label(), row.sut);
}

json row_data(const analysis::TrendRow& row, SignConvention sign) {
  json points = json::array();
  for (std::size_t p = 0; p < row.points.size(); ++p) {
    const auto& point = row.points[p];
    points.push_back({{"index", p},
                      {"swprofile", point.swprofile},
                      {"mean", number_or_null(point.samples.mean)},
                      {"ci_low", number_or_null(point.ci_low)},
                      {"ci_high", number_or_null(point.ci_high)},
                      {"ci_of", point.ci_of_repeats ? "repeats of its one session" : "session means"},
                      {"sessions", point.sessions}});
  }
  json changepoints = json::array();
  for (const auto& step : row.steps) {
    const char letter = step.row.cells.empty() ? ' ' : verdict_letter(step.row.cells.front().verdict);
    changepoints.push_back({{"position", static_cast<double>(step.at) - 0.5},
                            {"at", row.points[step.at].swprofile},
                            {"before", step.before_label},
                            {"after", step.after_label},
                            {"label", step_change_text(step, sign)},
                            {"verdict", letter == ' ' ? json() : json(std::string(1, letter))}});
  }
  return {{"points", points}, {"changepoints", changepoints}};
}

json row_spec(const analysis::TrendRow& row, const json& data) {
  json names = json::array();
  for (const auto& point : row.points) names.push_back(point.swprofile);
  const std::string unit = row.result_class.unit;
  // The x axis is the swprofile's index, so a change point can sit between
  // two swprofiles; the labels are the names.
  const json x_axis = {{"title", "swprofile"},
                       {"values", json::array()},
                       {"labelExpr", names.dump() + "[datum.value]"},
                       {"labelAngle", -40},
                       {"grid", false}};
  json x_values = json::array();
  for (std::size_t p = 0; p < row.points.size(); ++p) x_values.push_back(p);
  json axis = x_axis;
  axis["values"] = x_values;
  const json x = {{"field", "index"}, {"type", "quantitative"}, {"axis", axis},
                  {"scale", {{"domain", {-0.5, static_cast<double>(row.points.size()) - 0.5}}}}};
  const json y_scale = {{"zero", false}};
  const std::string y_title = row.result_class.label() + ", " + std::string(to_string(row.result_class.better)) +
                              " is better";
  json layers = json::array();
  // Named layers: their SVG groups carry the class "<name>_marks".
  layers.push_back({{"name", "trend_ci"},
                    {"data", {{"name", "points"}}},
                    {"mark", {{"type", "rule"}, {"color", "#7a7a7a"}}},
                    {"encoding", {{"x", x}, {"y", {{"field", "ci_low"}, {"type", "quantitative"}, {"scale", y_scale},
                                                   {"title", y_title}}},
                                  {"y2", {{"field", "ci_high"}}}}}});
  layers.push_back({{"name", "trend_means"},
                    {"data", {{"name", "points"}}},
                    {"mark", {{"type", "line"}, {"color", "#0b4f9c"}, {"point", {{"filled", true}, {"size", 50}}}}},
                    {"encoding",
                     {{"x", x},
                      {"y", {{"field", "mean"}, {"type", "quantitative"}, {"scale", y_scale}}},
                      {"tooltip",
                       {{{"field", "swprofile"}, {"type", "nominal"}},
                        {{"field", "mean"}, {"type", "quantitative"}, {"format", ".4~r"}, {"title", "mean (" + unit + ")"}},
                        {{"field", "ci_low"}, {"type", "quantitative"}, {"format", ".4~r"}, {"title", "95% CI low"}},
                        {{"field", "ci_high"}, {"type", "quantitative"}, {"format", ".4~r"}, {"title", "95% CI high"}},
                        {{"field", "ci_of"}, {"type", "nominal"}, {"title", "CI of"}},
                        {{"field", "sessions"}, {"type", "quantitative"}}}}}}});
  // Also without change points: every view then has the data set
  // "changepoints" (empty), which is what a page script or test reads.
  {
    const json rule_x = {{"field", "position"}, {"type", "quantitative"}};
    layers.push_back({{"name", "changepoint_rules"},
                      {"data", {{"name", "changepoints"}}},
                      {"mark", {{"type", "rule"}, {"color", "#8e1212"}, {"strokeDash", {6, 3}}, {"strokeWidth", 2}}},
                      {"encoding", {{"x", rule_x},
                                    {"tooltip", {{{"field", "before"}, {"type", "nominal"}},
                                                 {{"field", "after"}, {"type", "nominal"}},
                                                 {{"field", "label"}, {"type", "nominal"}, {"title", "step"}}}}}}});
    layers.push_back({{"name", "changepoint_labels"},
                      {"data", {{"name", "changepoints"}}},
                      {"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}, {"dy", 2}, {"baseline", "top"},
                                {"fontWeight", "bold"}, {"color", "#8e1212"}}},
                      {"encoding", {{"x", rule_x}, {"y", {{"value", 0}}}, {"text", {{"field", "label"}}}}}});
  }
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"width", std::max<std::size_t>(320, 48 * row.points.size())},
          {"height", 240},
          {"datasets", data},
          {"layer", layers}};
}

std::string row_alt(const analysis::TrendRow& row, SignConvention sign) {
  std::string alt = fmt::format("Trend of {} across {} swprofiles", row_heading(row), row.points.size());
  if (!row.points.empty()) {
    alt += fmt::format(", mean {} at {} and {} at {}", format_number(row.points.front().samples.mean),
                       row.points.front().swprofile, format_number(row.points.back().samples.mean),
                       row.points.back().swprofile);
  }
  if (row.steps.empty()) alt += "; no change point";
  for (const auto& step : row.steps) alt += fmt::format("; change point {}: {}", step_place(step), step_change_text(step, sign));
  return alt + ". The numbers are in the table below.";
}

std::string verdict_html(const analysis::TrendStep& step) {
  if (step.row.cells.empty()) return "";
  const char letter = verdict_letter(step.row.cells.front().verdict);
  return letter == ' ' ? "" : html::verdict_mark(letter) + " ";
}

std::string change_html(const analysis::TrendStep& step, SignConvention sign) {
  if (step.row.cells.empty() || !step.row.base_present) return "not tested";
  const Cell& cell = step.row.cells.front();
  std::string text = verdict_html(step) + html::escape(format_percent(signed_change(step.row, cell, sign)));
  if (!cell.note.empty()) text += " <span class=\"note\">(" + html::escape(cell.note) + ")</span>";
  return text;
}

void row_section(const analysis::TrendRow& row, std::size_t index, SignConvention sign, std::ostream& body) {
  body << fmt::format("<section class=\"trend-row\" id=\"trend-row-{}\">\n<h2>{}</h2>\n", index,
                      html::escape(row_heading(row)));
  body << fmt::format("<div id=\"trend-plot-{}\" class=\"plot trend-plot\"></div>\n", index);
  body << "<p class=\"trend-summary\">" << html::escape(trend_row_summary(row)) << "</p>\n";
  body << "<table class=\"trend-points\"><thead><tr><th>swprofile</th><th class=\"numbers\">sessions</th>"
          "<th class=\"numbers\">mean</th><th class=\"numbers\">95% CI</th><th>step</th></tr></thead><tbody>\n";
  for (std::size_t p = 0; p < row.points.size(); ++p) {
    const auto& point = row.points[p];
    const analysis::TrendStep* step = nullptr;
    for (const auto& s : row.steps)
      if (s.at == p) step = &s;
    std::string ci = std::isnan(point.ci_low) ? "" : format_number(point.ci_low) + " .. " + format_number(point.ci_high);
    if (point.ci_of_repeats && !ci.empty()) ci += " *";
    body << "<tr" << (step ? " class=\"trend-changepoint\"" : "") << "><td>" << html::escape(point.swprofile)
         << "</td><td class=\"numbers\">" << point.sessions << "</td><td class=\"numbers\">"
         << html::escape(format_number(point.samples.mean)) << "</td><td class=\"numbers\">" << html::escape(ci)
         << "</td><td>" << (step ? "change point: " + change_html(*step, sign) : "") << "</td></tr>\n";
  }
  body << "</tbody></table>\n";
  if (!row.missing.empty()) {
    const std::string names = fmt::format("{}", fmt::join(row.missing, ", "));
    body << "<p class=\"note\">No data for this row in: " << html::escape(names) << ".</p>\n";
  }
  bool repeats = false;
  for (const auto& point : row.points) repeats = repeats || point.ci_of_repeats;
  if (repeats) body << "<p class=\"note\">* one session: the CI of its repeats, which leaves out the session noise.</p>\n";
  body << "</section>\n";
}

void steps_section(const analysis::TrendReport& trend, std::ostream& body) {
  body << "<section id=\"trend-steps-section\">\n<h2>Steps at the change points</h2>\n";
  std::size_t steps = 0;
  for (const auto& row : trend.rows) steps += row.steps.size();
  if (steps == 0) {
    body << "<p id=\"trend-steps-none\">No change points: no steps to show.</p>\n</section>\n";
    return;
  }
  body << "<table id=\"trend-steps\"><thead><tr><th>SUT</th><th>Benchmark</th><th>Result Class</th><th>Step</th>"
          "<th class=\"numbers\">Before</th><th class=\"numbers\">Change</th></tr></thead><tbody>\n";
  Table table;
  for (const auto& row : trend.rows) {
    const std::string params = params_text(row.params);
    for (const auto& step : row.steps) {
      const char letter = step.row.cells.empty() ? ' ' : verdict_letter(step.row.cells.front().verdict);
      body << "<tr class=\"trend-step\" data-at=\"" << html::escape(row.points[step.at].swprofile) << "\""
           << (letter == ' ' ? std::string() : fmt::format(" data-verdict=\"{}\"", letter)) << "><td>"
           << html::escape(row.sut) << "</td><td>"
           << html::escape(row.benchmark + (params.empty() ? "" : " [" + params + "]")) << "</td><td>"
           << html::escape(row.result_class.label()) << "</td><td>" << html::escape(step_place(step))
           << "</td><td class=\"numbers\">"
           << html::escape(step.row.base_present ? format_number(step.row.base.mean) : "")
           << "</td><td class=\"numbers\">" << change_html(step, trend.legend.sign) << "</td></tr>\n";
      table.rows.push_back(step.row);
    }
  }
  body << "</tbody></table>\n<p class=\"note\">Step: the segment before the change point against the segment after "
          "it, as compare tests a base against a test swprofile.";
  for (const std::string& line : legend_lines(trend.legend, false, &table)) body << "<br>" << html::escape(line);
  body << "</p>\n</section>\n";
}

}  // namespace

void render_trend_html(const analysis::TrendReport& trend, const std::string& title, std::ostream& out) {
  html::Page page;
  page.title = title;
  std::ostringstream body;
  body << "<h1>" << html::escape(title) << "</h1>\n<p class=\"note\">";
  for (const std::string& line : trend_method_lines(trend)) body << html::escape(line) << "<br>";
  body << "</p>\n";
  json rows = json::array();
  for (std::size_t r = 0; r < trend.rows.size(); ++r) {
    const auto& row = trend.rows[r];
    const json data = row_data(row, trend.legend.sign);
    row_section(row, r, trend.legend.sign, body);
    page.plots.push_back({fmt::format("trend-plot-{}", r), row_spec(row, data), row_alt(row, trend.legend.sign)});
    rows.push_back({{"id", fmt::format("trend-row-{}", r)},
                    {"plot", fmt::format("trend-plot-{}", r)},
                    {"sut", row.sut},
                    {"benchmark", row.benchmark},
                    {"result_class", row.result_class.label()},
                    {"points", data["points"]},
                    {"changepoints", data["changepoints"]},
                    {"detection", row.changes.valid ? "" : row.changes.reason}});
  }
  steps_section(trend, body);
  page.body = body.str();
  page.data = {{"trend", rows}};
  html::write_page(page, out);
}

}  // namespace kbench::report
