// kbench run: measure this machine's running kernel as sessions of a swprofile.
#include <unistd.h>

#include <iostream>

#include "app/session_report.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/run_plan.h"
#include "cli/suites.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "process/process.h"
#include "runner/catalogue.h"
#include "runner/plan_executor.h"

namespace kbench::cli {

namespace {

// What --resume finds the sessions of `kbench run` by (ExecOptions::plan_key).
const char* const kRunPlanKey = "kbench run";

// --resume with no run of the swprofile in the store would start a new run in
// its place without a word; refused before the store is created or changed.
void require_run_to_resume(const std::string& store_url, const std::string& swprofile) {
  if (has_run_to_resume(store_url, kRunPlanKey, {swprofile})) return;
  throw InputError("--resume: no interrupted run of swprofile '" + swprofile + "' to resume in " + store_url +
                   " (leave out --resume to start a new run)");
}

// --param key=value (repeatable) -> overrides; a key given twice is refused.
Params parse_param_options(const std::vector<std::string>& texts) {
  Params overrides;
  for (const auto& text : texts) {
    auto [key, value] = parse_param_assignment(text);
    if (!overrides.emplace(key, value).second) {
      throw InputError("--param " + text + ": parameter '" + key + "' given twice");
    }
  }
  return overrides;
}

// The implicit plan of `kbench run`: the suite's entries (or the catalogue's
// names matching --benchmark, with the suite's settings where it lists them)
// and the command line's overrides.
plan::Plan build_run_plan(const RunOptions& options, const plan::Plan& suite, const runner::Catalogue& catalogue) {
  plan::Plan run_plan;
  run_plan.path = suite.path;
  run_plan.defaults = suite.defaults;
  run_plan.family_defaults = suite.family_defaults;
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
    timeout = plan::parse_timeout(options.timeout, "--timeout");
  }
  const Params overrides = parse_param_options(options.params);
  for (auto& entry : run_plan.benchmarks) {
    plan::BenchmarkSettings settings = run_plan.settings_for(entry);
    if (options.warmups) settings.warmups = *options.warmups;
    if (options.repeats) settings.repeats = *options.repeats;
    if (options.sessions) settings.sessions = *options.sessions;
    if (timeout) settings.timeout = *timeout;
    if (options.size) settings.size = *options.size;
    if (options.kernel_profile) settings.kernel_profile = true;
    entry.overrides = settings;
    // --param applies to every benchmark selected; resolve_benchmarks refuses
    // a key one of them does not have, naming it and its known keys.
    for (const auto& [key, value] : overrides) entry.params[key] = value;
    const auto listed = catalogue.find(entry.name);
    if (!overrides.empty() && listed) {
      try {
        listed->effective_params(settings.size, entry.params);
      } catch (const InputError& bad) {
        throw InputError(std::string("--param: ") + bad.what());
      }
    }
  }
  return run_plan;
}

}  // namespace

std::string resume_command(const RunOptions& options, const std::string& store_url) {
  using process::shell_quote;
  std::string command = "kbench run --swprofile " + shell_quote(options.swprofile);
  if (options.suite != "default") command += " --suite " + shell_quote(options.suite);
  if (!options.benchmark_glob.empty()) command += " --benchmark " + shell_quote(options.benchmark_glob);
  if (options.warmups) command += " --warmups " + std::to_string(*options.warmups);
  if (options.repeats) command += " --repeats " + std::to_string(*options.repeats);
  if (options.sessions) command += " --sessions " + std::to_string(*options.sessions);
  if (!options.timeout.empty()) command += " --timeout " + shell_quote(options.timeout);
  if (!options.cpus.empty()) command += " --cpus " + shell_quote(options.cpus);
  if (!options.sut_name.empty()) command += " --sut " + shell_quote(options.sut_name);
  for (const auto& param : options.params) command += " --param " + shell_quote(param);
  if (options.size) command += " --size " + shell_quote(*options.size);
  if (!options.spread.empty()) command += " --spread " + shell_quote(options.spread);
  if (options.kernel_profile) command += " --kernel-profile";
  return command + " --resume --store " + shell_quote(store_url);
}

