// compare --format html: one self-contained page (report/html_page.h) with
// the summary, the grid with its marks and footnotes, the legend, the
// environment differences, the command that reproduces it, a forest plot of
// every change with its CI, and per row, on opening it, the samples by
// session (docs/reports.md, "html").
//
// Size: a row's samples travel once, as data (window.kbenchData); one spec
// template in the page script draws any row's plot when it is opened, so
// 10,000 rows do not mean 10,000 specs.
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "assets/html/samples.js.h"
#include "report/format.h"
#include "report/html_page.h"
#include "report/renderers.h"

namespace kbench::report {

using analysis::Cell;
using analysis::Legend;
using analysis::Report;
using analysis::Row;
using analysis::SessionSamples;
using analysis::SignConvention;
using analysis::signed_change;
using analysis::Table;
using analysis::Verdict;

namespace {

using nlohmann::json;
using html::escape;

// The forest plot's and the CSS's name of a verdict: the mark the text
// formats print, and the word; "unchanged" has no mark, as in the grid.
const char* verdict_label(Verdict verdict) {
  switch (verdict) {
    case Verdict::Improvement: return "(I) improvement";
    case Verdict::Regression: return "(R) regression";
    case Verdict::Undecided: return "(?) undecided";
    case Verdict::Unchanged: return "unchanged";
    case Verdict::None: break;
  }
  return "not tested";
}

// The shell's colour classes (html_page.h); none for an untested cell.
const char* verdict_class(Verdict verdict) {
  switch (verdict) {
    case Verdict::Improvement: return "verdict-I";
    case Verdict::Regression: return "verdict-R";
    case Verdict::Undecided: return "verdict-Q";
    case Verdict::Unchanged: return "verdict-U";
    case Verdict::None: break;
  }
  return "";
}

// Samples go into the page with six significant digits: far below any
// benchmark's noise, and a third of the bytes of round-trip doubles. The
// exact values are one `kbench export` away.
double page_value(double value) {
  if (!std::isfinite(value) || value == 0) return value;
  return std::stod(fmt::format("{:.6g}", value));
}

json page_number(double value) { return std::isfinite(value) ? json(page_value(value)) : json(nullptr); }

// Per side of a row: [mean, ci95_low, ci95_high] of its repeats, and its
// sessions as [label, [values...]]. Session labels name the machine only in
// a class table, where sessions of several machines meet.
json side_json(bool present, const stats::Summary& summary, const std::vector<SessionSamples>& sessions,
               bool several_machines) {
  json side = json::object();
  if (!present) return side;
  side["m"] = json::array({page_number(summary.mean), page_number(summary.ci95_low), page_number(summary.ci95_high)});
  json by_session = json::array();
  for (const SessionSamples& session : sessions) {
    json values = json::array();
    for (const double value : session.values) values.push_back(page_value(value));
    by_session.push_back(json::array(
        {several_machines ? fmt::format("{} #{}", session.sut, session.session) : fmt::format("#{}", session.session),
         std::move(values)}));
  }
  side["s"] = std::move(by_session);
  return side;
}

// A change and its CI under the legend's sign convention: where the sign
// flips (lower is better), the interval's ends swap.
struct SignedChange {
  double change = stats::kNaN;
  double low = stats::kNaN;
  double high = stats::kNaN;
};

SignedChange signed_interval(const Row& row, const Cell& cell, SignConvention sign) {
  SignedChange result;
  result.change = signed_change(row, cell, sign);
  if (std::isnan(result.change) || !cell.change_ci.valid) return result;
  const bool flipped = sign == SignConvention::Better && row.result_class.better == Better::Lower;
  result.low = flipped ? -cell.change_ci.high : cell.change_ci.low;
  result.high = flipped ? -cell.change_ci.low : cell.change_ci.high;
  return result;
}

// Where a marked benchmark's kernel time went, as the environment
// differences are shown: the heading a paragraph, each block's heading a
// paragraph and its items a list.
std::string kernel_time_html(const analysis::Table& table) {
  if (table.kernel_time.empty()) return "";
  std::string h = "<div class=\"kernel-time\">\n<p>" + escape(kKernelTimeHeading) + "</p>\n";
  for (const KernelTimeBlock& block : kernel_time_blocks(table, plain_text)) {
    h += "<p>" + escape(block.heading) + "</p>\n";
    if (block.items.empty()) continue;
    h += "<ul>\n";
    for (const std::string& item : block.items) h += "<li>" + escape(item) + "</li>\n";
    h += "</ul>\n";
  }
  return h + "</div>\n";
}

json forest_spec(const json& rows, double min_change_pct, SignConvention sign) {
  const json verdicts = json::array({"(I) improvement", "(R) regression", "(?) undecided", "unchanged", "not tested"});
  // Colours as the table's verdict classes; the shapes say the same without them.
  const json colours = json::array({"#0a7a2a", "#b01818", "#a86b00", "#6b6b6b", "#b8b8b8"});
  const json shapes = json::array({"triangle-up", "triangle-down", "diamond", "circle", "cross"});
  const json x_title = sign == SignConvention::Raw ? "change % (raw: positive = larger)"
                                                   : "change % (positive = better)";
  const json y = {{"field", "line"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr},
                  {"axis", {{"labelLimit", 420}}}};
  json layers = json::array();
  if (min_change_pct > 0) {
    layers.push_back({{"data", {{"values", json::array({json::object()})}}},
                      {"mark", {{"type", "rect"}, {"color", "#ececec"}}},
                      {"encoding", {{"x", {{"datum", -min_change_pct}, {"type", "quantitative"}}},
                                    {"x2", {{"datum", min_change_pct}}}}}});
  }
  layers.push_back({{"data", {{"values", json::array({json::object()})}}},
                    {"mark", {{"type", "rule"}, {"color", "#555555"}}},
                    {"encoding", {{"x", {{"datum", 0}, {"type", "quantitative"}}}}}});
  const json colour = {{"field", "verdict"}, {"type", "nominal"}, {"title", "verdict"},
                       {"scale", {{"domain", verdicts}, {"range", colours}}}};
  layers.push_back({{"transform", json::array({{{"filter", "isValid(datum.low) && isValid(datum.high)"}}})},
                    {"mark", {{"type", "rule"}, {"strokeWidth", 1.5}}},
                    {"encoding", {{"y", y},
                                  {"x", {{"field", "low"}, {"type", "quantitative"}}},
                                  {"x2", {{"field", "high"}}},
                                  {"color", colour}}}});
  layers.push_back({{"mark", {{"type", "point"}, {"filled", true}, {"size", 70}, {"opacity", 1}}},
                    {"encoding", {{"y", y},
                                  {"x", {{"field", "change"}, {"type", "quantitative"}, {"title", x_title}}},
                                  {"color", colour},
                                  {"shape", {{"field", "verdict"}, {"type", "nominal"}, {"title", "verdict"},
                                             {"scale", {{"domain", verdicts}, {"range", shapes}}}}},
                                  {"tooltip", json::array({{{"field", "line"}, {"title", "row"}},
                                                           {{"field", "text"}, {"title", "change"}},
                                                           {{"field", "ci"}, {"title", "CI"}},
                                                           {{"field", "verdict"}}})}}}});
  return {{"data", {{"name", "rows"}, {"values", rows}}},
          {"width", 560},
          {"height", {{"step", 14}}},
          {"config", {{"legend", {{"orient", "top"}}}}},
          {"layer", std::move(layers)}};
}

struct TableParts {
  std::string html;
  json data;
  html::Plot forest;
};

class HtmlRenderer : public Renderer {
 public:
  void render(const Report& report, std::ostream& out) const override {
    html::Page page;
    const std::string profiles = report.tables.empty() ? std::string() : title_profiles(report.tables.front());
    page.title = "kbench compare" + profiles;
    std::string& body = page.body;
    body += "<h1>" + escape(page.title) + "</h1>\n";
    body += "<section id=\"summary\">\n<h2>Summary</h2>\n";
    for (const Table& table : report.tables) {
      const std::vector<std::string> lines = summary_lines(table, report.legend);
      body += "<p><strong>" + escape(lines.front()) + "</strong></p>\n<ul>\n";
      for (std::size_t i = 1; i < lines.size(); ++i) body += "<li>" + escape(lines[i]) + "</li>\n";
      body += "</ul>\n";
    }
    body += "</section>\n";
    if (!report.command.empty()) {
      body += "<section id=\"command\">\n<h2>Reproduce</h2>\n<pre><code>" + escape(report.command) +
              "</code></pre>\n</section>\n";
    }
    if (!report.notes.empty()) {
      body += "<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n";
      for (const std::string& note : report.notes) body += "<li>" + escape(note) + "</li>\n";
      body += "</ul>\n</section>\n";
    }
    json tables = json::array();
    for (std::size_t t = 0; t < report.tables.size(); ++t) {
      TableParts parts = render_table(report.tables[t], t, report.legend);
      body += parts.html;
      tables.push_back(std::move(parts.data));
      page.plots.push_back(std::move(parts.forest));
    }
    page.data = {{"tables", std::move(tables)}};
    page.script = kSamplesScript;
    html::write_page(page, out);
  }

