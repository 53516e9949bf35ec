// kbench compare: the table for the mailing list (app/compare.h computes it).
#include <iostream>
#include <memory>

#include "analysis/test_method.h"
#include "app/compare.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/format_table.h"

namespace kbench::cli {

namespace {

// The whole table first, then the gate: a CI log shows what tripped it.
void compare_command(const app::CompareArguments& arguments) {
  const app::CompareRequest request = app::parse_compare_request(arguments);
  std::ostream& notes = request.format->machine_readable ? std::cerr : std::cout;
  const app::ComparisonMarks marks = app::write_comparison(request, std::cout, notes);
  pending_exit_status() = app::gate_status(request.fail_on, marks);
}

}  // namespace

void add_compare_command(CLI::App& app, std::vector<std::string> command_line) {
  auto options = std::make_shared<app::CompareArguments>();
  if (!command_line.empty()) {
    command_line.insert(command_line.begin(), "kbench");
    options->command = app::shell_command(command_line);
  }
  CLI::App* cmd = app.add_subcommand("compare", "Compare swprofiles: base value, change %, (I)/(R) marks");
  cmd->add_option("profiles", options->profiles, "BASE TEST [TEST ...] (or --scenario instead)");
  cmd->add_option("--format", options->format,
                  "output format: " + report::format_choices(report::View::Comparison) + " (default: " +
                      options->format + ")");
  cmd->add_option("--method", options->method,
                  "significance test: " + analysis::method_names() + " (default: welch)");
  cmd->add_option("--fdr", options->fdr,
                  "Benjamini-Hochberg false discovery rate over all rows (default 0.05), or off");
  std::string raw_only;
  for (const report::Format& format : report::formats())
    if (format.raw_change_only) raw_only += (raw_only.empty() ? "" : " and ") + std::string(format.name);
  cmd->add_option("--sign", options->sign,
                  "better: positive change means better (default; " + raw_only + " print the raw change); raw");
  cmd->add_option("--min-change", options->min_change, "smallest change in percent worth a mark, 0.01 to 1000 (default 2); a CI inside +-this reads unchanged; 0: no margin and no unchanged verdict");
  cmd->add_option("--sessions", options->sessions,
                  "sessions (default): one log mean per session, with the SUT's noise model; pooled: every repeat "
                  "as independent (marks noise where sessions differ)");
  cmd->add_option("--looks", options->looks,
                  "the data was looked at this many times (plan exec --until-decided --max-looks): each look at "
                  "level/looks (default 1)");
  add_sample_filter_options(*cmd, options->filter);
  add_glob_option(*cmd, "--class", options->filter.class_glob,
                  "only SUT classes matching this glob (a session's class: its fingerprint's sut_class)");
  cmd->add_flag("--per-sut", options->per_sut,
                "one table per SUT (machine), as before classes; default: one table per SUT class, pooling its "
                "machines with the machine as a level of variation");
  cmd->add_option("--fail-on", options->fail_on,
                  "CI gate: after printing the whole table, exit 3 when a row is marked (R) (regression) or "
                  "(R) or (I) (change)");
  cmd->add_option("--scenario", options->scenarios,
                  "LABEL=BASE:TEST (repeatable, --format delta, instead of BASE TEST): one line per scenario, "
                  "old = BASE, new = TEST, each tested as compare BASE TEST would; one table per benchmark row");
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Examples:\n"
      "  kbench compare base patched\n"
      "  kbench compare base patched-v1 patched-v2 --format markdown\n"
      "  kbench compare base patched --format html > report.html  # one self-contained page with plots\n"
      "  kbench compare base patched --method mwu --fdr off --benchmark 'perf/*'\n"
      "  kbench compare base patched --sessions pooled --resultclass 'p99*' --min-change 1\n"
      "  kbench compare base patched --class 'aws-m7g*'       # one class's table\n"
      "  kbench compare base patched --per-sut --sut 'lab-*'  # one table per machine\n"
      "  kbench compare --format delta --benchmark ctxsw/pipe-threads --resultclass 'switch (ticks)' \\\n"
      "      --scenario gcc=gcc:gcc-spectre_v2 --scenario clang=clang:clang-spectre_v2\n"
      "\n"
      "Exit status: 0 ok (also with marks, without --fail-on); 1 a failure (the store could not be read, output\n"
      "not written); 2 bad input (one line, nothing printed); 3 --fail-on's gate tripped (the table was printed\n"
      "in full, as without the option). In a CI job:\n"
      "  status=0; kbench compare base candidate --format markdown --fail-on regression > report.md || status=$?\n"
      "  if [ $status = 3 ]; then echo 'performance regression: see report.md'; fi; exit $status");
  cmd->callback([options, cmd] {
    // `--fail-on ''` is a typo or an empty CI variable, not "never": refused like any other word.
    if (cmd->count("--fail-on") > 0 && options->fail_on.empty()) {
      throw InputError("--fail-on '': expected regression or change (leave the option out for no gate)");
    }
    compare_command(*options);
  });
}

}  // namespace kbench::cli
