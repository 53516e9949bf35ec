// The layout of tests/golden/seed-delta-context-switch.txt:
// `| scenario | old | new | delta |` with delta "1.54 (-11.1%)" = the absolute
// difference and the raw change in percent, one decimal as in the seed.
// render_scenario_delta prints the seed's own shape: one line per scenario
// (`kbench compare --scenario LABEL=BASE:TEST`), each its own old and new.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::report {

using analysis::Cell;
using analysis::Legend;
using analysis::Row;
using analysis::Table;

namespace {

std::string delta_change(const Row& row, const Cell& cell, double raw_percent) {
  std::string percent = format_percent(raw_percent, 1);
  if (raw_percent > 0 && percent != "0.0%") percent = "+" + percent;
  return fmt::format("{} ({})", format_number(std::fabs(cell.test.mean - row.base.mean)), percent);
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
    Footnotes notes;
    out << table_heading(table) << '\n';
    out << "old: " << table.base_profile << '\n';
    for (std::size_t c = 0; c < table.test_profiles.size(); ++c)
      out << (several ? fmt::format("new{}: ", c + 1) : "new: ") << table.test_profiles[c] << '\n';
    write_pipe_table(table, std::move(columns), delta_change, false, notes, out);
    write_raw_change_notes(table, legend, notes, {"delta: |new - old| (raw change in percent)."}, out);
  }
};

// The scenarios' rows that share one SUT heading: one table per benchmark
// row, in the order the rows first appear.
struct ScenarioGroup {
  struct Entry {
    std::size_t scenario;
    const Table* table;
    const Row* row;
  };
  std::string heading;
  std::vector<std::string> keys;               // row identities, first seen first
  std::map<std::string, std::string> captions;  // key -> "ctxsw/pipe-threads switch (ticks)"
  std::map<std::string, std::vector<Entry>> entries;
  std::vector<std::pair<std::size_t, const Table*>> tables;  // scenario index, its table here
};

std::vector<ScenarioGroup> group_scenarios(const std::vector<Scenario>& scenarios) {
  std::vector<ScenarioGroup> groups;
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    for (const Table& table : scenarios[s].report.tables) {
      const std::string heading = table_heading(table);
      auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.heading == heading; });
      if (group == groups.end()) {
        groups.push_back({});
        group = groups.end() - 1;
        group->heading = heading;
      }
      group->tables.emplace_back(s, &table);
      const RowNames names(table);
      for (const Row& row : table.rows) {
        // Parameters are part of a row's identity (analysis/report_model.h): the same benchmark with others is another table.
        const std::string key = row.benchmark + '\n' + params_text(row.params) + '\n' + row.result_class.label();
        if (group->entries.find(key) == group->entries.end()) {
          group->keys.push_back(key);
          group->captions[key] = names(row) + " " + row.result_class.label();
        }
        group->entries[key].push_back({s, &table, &row});
      }
    }
  }
  return groups;
}

void render_scenario_group(const std::vector<Scenario>& scenarios, const ScenarioGroup& group, std::ostream& out) {
  out << group.heading << '\n';
  Footnotes notes;
  // The rows of every table, for the legend's session and machine counts.
  Table tested;
  tested.test_profiles = {"new"};
  for (std::size_t k = 0; k < group.keys.size(); ++k) {
    const std::string& key = group.keys[k];
    if (k > 0) out << '\n';
    out << group.captions.at(key) << ":\n";
    TextTable text({{"test scenario"}, {"old"}, {"new"}, {"delta"}});
    for (const auto& [s, table] : group.tables) {
      const auto& entries = group.entries.at(key);
      // The index copied into the lambda: clang before 16 cannot capture a structured binding.
      const auto entry = std::find_if(entries.begin(), entries.end(),
                                      [scenario = s](const auto& e) { return e.scenario == scenario; });
      std::vector<std::string> cells{escape_pipes(scenarios[s].label), "", "", ""};
      if (entry != entries.end()) {
        const Row& row = *entry->row;
        const bool present = !row.cells.empty() && row.cells[0].present;
        if (row.base_present) cells[1] = format_number(row.base.mean);
        if (present) {
          cells[2] = format_number(row.cells[0].test.mean);
          cells[3] = raw_change_cell(row, row.cells[0], delta_change, notes);
        }
        Row copy = row;
        copy.cells.resize(1);
        tested.rows.push_back(std::move(copy));
      }
      text.add_row(std::move(cells));
    }
    text.render_pipes(out);
  }
  std::vector<int> rows_tested;
  for (const auto& [s, table] : group.tables) {
    out << fmt::format("{}: old {}, new {}\n", scenarios[s].label, table->base_profile,
                       table->test_profiles.empty() ? "" : table->test_profiles[0]);
    rows_tested.push_back(scenarios[s].report.legend.rows_tested);
  }
  const Legend& legend = scenarios[group.tables.front().first].report.legend;
  for (const std::string& line : legend_lines(legend, true, &tested)) out << line << '\n';
  out << "delta: |new - old| (raw change in percent).\n";
  const bool same_rows = std::all_of(rows_tested.begin(), rows_tested.end(), [&](int n) { return n == rows_tested[0]; });
  out << "Marks: each scenario is tested on its own, as `kbench compare OLD NEW` tests it"
      << (same_rows ? "" : " (rows tested differ between scenarios; the method line names the first's)") << ".\n";
  for (const std::string& line : notes.lines()) out << line << '\n';
  // environment_lines' heading once, each difference named by its scenario.
  Table differences;
  for (const auto& [s, table] : group.tables)
    for (const std::string& difference : table->environment_differences)
      differences.environment_differences.push_back(scenarios[s].label + ": " + difference);
  for (const std::string& line : environment_lines(differences)) out << line << '\n';
}

}  // namespace

std::unique_ptr<Renderer> make_delta_renderer() { return std::make_unique<DeltaRenderer>(); }

void render_scenario_delta(const std::vector<Scenario>& scenarios, std::ostream& out) {
  bool first = true;
  for (const ScenarioGroup& group : group_scenarios(scenarios)) {
    if (!first) out << '\n';
    first = false;
    render_scenario_group(scenarios, group, out);
  }
}

}  // namespace kbench::report
