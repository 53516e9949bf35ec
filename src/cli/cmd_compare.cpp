// kbench compare: the table for the mailing list.
#include <iostream>
#include <sstream>

#include "analysis/compare.h"
#include "analysis/environment.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session_report.h"
#include "common/errors.h"
#include "report/model.h"

namespace kbench::cli {

namespace {

struct CompareCommandOptions {
  std::vector<std::string> profiles;  // base first
  std::string format = "grid";
  std::string method = "welch";  // parsed once, in compare_command
  std::string fdr = "0.05";
  std::string sign = "better";
  std::string min_change = "2";
  store::SampleQuery filter;  // --sut/--benchmark/--resultclass
  std::string sessions = "sessions";
  std::string store_url;
};

void compare_command(const CompareCommandOptions& options) {
  if (options.profiles.size() < 2) {
    throw InputError("compare: expected a base swprofile and at least one test swprofile");
  }
  analysis::CompareOptions compare;
  compare.base = options.profiles.front();
  compare.tests.assign(options.profiles.begin() + 1, options.profiles.end());
  compare.method = analysis::parse_test_method(options.method);
  compare.fdr = parse_fdr(options.fdr);
  if (options.sign != "better" && options.sign != "raw") {
    throw InputError("--sign " + options.sign + ": expected better or raw");
  }
  compare.sign = options.sign == "raw" ? report::SignConvention::Raw : report::SignConvention::Better;
  compare.min_change_pct = parse_decimal("--min-change", options.min_change, 0);
  compare.sessions = analysis::parse_session_mode(options.sessions);
  const auto renderer = report::make_renderer(options.format);

  const OpenedStore opened = open_existing_store(options.store_url);
  require_swprofiles(opened, options.profiles, KnownProfiles::List);
  auto& store = opened.store;
  store::SampleQuery query = options.filter;
  // Every profile, not just the compared ones: the others are the SUT's
  // noise model (the prior of the session test).
  query.settled_only = true;
  report::Report result = analysis::build_comparison(store->samples(query), compare);
  if (result.tables.empty()) {
    // Often because the only sessions are incomplete: say so on the same line.
    std::ostringstream incomplete;
    print_incomplete_sessions(*store, options.profiles, incomplete);
    std::string why = incomplete.str();
    if (!why.empty()) why = "; " + why.substr(0, why.find('\n'));
    throw InputError("compare: no rows for swprofile '" + compare.base +
                     "' match --sut/--benchmark/--resultclass" + why);
  }
  analysis::add_environment_differences(result, *store);
  renderer->render(result, std::cout);

  // A benchmark that failed has no row, or fewer samples: say so under the
  // table (on stderr for the machine-readable formats, whose stdout is data).
  const bool machine_format = options.format == "csv" || options.format == "json";
  std::ostream& notes = machine_format ? std::cerr : std::cout;
  for (const auto& failed : store->list_outcomes(options.profiles, store::OutcomeStatus::Failed)) {
    notes << "failed: " << failed.benchmark << " (" << failed.swprofile << ", session " << failed.session_number
          << "): " << failed.outcome.reason << "\n";
  }
  print_incomplete_sessions(*store, options.profiles, notes);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareCommandOptions>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare swprofiles: base value, change %, (I)/(R) marks");
  cmd->add_option("profiles", options->profiles, "BASE TEST [TEST ...]")->required();
  std::string formats;
  for (const auto& name : report::renderer_names()) formats += (formats.empty() ? "" : "|") + name;
  cmd->add_option("--format", options->format, "output format: " + formats);
  cmd->add_option("--method", options->method,
                  "significance test: " + analysis::method_names() + " (default: welch)");
  cmd->add_option("--fdr", options->fdr,
                  "Benjamini-Hochberg false discovery rate over all rows (default 0.05), or off");
  cmd->add_option("--sign", options->sign, "better: positive change means better (default); raw");
  cmd->add_option("--min-change", options->min_change, "smallest change in percent worth a mark (default 2); a CI inside +-this reads unchanged; 0: no unchanged verdict");
  cmd->add_option("--sessions", options->sessions,
                  "sessions (default): one log mean per session, with the SUT's noise model; pooled: every repeat "
                  "as independent (marks noise where sessions differ)");
  add_sample_filter_options(*cmd, options->filter);
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Examples:\n"
      "  kbench compare base patched\n"
      "  kbench compare base patched-v1 patched-v2 --format markdown\n"
      "  kbench compare base patched --method mwu --fdr off --benchmark 'perf/*'\n"
      "  kbench compare base patched --sessions pooled --resultclass 'p99*' --min-change 1");
  cmd->callback([options] { compare_command(*options); });
}

}  // namespace kbench::cli
