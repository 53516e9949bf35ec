// The seed report's layout (tests/golden/grid-seed-aws-m7g.txt).
#include <cmath>
#include <fmt/format.h>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::report {

using analysis::ColumnSummary;
using analysis::Legend;
using analysis::Row;
using analysis::Table;

namespace {

std::string geomean_note(const Table& table) {
  std::vector<std::string> counts;
  for (const ColumnSummary& column : table.columns) counts.push_back(std::to_string(column.geomean_rows));
  return fmt::format("geomean: the geometric mean of the test/base ratios of {} rows with data on both sides, "
                     "printed as the rows print a change.",
                     fmt::join(counts, " / "));
}

// Benchmarks without data in any column still take a row: an empty cell says
// "not measured", which a missing row would hide.
class GridRenderer : public PerTableRenderer {
 private:
  void render_table(const Table& table, const Legend& legend, std::ostream& out) const override {
    std::vector<TextColumn> columns{{"Benchmark", Align::Left},
                                    {"Result Class", Align::Left},
                                    {table.base_profile + " (base)", Align::Right}};
    for (const std::string& test : table.test_profiles) columns.push_back({test, Align::Right});
    TextTable text(std::move(columns));
    Footnotes notes;
    const RowNames names(table);
    std::string previous;
    for (const Row& row : table.rows) {
      const std::string name = names(row);
      const bool new_group = &row == &table.rows.front() || previous != name;
      std::vector<std::string> cells{new_group ? name : "", row.result_class.label(),
                                     row.base_present ? format_number(row.base.mean) : ""};
      for (std::size_t c = 0; c < table.test_profiles.size(); ++c)
        cells.push_back(c < row.cells.size() ? change_cell(row, row.cells[c], legend.sign, notes) : "");
      text.add_row(std::move(cells), new_group);
      previous = name;
    }
    if (!table.columns.empty()) {
      std::vector<std::string> cells{"geomean", fmt::format("all rows ({})", geomean_sense(legend.sign)), ""};
      for (std::size_t c = 0; c < table.test_profiles.size(); ++c)
        cells.push_back(c < table.columns.size() ? format_percent(geomean_change(table.columns[c], legend.sign)) : "");
      text.add_row(std::move(cells), true);
    }
    out << table_heading(table) << '\n';
    text.render_grid(out);
    for (const std::string& line : legend_lines(legend, false, &table)) out << line << '\n';
    if (!table.columns.empty()) out << geomean_note(table) << '\n';
    for (const std::string& line : notes.lines()) out << line << '\n';
    for (const std::string& line : environment_lines(table)) out << line << '\n';
    for (const std::string& line : kernel_time_lines(table)) out << line << '\n';
    out << '\n';
    for (const std::string& line : summary_lines(table, legend)) out << line << '\n';
  }
};

}  // namespace

std::unique_ptr<Renderer> make_grid_renderer() { return std::make_unique<GridRenderer>(); }

}  // namespace kbench::report
