#include "report/model.h"

#include <cmath>
#include <fmt/format.h>

#include "common/errors.h"
#include "report/format.h"
#include "report/renderers.h"

namespace kbench::report {

double signed_change(const Row& row, const Cell& cell, SignConvention sign) {
  const double raw = raw_change(row, cell);
  if (sign == SignConvention::Raw || row.result_class.better == Better::Higher) return raw;
  return -raw;  // lower is better: a smaller value is a positive change
}

double raw_change(const Row& row, const Cell& cell) {
  if (!row.base_present || !cell.present) return stats::kNaN;
  return cell.change_pct;
}

namespace {
struct Entry {
  const char* name;
  std::unique_ptr<Renderer> (*make)();
};
constexpr Entry kRenderers[] = {
    {"grid", make_grid_renderer}, {"markdown", make_markdown_renderer}, {"delta", make_delta_renderer},
    {"mail", make_mail_renderer}, {"csv", make_csv_renderer},           {"json", make_json_renderer},
};
}  // namespace

std::vector<std::string> renderer_names() {
  std::vector<std::string> names;
  for (const Entry& entry : kRenderers) names.emplace_back(entry.name);
  return names;
}

std::unique_ptr<Renderer> make_renderer(const std::string& format) {
  for (const Entry& entry : kRenderers)
    if (format == entry.name) return entry.make();
  throw InputError(fmt::format("--format: unknown report format '{}'; expected one of: {}", format,
                               fmt::join(renderer_names(), ", ")));
}

std::string escape_pipes(const std::string& text) {
  std::string result;
  for (char c : text) {
    if (c == '|') result += '\\';
    result += c;
  }
  return result;
}

void PerTableRenderer::render(const Report& report, std::ostream& out) const {
  bool first = true;
  for (const Table& table : report.tables) {
    if (!first) out << '\n';
    first = false;
    render_table(table, report.legend, out);
  }
}

std::string change_cell(const Row& row, const Cell& cell, SignConvention sign, Footnotes& notes) {
  const double change = signed_change(row, cell, sign);
  // No change to show (e.g. a zero base): the reason, if any, still shows.
  if (std::isnan(change)) {
    const std::string markers = notes.markers(cell);
    return markers.substr(markers.empty() ? 0 : 1);
  }
  return std::string(mark_prefix(cell.verdict)) + format_percent(change) + notes.markers(cell);
}

void write_raw_change_notes(const Table& table, const Legend& legend, const Footnotes& notes,
                            const std::vector<std::string>& layout_lines, std::ostream& out) {
  for (const std::string& line : legend_lines(legend, true)) out << line << '\n';
  for (const std::string& line : layout_lines) out << line << '\n';
  for (const std::string& line : geomean_lines(table, SignConvention::Raw)) out << line << '\n';
  for (const std::string& line : notes.lines()) out << line << '\n';
  out << '\n';
  for (const std::string& line : summary_lines(table)) out << line << '\n';
}

std::string sut_heading(const std::string& sut, SutScope scope) {
  return (scope == SutScope::SutClass ? "Results for SUT Class " : "Results for SUT ") + sut;
}

std::string table_heading(const Table& table) { return sut_heading(table.sut, table.sut_scope) + ":"; }

std::string Footnotes::marker(const std::string& text) {
  auto [it, inserted] = numbers_.emplace(text, static_cast<int>(texts_.size()) + 1);
  if (inserted) texts_.push_back(text);
  return fmt::format("[{}]", it->second);
}

std::string Footnotes::markers(const Cell& cell) {
  if (!cell.present) return "";
  std::string result;
  if (!cell.note.empty()) result += marker(cell.note);
  if (cell.session_noisy) result += marker(kSessionNoisyNote);
  return result.empty() ? result : " " + result;
}

std::vector<std::string> Footnotes::lines() const {
  std::vector<std::string> result;
  for (std::size_t i = 0; i < texts_.size(); ++i) result.push_back(fmt::format("[{}] {}", i + 1, texts_[i]));
  return result;
}

std::vector<std::string> legend_lines(const Legend& legend, bool change_is_raw) {
  std::vector<std::string> lines;
  std::string method = "Method: " + std::string(analysis::method_title(legend.method));
  if (!analysis::gives_p_values(legend.method)) {
    method += fmt::format(", {} rows compared", legend.rows_tested);
  } else if (legend.fdr) {
    method += fmt::format(", Benjamini-Hochberg FDR q={} over {} rows tested", format_exact(*legend.fdr),
                          legend.rows_tested);
  } else {
    method += fmt::format(", FDR off, alpha={} per row, {} rows tested", format_exact(legend.alpha),
                          legend.rows_tested);
  }
  lines.push_back(method + ".");
  if (legend.sessions == "pooled") {
    lines.push_back("Sessions: every repeat tested as an independent sample (--sessions pooled).");
  } else if (legend.sessions == "means" || legend.cells_on_session_means > 0) {
    lines.push_back(fmt::format("Sessions: {} tested on session means, {} (--sessions {}).",
                                count_noun(legend.cells_on_session_means, "cell", "cells"),
                                legend.sessions == "means" ? "wherever both sides have 2 or more sessions"
                                                           : "where most variance lies between sessions",
                                legend.sessions));
  }
  if (change_is_raw || legend.sign == SignConvention::Raw)
    lines.push_back("Change: (test - base) / base; raw: positive = larger value.");
  else
    lines.push_back("Change: (test - base) / base; positive = better (sign flipped where lower is better).");
  std::string marks = "(I) significant improvement, (R) significant regression";
  if (legend.min_change_pct > 0)
    marks += fmt::format("; changes below {} unmarked", format_percent(legend.min_change_pct));
  lines.push_back(marks + ".");
  return lines;
}

std::vector<std::string> summary_lines(const Table& table) {
  std::vector<std::string> lines{table.sut + ":"};
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const ColumnSummary& column = table.columns[c];
    const std::string improvements = count_noun(column.improvements, "improvement", "improvements");
    const std::string regressions = count_noun(column.regressions, "regression", "regressions");
    if (table.columns.size() == 1) {
      lines.push_back(improvements);
      lines.push_back(regressions);
    } else {
      const std::string name = c < table.test_profiles.size() ? table.test_profiles[c] : "?";
      lines.push_back(name + ": " + improvements + ", " + regressions);
    }
  }
  return lines;
}

std::vector<std::string> geomean_lines(const Table& table, SignConvention sign) {
  std::vector<std::string> lines;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const ColumnSummary& column = table.columns[c];
    const double change = geomean_change(column, sign);
    const std::string value = std::isnan(change) ? "n/a" : format_percent(change);
    const std::string name =
        table.columns.size() == 1 || c >= table.test_profiles.size() ? "" : " " + table.test_profiles[c];
    lines.push_back(fmt::format("geomean{} ({}): {} over {} rows", name, geomean_sense(sign), value, column.geomean_rows));
  }
  return lines;
}

}  // namespace kbench::report
