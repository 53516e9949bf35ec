// The table markdown and delta share; they differ in how a change reads and
// in the separator row.
#include <cmath>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"

namespace kbench::report {

using analysis::Cell;
using analysis::raw_change;
using analysis::Row;
using analysis::Table;

std::string raw_change_cell(const Row& row, const Cell& cell, RawChangeText text, Footnotes& notes) {
  const double raw = raw_change(row, cell);
  const std::string markers = notes.markers(cell);
  if (std::isnan(raw)) return markers.substr(markers.empty() ? 0 : 1);
  return text(row, cell, raw) + std::string(mark_suffix(cell.verdict)) + markers;
}

void write_pipe_table(const Table& table, std::vector<TextColumn> columns, RawChangeText text, bool separator,
                      Footnotes& notes, std::ostream& out) {
  TextTable pipes(std::move(columns));
  const RowNames names(table);
  for (const Row& row : table.rows) {
    std::vector<std::string> cells{escape_pipes(names(row) + " " + row.result_class.label()),
                                   row.base_present ? format_number(row.base.mean) : ""};
    for (std::size_t c = 0; c < table.test_profiles.size(); ++c) {
      const bool present = c < row.cells.size() && row.cells[c].present;
      cells.push_back(present ? format_number(row.cells[c].test.mean) : "");
      cells.push_back(present ? raw_change_cell(row, row.cells[c], text, notes) : "");
    }
    pipes.add_row(std::move(cells));
  }
  if (separator) {
    pipes.render_markdown(out);
  } else {
    pipes.render_pipes(out);
  }
}

}  // namespace kbench::report
