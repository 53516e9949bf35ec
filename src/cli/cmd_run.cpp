// kbench run: measure this machine's running kernel as one swprofile session.
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session_report.h"
#include "cli/suites.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "runner/catalogue.h"
#include "runner/plan_executor.h"

namespace kbench::cli {

namespace {

struct RunOptions {
  std::string swprofile;
  std::string suite = "default";
  std::string benchmark_glob;
  std::optional<int> warmups;
  std::optional<int> repeats;
  std::string timeout;
  std::string cpus;
  std::string sut_name;
  std::string store_url;
  bool strict = false;
};

void validate_profile_name(const std::string& name) {
  if (name.empty()) throw InputError("--swprofile '': expected a non-empty name");
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20) {
      throw InputError("--swprofile '" + name + "': expected a name without control characters");
    }
  }
}

// The implicit plan of `kbench run`: the suite's entries (or the catalogue's
// names matching --benchmark, with the suite's settings where it lists them)
// and the command line's overrides.
plan::Plan build_run_plan(const RunOptions& options, const plan::Plan& suite, const runner::Catalogue& catalogue) {
  plan::Plan run_plan;
  run_plan.path = suite.path;
  run_plan.defaults = suite.defaults;
  if (options.benchmark_glob.empty()) {
    run_plan.benchmarks = suite.benchmarks;
  } else {
    const auto names = catalogue.matching(options.benchmark_glob);
    if (names.empty()) {
      throw InputError("--benchmark " + options.benchmark_glob + ": no benchmark matches (known: " +
                       catalogue.known_names() + ")");
    }
    for (const auto& name : names) {
      plan::BenchmarkEntry entry;
      entry.name = name;
      for (const auto& listed : suite.benchmarks) {
        if (listed.name == name) entry = listed;
      }
      run_plan.benchmarks.push_back(entry);
    }
  }
  std::optional<std::chrono::seconds> timeout;
  if (!options.timeout.empty()) {
    timeout = std::chrono::duration_cast<std::chrono::seconds>(plan::parse_duration(options.timeout, "--timeout"));
  }
  for (auto& entry : run_plan.benchmarks) {
    plan::BenchmarkSettings settings = run_plan.settings_for(entry);
    if (options.warmups) settings.warmups = *options.warmups;
    if (options.repeats) settings.repeats = *options.repeats;
    if (timeout) settings.timeout = *timeout;
    entry.overrides = settings;
  }
  return run_plan;
}

void run_command(const RunOptions& options) {
  validate_profile_name(options.swprofile);
  const plan::Plan suite = plan::load_plan(suite_plan_path(options.suite));

  auto connection = sut::make_local_connection(sut::find_agent_binary());
  const runner::Catalogue catalogue = runner::fetch_catalogue(*connection);
  const plan::Plan run_plan = build_run_plan(options, suite, catalogue);
  const auto runs = runner::resolve_benchmarks(run_plan, catalogue);
  runner::ExecOptions exec;
  exec.swprofiles = {options.swprofile};
  exec.cpus = options.cpus;
  exec.strict = options.strict;
  exec.sut_name = options.sut_name;

  // Only now, with every input checked, is the store opened (and maybe created).
  auto store = store::open_store(resolve_store_url(options.store_url), store::OpenMode::CreateIfMissing);
  execute_and_report(
      run_plan, runs, [&](const plan::SwprofileSpec&) -> sut::Connection& { return *connection; }, *store, exec, "");
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Measure the running kernel as one session of a swprofile");
  cmd->add_option("--swprofile", options->swprofile, "name of the software profile measured, e.g. base")
      ->required();
  cmd->add_option("--suite", options->suite, "shipped plan to run: quick or default")
      ->check(CLI::IsMember({"quick", "default"}));
  add_glob_option(*cmd, "--benchmark", options->benchmark_glob,
                  "run only benchmarks matching this glob, e.g. 'syscall/*'");
  add_integer_option(*cmd, "--warmups", options->warmups, 0, kMaxWarmups,
                     "warmup iterations per benchmark (discarded)");
  add_integer_option(*cmd, "--repeats", options->repeats, 1, kMaxRepeats, "measured iterations per benchmark");
  add_timeout_option(*cmd, "--timeout", options->timeout, "per-benchmark timeout, e.g. 90s or 10m");
  cmd->add_option("--sut", options->sut_name, "name of this SUT in reports (default: hostname)");
  add_execution_options(*cmd, options->cpus, options->strict, options->store_url);
  cmd->footer(
      "Examples:\n"
      "  kbench run --swprofile base                      # default suite\n"
      "  kbench run --swprofile patched --suite quick\n"
      "  kbench run --swprofile v6.18 --benchmark 'syscall/*' --repeats 10 --cpus 1\n"
      "Each run is a new session; samples are stored per repeat. Exit status 1 when a\n"
      "benchmark failed (the others still ran), 2 for bad input.");
  cmd->callback([options] { run_command(*options); });
}

}  // namespace kbench::cli
