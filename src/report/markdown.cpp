// The seed patch's layout (tests/golden/seed-markdown-el0-svc.txt):
// raw values and the raw change with an arrow for the direction of the value.
#include <cmath>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"

namespace kbench::report {

using analysis::Cell;
using analysis::Legend;
using analysis::Row;
using analysis::Table;

namespace {

// "↑1.1%" / "↓1.1%": the arrow is the direction of the value, not better or
// worse; one decimal as in the seed. A change that rounds to zero gets no arrow.
std::string arrow_change(const Row&, const Cell&, double raw_percent) {
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
    Footnotes notes;
    out << table_heading(table) << "\n\n";
    write_pipe_table(table, std::move(columns), arrow_change, true, notes, out);
    out << '\n';
    write_raw_change_notes(table, legend, notes, {}, out);
  }
};

}  // namespace

std::unique_ptr<Renderer> make_markdown_renderer() { return std::make_unique<MarkdownRenderer>(); }

}  // namespace kbench::report
