// kbench noise: the A/A view. What does "no change" mean on this machine?
#include <iostream>

#include "analysis/noise.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/noise_report.h"

namespace kbench::cli {

namespace {

struct NoiseCommandOptions {
  std::string profile;
  std::string format = "grid";
  std::string method = "welch";
  std::string fdr = "0.05";
  std::string sessions = "sessions";
  store::SampleQuery filter;  // --sut/--benchmark/--resultclass
  std::string store_url;
};

void noise_command(const NoiseCommandOptions& options) {
  const report::NoiseFormat format = report::parse_noise_format(options.format);
  analysis::NoiseOptions noise;
  noise.profile = options.profile;
  noise.compare.method = analysis::parse_test_method(options.method);
  noise.compare.fdr = parse_fdr(options.fdr);
  noise.compare.sessions = analysis::parse_session_mode(options.sessions);

  const OpenedStore opened = open_existing_store(options.store_url);
  require_swprofiles(opened, {options.profile});
  store::SampleQuery query = options.filter;
  query.settled_only = true;  // as compare: no repeats of interrupted or failed benchmarks
  query.swprofiles = {options.profile};
  const auto report = analysis::build_noise_report(opened.store->samples(query), noise);
  if (report.tables.empty()) {
    throw InputError("noise: no rows for swprofile '" + options.profile + "' match --sut/--benchmark/--resultclass");
  }
  report::render_noise(report, format, std::cout);
}

}  // namespace

void add_noise_command(CLI::App& app) {
  auto options = std::make_shared<NoiseCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "noise", "A/A view of one swprofile: the smallest change kbench can detect here (noise floor)");
  cmd->add_option("profile", options->profile, "swprofile name")->required();
  cmd->add_option("--format", options->format, "grid (default), csv or json");
  cmd->add_option("--method", options->method, "test of the A/A comparison: " + analysis::method_names() + " (default: welch)");
  cmd->add_option("--fdr", options->fdr, "Benjamini-Hochberg level (default 0.05), or off");
  cmd->add_option("--sessions", options->sessions, "sessions (default) or pooled, as for compare");
  add_sample_filter_options(*cmd, options->filter);
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Splits the sessions of the profile in two halves (first against second, in session order),\n"
      "or with one session its even repeats against its odd ones, and compares them.\n"
      "Examples:\n"
      "  kbench noise base\n"
      "  kbench noise base --benchmark 'syscall/*' --format csv");
  cmd->callback([options] { noise_command(*options); });
}

}  // namespace kbench::cli
