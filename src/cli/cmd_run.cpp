// kbench run: measure this machine's running kernel as one swprofile session.
#include <iostream>

#include "analysis/compare.h"
#include "cli/commands.h"
#include "cli/suites.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "report/model.h"
#include "runner/catalogue.h"
#include "runner/session.h"

namespace kbench::cli {

namespace {

struct RunOptions {
  std::string swprofile;
  std::string suite = "default";
  std::string benchmark_glob;
  std::optional<int> warmups;
  std::optional<int> repeats;
  std::string timeout;
  std::optional<int> cpu;
  std::string sut_name;
  std::string store_url;
};

void validate_profile_name(const std::string& name) {
  if (name.empty()) throw InputError("--swprofile '': expected a non-empty name");
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20) {
      throw InputError("--swprofile '" + name + "': expected a name without control characters");
    }
  }
}

std::vector<runner::BenchmarkRun> select_benchmarks(const RunOptions& options, const plan::Plan& suite,
                                                    const runner::Catalogue& catalogue) {
  std::vector<runner::BenchmarkRun> runs;
  if (options.benchmark_glob.empty()) {
    for (const auto& entry : suite.benchmarks) {
      if (!catalogue.contains(entry.name)) {
        throw InputError(suite.path + ":" + std::to_string(entry.line) + ": benchmark '" + entry.name +
                         "' is not in kbench-agent's catalogue (known: " + catalogue.known_names() + ")");
      }
      runs.push_back({entry.name, entry.params, suite.settings_for(entry)});
    }
  } else {
    const auto names = catalogue.matching(options.benchmark_glob);
    if (names.empty()) {
      throw InputError("--benchmark " + options.benchmark_glob + ": no benchmark matches (known: " +
                       catalogue.known_names() + ")");
    }
    for (const auto& name : names) {
      runner::BenchmarkRun run{name, {}, suite.defaults};
      // A benchmark the suite lists keeps the suite's parameters and settings.
      for (const auto& entry : suite.benchmarks) {
        if (entry.name == name) run = {name, entry.params, suite.settings_for(entry)};
      }
      runs.push_back(std::move(run));
    }
  }
  for (auto& run : runs) {
    if (options.warmups) run.settings.warmups = *options.warmups;
    if (options.repeats) run.settings.repeats = *options.repeats;
    if (!options.timeout.empty()) {
      run.settings.timeout = std::chrono::duration_cast<std::chrono::seconds>(
          plan::parse_duration(options.timeout, "--timeout"));
    }
  }
  return runs;
}

void run_command(const RunOptions& options) {
  validate_profile_name(options.swprofile);
  if (options.warmups && *options.warmups < 0) throw InputError("--warmups: expected an integer >= 0");
  if (options.repeats && *options.repeats < 1) throw InputError("--repeats: expected an integer >= 1");
  if (options.cpu && *options.cpu < 0) throw InputError("--cpu: expected a CPU number >= 0");
  if (!options.timeout.empty()) plan::parse_duration(options.timeout, "--timeout");
  const plan::Plan suite = plan::load_plan(suite_plan_path(options.suite));

  auto connection = sut::make_local_connection(sut::find_agent_binary());
  const runner::Catalogue catalogue = runner::fetch_catalogue(*connection);
  runner::SessionRequest request;
  request.swprofile = options.swprofile;
  request.sut_name = options.sut_name;
  request.cpu = options.cpu;
  request.benchmarks = select_benchmarks(options, suite, catalogue);

  // Only now, with every input checked, is the store opened (and maybe created).
  auto store = store::open_store(resolve_store_url(options.store_url), store::OpenMode::CreateIfMissing);
  const runner::SessionResult result = runner::run_session(*connection, *store, request, std::cerr);

  store::SampleQuery query;
  query.swprofiles = {options.swprofile};
  auto tables = analysis::build_profile_tables(store->samples(query), options.swprofile, result.session);
  if (tables.empty()) {
    tables.push_back({});
    tables.back().sut = result.sut.name;
    tables.back().swprofile = options.swprofile;
  }
  bool failed = false;
  for (const auto& outcome : result.outcomes) {
    const std::string line = outcome.benchmark + ": " + outcome.outcome.reason;
    if (outcome.outcome.status == store::OutcomeStatus::Skipped) tables.front().skipped.push_back(line);
    if (outcome.outcome.status == store::OutcomeStatus::Failed) {
      tables.front().failed.push_back(line);
      failed = true;
    }
  }
  std::cout << "swprofile " << options.swprofile << ", session " << result.session << "\n";
  for (const auto& table : tables) report::render_profile_grid(table, std::cout);
  if (failed) pending_exit_status() = kExitFailure;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Measure the running kernel as one session of a swprofile");
  cmd->add_option("--swprofile", options->swprofile, "name of the software profile measured, e.g. base")
      ->required();
  cmd->add_option("--suite", options->suite, "shipped plan to run: quick or default")
      ->check(CLI::IsMember({"quick", "default"}));
  cmd->add_option("--benchmark", options->benchmark_glob,
                  "run only benchmarks matching this glob, e.g. 'syscall/*'");
  cmd->add_option("--warmups", options->warmups, "warmup iterations per benchmark (discarded)");
  cmd->add_option("--repeats", options->repeats, "measured iterations per benchmark");
  cmd->add_option("--timeout", options->timeout, "per-benchmark timeout, e.g. 90s or 10m");
  cmd->add_option("--cpu", options->cpu, "pin every benchmark to this CPU");
  cmd->add_option("--sut", options->sut_name, "name of this SUT in reports (default: hostname)");
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Examples:\n"
      "  kbench run --swprofile base                      # default suite\n"
      "  kbench run --swprofile patched --suite quick\n"
      "  kbench run --swprofile v6.18 --benchmark 'syscall/*' --repeats 10 --cpu 1\n"
      "Each run is a new session; samples are stored per repeat. Exit status 1 when a\n"
      "benchmark failed (the others still ran), 2 for bad input.");
  cmd->callback([options] { run_command(*options); });
}

}  // namespace kbench::cli
