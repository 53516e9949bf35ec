// The layout of tests/golden/seed-delta-context-switch.txt:
// `| scenario | old | new | delta |` with delta "1.54 (-11.1%)" = the absolute
// difference and the raw change in percent, one decimal as in the seed.
#include <cmath>
#include <fmt/format.h>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::report {

namespace {

std::string delta_cell(const Row& row, const Cell& cell, Footnotes& notes) {
  const double raw = raw_change(row, cell);
  if (std::isnan(raw)) {
    const std::string markers = notes.markers(cell);
    return markers.substr(markers.empty() ? 0 : 1);
  }
  std::string percent = format_percent(raw, 1);
  if (raw > 0 && percent != "0.0%") percent = "+" + percent;
  return fmt::format("{} ({}){}{}", format_number(std::fabs(cell.test.mean - row.base.mean)), percent,
                     mark_suffix(cell.verdict), notes.markers(cell));
}

class DeltaRenderer : public PerTableRenderer {
 private:
  void render_table(const Table& table, const Legend& legend, std::ostream& out) const override {
    const bool several = table.test_profiles.size() > 1;
    std::vector<TextColumn> columns{{"scenario"}, {"old"}};
    for (std::size_t c = 0; c < table.test_profiles.size(); ++c) {
      columns.push_back({several ? fmt::format("new{}", c + 1) : "new"});
      columns.push_back({several ? fmt::format("delta{}", c + 1) : "delta"});
    }
    TextTable text(std::move(columns));
    Footnotes notes;
    const RowNames names(table);
    for (const Row& row : table.rows) {
      std::vector<std::string> cells{escape_pipes(names(row) + " " + row.result_class.label()),
                                     row.base_present ? format_number(row.base.mean) : ""};
      for (std::size_t c = 0; c < table.test_profiles.size(); ++c) {
        const bool present = c < row.cells.size() && row.cells[c].present;
        cells.push_back(present ? format_number(row.cells[c].test.mean) : "");
        cells.push_back(present ? delta_cell(row, row.cells[c], notes) : "");
      }
      text.add_row(std::move(cells));
    }
    out << table_heading(table) << '\n';
    out << "old: " << table.base_profile << '\n';
    for (std::size_t c = 0; c < table.test_profiles.size(); ++c)
      out << (several ? fmt::format("new{}: ", c + 1) : "new: ") << table.test_profiles[c] << '\n';
    text.render_pipes(out);
    write_raw_change_notes(table, legend, notes, {"delta: |new - old| (raw change in percent)."}, out);
  }
};

}  // namespace

std::unique_ptr<Renderer> make_delta_renderer() { return std::make_unique<DeltaRenderer>(); }

}  // namespace kbench::report