RunDone measure_running_kernel(const RunOptions& options, std::chrono::milliseconds session_gap) {
  check_name("--swprofile", options.swprofile);
  if (options.size) parse_size_name(*options.size, "--size");
  const plan::Plan suite = plan::load_plan(suite_plan_path(options.suite));

  auto connection = sut::make_local_connection(sut::find_agent_binary());
  const runner::Catalogue catalogue = runner::fetch_catalogue(*connection);
  const plan::Plan run_plan = build_run_plan(options, suite, catalogue);
  const auto runs = runner::resolve_benchmarks(run_plan, catalogue);
  // --cpus against the SUT's CPUs before the store is opened; execute_plan
  // checks again before each session, which also covers remote SUTs.
  runner::check_cpus_on_sut(options.cpus, runner::fetch_fingerprint(*connection), connection->describe());
  runner::ExecOptions exec;
  exec.swprofiles = {options.swprofile};
  exec.cpus = options.cpus;
  exec.strict = options.strict;
  exec.sut_name = options.sut_name;
  exec.resume = options.resume;
  exec.plan_key = kRunPlanKey;
  exec.session_gap = session_gap;

  // Only now, with every input checked, is the store opened (and maybe created).
  RunDone done;
  done.store_url = resolve_store_url(options.store_url);
  if (options.resume) require_run_to_resume(done.store_url, options.swprofile);
  // Before the store is created: a refused run writes nothing.
  if (options.strict) runner::check_machine_load(/*strict=*/true);
  auto store = store::open_store(done.store_url, store::OpenMode::CreateIfMissing);
  done.result = app::execute_and_report(
      run_plan, runs, [&](const plan::SwprofileSpec&) -> sut::Connection& { return *connection; }, *store, exec,
      "; continue with: " + resume_command(options, done.store_url));
  keep_exit_status(app::exit_status_of(done.result));
  return done;
}

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Measure the running kernel as new sessions of a swprofile");
  cmd->add_option("--swprofile", options->swprofile, "name of the software profile measured, e.g. base")
      ->required();
  add_choice_option(*cmd, "--suite", options->suite, {"quick", "default"}, "shipped plan to run: quick or default");
  add_glob_option(*cmd, "--benchmark", options->benchmark_glob,
                  "run only benchmarks matching this glob, e.g. 'syscall/*'");
  add_integer_option(*cmd, "--warmups", options->warmups, 0, kMaxWarmups,
                     "warmup iterations per benchmark (discarded)");
  add_integer_option(*cmd, "--repeats", options->repeats, 1, kMaxRepeats, "measured iterations per benchmark");
  add_integer_option(*cmd, "--sessions", options->sessions, 1, kMaxSessions,
                     "sessions (the replicates compare tests; default: the suite's, 3 default, 5 quick)");
  add_timeout_option(*cmd, "--timeout", options->timeout, "per-benchmark timeout, e.g. 90s or 10m");
  add_name_option(*cmd, "--sut", options->sut_name, "name of this SUT in reports (default: hostname)");
  cmd->add_option("--param", options->params,
                  "parameter override key=value for every benchmark selected (repeatable); see kbench catalogue")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--size", options->size, "parameter values to start from: quick or default (default: the suite's)");
  cmd->add_flag("--kernel-profile", options->kernel_profile,
                "sample where the kernel spends the measured repeats' time (perf cpu-clock; see kbench profile)");
  cmd->add_flag("--resume", options->resume,
                "continue the interrupted run of this swprofile (same options; refused if they changed)");
  cmd->add_option_function<std::string>(
      "--spread",
      [options](const std::string& text) {
        parse_spread(text);
        options->spread = text;
      },
      "pause between sessions, e.g. 2m (each paused session is a run of its own: the first comparison on a "
      "machine can then be tested across separate runs; default 0)");
  add_execution_options(*cmd, options->cpus, options->strict, options->store_url);
  cmd->footer(
      "Examples:\n"
      "  kbench run --swprofile base                      # default suite, 3 sessions\n"
      "  kbench run --swprofile patched --suite quick\n"
      "  kbench run --swprofile patched --suite quick --sessions 8\n"
      "  kbench run --swprofile v6.18 --benchmark 'syscall/*' --repeats 10 --cpus 1\n"
      "  kbench run --swprofile base --benchmark syscall/getpid --param calls=200000 --size quick\n"
      "  kbench run --swprofile base --suite quick --spread 2m   # sessions 2 minutes apart\n"
      "  kbench run --swprofile base --benchmark syscall/getppid --kernel-profile\n"
      "Each run adds new sessions (3 with the default suite, 5 with quick and 12 of one repeat for its\n"
      "syscall/* rows: compare tests one value per session, so sessions are the replicates), each\n"
      "with the benchmarks in its own shuffled order; samples are stored per repeat. Exit\n"
      "status 1 when a benchmark failed (the others still ran), 2 for bad input.");
  cmd->callback([options] {
    measure_running_kernel(*options, options->spread.empty() ? std::chrono::milliseconds(0) : parse_spread(options->spread));
  });
}

}  // namespace kbench::cli
