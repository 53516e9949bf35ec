// kbench noise: how much each row varies between sessions, and what that
// means for the smallest change kbench can detect on this machine.
#include <iostream>
#include <set>

#include "analysis/noise.h"
#include "analysis/runs.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/format_table.h"

namespace kbench::cli {

namespace {

// A SQLite GLOB that matches exactly `name`: its wildcard characters each in
// a bracket expression of their own.
std::string literal_glob(const std::string& name) {
  std::string glob;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[') {
      glob += '[';
      glob += c;
      glob += ']';
    } else {
      glob += c;
    }
  }
  return glob;
}

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
  const report::Format& format = report::find_format(options.format, report::View::Noise);
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
  std::vector<store::SampleRow> samples = opened.store->samples(query);
  // The noise model: the other profiles' sessions of the same rows on the
  // same SUTs (never another SUT: its noise says nothing about this one).
  std::set<std::string> suts;
  for (const auto& s : samples) suts.insert(s.sut);
  for (const std::string& sut : suts) {
    store::SampleQuery others = query;
    others.swprofiles.clear();
    others.sut_glob = literal_glob(sut);
    for (auto& s : opened.store->samples(others)) {
      if (s.swprofile != options.profile && s.sut == sut) samples.push_back(std::move(s));
    }
  }
  const auto report = analysis::build_noise_report(samples, noise, analysis::session_origins(*opened.store));
  if (report.tables.empty()) {
    throw InputError("noise: no rows for swprofile '" + options.profile + "' match --sut/--benchmark/--resultclass");
  }
  format.noise(report, std::cout);
}

}  // namespace

void add_noise_command(CLI::App& app) {
  auto options = std::make_shared<NoiseCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "noise",
      "Between-session noise of one swprofile, the noise model of the other profiles, and the smallest change "
      "kbench can detect here (noise floor)");
  cmd->add_option("profile", options->profile, "swprofile name")->required();
  cmd->add_option("--format", options->format,
                  "output format: " + report::format_choices(report::View::Noise) + " (default: " + options->format +
                      ")");
  cmd->add_option("--method", options->method, "test of the A/A comparison: " + analysis::method_names() + " (default: welch)");
  cmd->add_option("--fdr", options->fdr, "Benjamini-Hochberg level (default 0.05), or off");
  cmd->add_option("--sessions", options->sessions, "sessions (default) or pooled, as for compare");
  add_sample_filter_options(*cmd, options->filter);
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Per row: sessions, the cv between sessions (sd of log session means) and within them, the noise\n"
      "model learned from the other profiles on the same SUT, and the floor of the session test with\n"
      "this many sessions a side. With 1 session and no model the between-session noise is unknown and\n"
      "no floor is printed. run cv: how much whole runs of one kernel differ on this SUT (every kernel\n"
      "measured in >= 2 runs, all profiles); floor runs: the floor of a comparison of two separate runs.\n"
      "With >= 4 sessions the first half of the sessions is also compared with the\n"
      "second (A/A: every mark is a false alarm); --method/--fdr/--sessions apply to that comparison.\n"
      "Examples:\n"
      "  kbench noise base\n"
      "  kbench noise base --benchmark 'syscall/*' --format csv");
  cmd->callback([options] { noise_command(*options); });
}

}  // namespace kbench::cli
