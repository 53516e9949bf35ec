// The seed patch's layout (tests/golden/seed-markdown-el0-svc.txt):
// raw values and the raw change with an arrow for the direction of the value.
#include <cmath>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::report {

namespace {

// "↑1.1%" / "↓1.1%": the arrow is the direction of the value, not better or
// worse; one decimal as in the seed. A change that rounds to zero gets no arrow.
std::string arrow_change(double raw_percent) {
  const std::string text = format_percent(std::fabs(raw_percent), 1);
  if (text == "0.0%") return text;
  return (raw_percent > 0 ? "↑" : "↓") + text;
}

class MarkdownRenderer : public PerTableRenderer {
 private:
  void render_table(const Table& table, const Legend& legend, std::ostream& out) const override {
    std::vector<TextColumn> columns{{"Metric"}, {table.base_profile}};
    for (const std::string& test : table.test_profiles) {
      columns.push_back({test});
      columns.push_back({"Change"});
    }
    TextTable text(std::move(columns));
    Footnotes notes;
    const RowNames names(table);
    for (const Row& row : table.rows) {
      std::vector<std::string> cells{escape_pipes(names(row) + " " + row.result_class.label()),
                                     row.base_present ? format_number(row.base.mean) : ""};
      for (std::size_t c = 0; c < table.test_profiles.size(); ++c) {
        if (c >= row.cells.size() || !row.cells[c].present) {
          cells.insert(cells.end(), {"", ""});
          continue;
        }
        const Cell& cell = row.cells[c];
        cells.push_back(format_number(cell.test.mean));
        const double raw = raw_change(row, cell);
        const std::string markers = notes.markers(cell);
        cells.push_back(std::isnan(raw) ? markers.substr(markers.empty() ? 0 : 1)
                                        : arrow_change(raw) + std::string(mark_suffix(cell.verdict)) + markers);
      }
      text.add_row(std::move(cells));
    }
    out << table_heading(table) << "\n\n";
    text.render_markdown(out);
    out << '\n';
    write_raw_change_notes(table, legend, notes, {}, out);
  }
};

}  // namespace

std::unique_ptr<Renderer> make_markdown_renderer() { return std::make_unique<MarkdownRenderer>(); }

}  // namespace kbench::report