 private:
  static std::string title_profiles(const Table& table) {
    std::string text = ": " + table.base_profile + " vs ";
    for (std::size_t i = 0; i < table.test_profiles.size(); ++i) text += (i ? ", " : "") + table.test_profiles[i];
    return text;
  }

  static TableParts render_table(const Table& table, std::size_t t, const Legend& legend) {
    TableParts parts;
    std::string& h = parts.html;
    const std::string id = std::to_string(t);
    const RowNames names(table);
    Footnotes notes;
    const bool several_machines = table.suts.size() > 1;
    const std::size_t columns = 3 + table.test_profiles.size();

    json rows_data = json::array();
    json forest_rows = json::array();
    std::string grid;
    std::string previous;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const Row& row = table.rows[r];
      const std::string name = names(row);
      const std::string label = row.result_class.label();
      const bool new_group = r == 0 || previous != name;
      previous = name;
      grid += new_group ? "<tr class=\"group\">" : "<tr>";
      grid += "<td>" + (new_group ? escape(name) : std::string()) + "</td>";
      grid += "<td><details data-table=\"" + id + "\" data-row=\"" + std::to_string(r) + "\"><summary>" +
              escape(label) + "</summary></details></td>";
      grid += "<td class=\"numbers\">" + (row.base_present ? escape(format_number(row.base.mean)) : "") + "</td>";
      json sides = json::array();
      static const std::vector<SessionSamples> kNone;
      sides.push_back(side_json(row.base_present, row.base, row.samples.empty() ? kNone : row.samples[0],
                                several_machines));
      for (std::size_t c = 0; c < table.test_profiles.size(); ++c) {
        if (c >= row.cells.size()) {
          grid += "<td></td>";
          sides.push_back(json::object());
          continue;
        }
        const Cell& cell = row.cells[c];
        const std::string text = change_cell(row, cell, legend.sign, notes);
        const char* css = cell.present && row.base_present ? verdict_class(cell.verdict) : "";
        grid += std::string("<td class=\"numbers") + (*css ? " " : "") + css + "\"" +
                (*css ? " title=\"" + std::string(verdict_name(cell.verdict)) + "\"" : std::string()) + ">" +
                escape(text) + "</td>";
        sides.push_back(side_json(cell.present, cell.test, c + 1 < row.samples.size() ? row.samples[c + 1] : kNone,
                                  several_machines));
        const SignedChange change = signed_interval(row, cell, legend.sign);
        if (std::isnan(change.change)) continue;
        const std::string line =
            table.test_profiles.size() == 1 ? name + " " + label : name + " " + label + " | " + table.test_profiles[c];
        forest_rows.push_back({{"row", r},
                               {"line", line},
                               {"profile", table.test_profiles[c]},
                               {"change", page_number(change.change)},
                               {"low", page_number(change.low)},
                               {"high", page_number(change.high)},
                               {"verdict", verdict_label(cell.verdict)},
                               {"text", text},
                               {"ci", std::isnan(change.low) ? std::string()
                                                             : format_percent(change.low) + " to " +
                                                                   format_percent(change.high)}});
      }
      grid += "</tr>\n";
      rows_data.push_back({{"name", name}, {"class", label}, {"unit", row.result_class.unit}, {"sides", sides}});
    }
    if (!table.columns.empty()) {
      grid += "<tr class=\"group\"><td>geomean</td><td>" +
              escape(fmt::format("all rows ({})", geomean_sense(legend.sign))) + "</td><td></td>";
      for (std::size_t c = 0; c < table.test_profiles.size(); ++c)
        grid += "<td class=\"numbers\">" +
                (c < table.columns.size() ? escape(format_percent(geomean_change(table.columns[c], legend.sign))) : "") +
                "</td>";
      grid += "</tr>\n";
    }

