// kbench trend: one metric across many kernels, with change points
// (app/trend.h draws it).
#include <iostream>
#include <memory>

#include "app/trend.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "report/format_table.h"

namespace kbench::cli {

void add_trend_command(CLI::App& app) {
  auto request = std::make_shared<app::TrendArguments>();
  CLI::App* cmd = app.add_subcommand("trend", "One metric across many swprofiles (kernels), with change points");
  cmd->add_option("--swprofile", request->swprofile_glob, "the swprofiles of the trend (a glob)")->required();
  add_sample_filter_options(*cmd, request->filter);
  cmd->add_option("--order", request->order,
                  "version: by the kernel version in the swprofile names (6.12.0-rc3 < 6.12 < v6.13; names that are "
                  "not versions fall back to store order, and the output says so); store: by first session "
                  "(default: version)");
  cmd->add_option("--format", request->format,
                  "output format: " + report::format_choices(report::View::Trend) + " (default: " + request->format +
                      ")");
  cmd->add_option("--sign", request->sign, "better: positive change means better (default); raw");
  cmd->add_option("--min-change", request->min_change,
                  "smallest step in percent worth a mark, 0 or 0.01 to 1000 (default 2), as in compare");
  cmd->add_option("--min-segment", request->min_segment,
                  "fewest swprofiles in a segment between change points (default 1: the newest kernel alone can be a step)");
  add_store_option(*cmd, request->store_url);
  cmd->footer(
      "Examples:\n"
      "  kbench trend --swprofile '6.1[23]*' --benchmark syscall/getpid --resultclass 'mean*'\n"
      "  kbench trend --swprofile 'v6.*' --sut lab-1 --format html > trend.html\n"
      "  kbench trend --swprofile 'nightly-*' --order store --min-segment 3");
  cmd->callback([request] { app::write_trend(app::parse_trend_request(*request), std::cout); });
}

}  // namespace kbench::cli
