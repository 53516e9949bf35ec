// kbench show: the single-profile table of every stored session of a profile.
#include <cmath>
#include <iostream>

#include "analysis/compare.h"
#include "app/session_report.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/format.h"
#include "report/model.h"
#include "report/text_table.h"

namespace kbench::cli {

namespace {

struct ShowOptions {
  std::string profile;
  bool relative = false;
  bool all_columns = false;
  std::string store_url;
};

// (value - mean) / |mean| in percent with an explicit sign: "-3.21%", "+1.05%".
std::string relative_cell(double value, double mean) {
  if (std::isnan(value) || std::isnan(mean) || mean == 0) return "";
  const double percent = (value - mean) / std::abs(mean) * 100.0;
  const std::string text = report::format_percent(percent);
  return text.front() == '-' || text == "0.00%" ? text : "+" + text;
}

// The single-profile table with min, the CI bounds and max as percent of the
// mean: the spread of rows with different units side by side.
void render_relative(const analysis::ProfileTable& table, std::ostream& out) {
  report::TextTable text({{"Benchmark", report::Align::Left},
                          {"Result Class", report::Align::Left},
                          {"min", report::Align::Right},
                          {"ci95min", report::Align::Right},
                          {"mean", report::Align::Right},
                          {"ci95max", report::Align::Right},
                          {"max", report::Align::Right},
                          {"cv", report::Align::Right},
                          {"count", report::Align::Right}});
  const report::RowNames names(table);
  std::string previous;
  for (const analysis::ProfileRow& row : table.rows) {
    const std::string name = names(row);
    const bool new_group = &row == &table.rows.front() || previous != name;
    const stats::Summary& s = row.summary;
    text.add_row({new_group ? name : "", row.result_class.label(), relative_cell(s.min, s.mean),
                  relative_cell(s.ci95_low, s.mean), report::format_number(s.mean),
                  relative_cell(s.ci95_high, s.mean), relative_cell(s.max, s.mean),
                  std::isnan(s.cv) ? "" : report::format_percent(s.cv * 100), std::to_string(s.count)},
                 new_group);
    previous = name;
  }
  out << report::sut_heading(table.sut, table.sut_scope) << ", swprofile " << table.swprofile
      << " (min, ci95min, ci95max, max in percent of the mean):\n";
  if (!text.empty()) text.render_grid(out);
  for (const std::string& entry : table.skipped) out << "skipped: " << entry << '\n';
  for (const std::string& entry : table.failed) out << "failed: " << entry << '\n';
}

void show_command(const ShowOptions& options) {
  const OpenedStore opened = open_existing_store(options.store_url);
  require_swprofiles(opened, {options.profile});
  auto& store = opened.store;
  store::SampleQuery query;
  query.swprofiles = {options.profile};
  query.settled_only = true;
  auto tables = analysis::build_profile_tables(store->samples(query), options.profile);
  for (const auto status : {store::OutcomeStatus::Skipped, store::OutcomeStatus::Failed}) {
    for (const auto& listing : store->list_outcomes({options.profile}, status)) {
      if (tables.empty()) tables.push_back({listing.sut, options.profile, {}, {}, {}});
      auto& into = status == store::OutcomeStatus::Skipped ? tables.front().skipped : tables.front().failed;
      into.push_back(listing.benchmark + ": " + listing.outcome.reason + " (session " +
                     std::to_string(listing.session_number) + ")");
    }
  }
  for (const auto& table : tables) {
    if (options.relative) render_relative(table, std::cout);
    else report::render_profile_grid(table, std::cout, {options.all_columns});
  }
  app::print_incomplete_sessions(*store, {options.profile}, std::cout);
}

}  // namespace

void add_show_command(CLI::App& app) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand("show", "Show every stored result of one swprofile");
  cmd->add_option("profile", options->profile, "swprofile name")->required();
  cmd->add_flag("--relative", options->relative,
                "min, ci95min, ci95max and max as percent of the mean (mean stays absolute)");
  cmd->add_flag("--all-columns", options->all_columns, "also min, ci95min, ci95max and max (a wider table)");
  add_store_option(*cmd, options->store_url);
  cmd->footer("Examples:\n  kbench show base\n  kbench show base --all-columns\n  kbench show base --relative");
  cmd->callback([options] { show_command(*options); });
}

}  // namespace kbench::cli