    h += "<section class=\"comparison\" id=\"table-" + id + "\">\n";
    h += "<h2>" + escape(table_heading(table)) + "</h2>\n";
    const std::string forest_id = "forest-" + id;
    const std::string alt = fmt::format(
        "Forest plot: the change of each of {} with its CI, one line per row and test profile, marked by verdict; "
        "the table below holds the same numbers.",
        count_noun(static_cast<int>(forest_rows.size()), "cell", "cells"));
    h += "<h3>Changes with their CIs</h3>\n<div id=\"" + forest_id + "\" class=\"plot forest\" role=\"img\" aria-label=\"" +
         escape(alt) + "\"></div>\n";
    h += "<h3>Table</h3>\n<p class=\"note\">Open a result class to see its samples by session (boot).</p>\n";
    h += "<table class=\"grid\" id=\"grid-" + id + "\">\n<thead><tr><th>Benchmark</th><th>Result Class</th>";
    h += "<th class=\"numbers\">" + escape(table.base_profile) + " (base)</th>";
    for (const std::string& test : table.test_profiles) h += "<th class=\"numbers\">" + escape(test) + "</th>";
    h += "</tr></thead>\n<tbody>\n" + grid + "</tbody>\n</table>\n";
    h += "<div class=\"legend\">\n";
    for (const std::string& line : legend_lines(legend, false, &table)) h += "<p>" + escape(line) + "</p>\n";
    for (const std::string& line : geomean_lines(table, legend.sign)) h += "<p>" + escape(line) + "</p>\n";
    h += "</div>\n";
    const std::vector<std::string> footnotes = notes.lines();
    if (!footnotes.empty()) {
      h += "<div class=\"footnotes\">\n";
      for (const std::string& line : footnotes) h += "<p>" + escape(line) + "</p>\n";
      h += "</div>\n";
    }
    const std::vector<std::string> environment = environment_lines(table);
    if (!environment.empty()) {
      h += "<div class=\"environment\">\n<p>" + escape(environment.front()) + "</p>\n<ul>\n";
      for (std::size_t i = 1; i < environment.size(); ++i)
        h += "<li>" + escape(environment[i].substr(environment[i].find_first_not_of(' '))) + "</li>\n";
      h += "</ul>\n</div>\n";
    }
    h += kernel_time_html(table);
    h += "</section>\n";

    parts.forest = {forest_id, forest_spec(forest_rows, legend.min_change_pct, legend.sign), alt};
    json profiles = json::array({table.base_profile});
    for (const std::string& test : table.test_profiles) profiles.push_back(test);
    parts.data = {{"columns", columns}, {"profiles", std::move(profiles)}, {"rows", std::move(rows_data)}};
    return parts;
  }

  // Opening a row's <details> adds a row under it with the samples plot
  // (embedded then, once) and its text alternative; closing hides it.
  static constexpr const char* kSamplesScript = assets::html::samples_js;
};

}  // namespace

std::unique_ptr<Renderer> make_html_renderer() { return std::make_unique<HtmlRenderer>(); }

}  // namespace kbench::report
