#include "app/plan_exec.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/compare.h"
#include "app/build_progress.h"
#include "app/fleet.h"
#include "app/option_values.h"
#include "app/session_report.h"
#include "app/store_access.h"
#include "build/kernel_build.h"
#include "build/kernel_package.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "process/process.h"
#include "report/model.h"
#include "runner/catalogue.h"
#include "runner/interrupt.h"
#include "runner/local_boot.h"
#include "runner/plan_executor.h"
#include "runner/plan_status.h"
#include "sut/method.h"

namespace kbench::app {

namespace {

// A failure is kept: a later success of the same command does not clear it.
void keep_failure(int& status, int next) {
  if (next != kExitOk) status = next;
}

// The kernels of the selected swprofiles with build:, built or found in the
// cache, and the images of their kernel packages where the SUT boots an
// image: before any connection is made (a qemu SUT boots the image).
void build_kernels(plan::Plan& plan, const PlanRequest& options) {
  const build::BuildOptions build = build_options(options.build_cache);
  bool any = false;
  for (const auto& profile : plan.swprofiles) any = any || profile.build.has_value();
  if (any) build::resolve_builds(plan, options.swprofiles, build);
  build::unpack_deb_kernels(plan, options.swprofiles, build.cache_dir);
}

// The benchmarks with an undecided row in the comparison of the plan's first
// swprofile against the others, tested at level / looks.
std::set<std::string> undecided_benchmarks(store::ResultStore& store, const std::vector<std::string>& profiles,
                                           int looks) {
  analysis::CompareOptions compare;
  compare.base = profiles.front();
  compare.tests.assign(profiles.begin() + 1, profiles.end());
  compare.looks = looks;
  // Per machine: a row undecided on any SUT of the plan gets more sessions.
  compare.per_sut = true;
  store::SampleQuery query;
  query.settled_only = true;
  const analysis::Report report = analysis::build_comparison(store.samples(query), compare);
  std::set<std::string> undecided;
  for (const auto& table : report.tables)
    for (const auto& row : table.rows)
      for (const auto& cell : row.cells)
        if (cell.verdict == analysis::Verdict::Undecided) undecided.insert(row.benchmark);
  return undecided;
}

// --until-decided: after the planned sessions, one more session of every
// swprofile (alternating) for just the benchmarks with undecided rows, until
// none is left, the looks are used up or the next round would overrun the
// budget. Each look tests at q / looks (Bonferroni, docs/statistics.md), so
// the extra looks do not inflate the false-mark rate.
int add_sessions_until_decided(const plan::Plan& plan, const std::vector<runner::BenchmarkRun>& runs,
                                const runner::ConnectionFor& connection_for, store::ResultStore& store,
                                const runner::ExecOptions& exec, const PlanRequest& options,
                                std::chrono::steady_clock::duration first_round) {
  using Clock = std::chrono::steady_clock;
  int status = kExitOk;
  const int looks = parse_integer("--max-looks", options.max_looks, 2, 20);
  std::optional<std::chrono::milliseconds> budget;
  if (!options.budget.empty()) budget = plan::parse_duration(options.budget, "--budget");
  std::vector<std::string> profiles;
  for (const auto& profile : runner::select_swprofiles(plan, exec)) profiles.push_back(profile.name);
  if (profiles.size() < 2) throw InputError("--until-decided: the plan needs at least two swprofiles to compare");
  int sessions_per_run = 1;
  for (const auto& run : runs) sessions_per_run = std::max(sessions_per_run, run.settings.sessions);
  // One round of every benchmark, from the planned sessions' pace.
  const auto full_round = first_round / sessions_per_run;
  auto spent = first_round;
  int look = 1;
  for (; look < looks && !runner::interrupted(); ++look) {
    const std::set<std::string> undecided = undecided_benchmarks(store, profiles, looks);
    if (undecided.empty()) break;
    std::vector<runner::BenchmarkRun> again;
    for (auto run : runs) {
      if (!undecided.count(run.name)) continue;
      run.settings.sessions = 1;
      again.push_back(std::move(run));
    }
    const auto estimate = full_round * static_cast<long>(again.size()) / static_cast<long>(std::max<std::size_t>(1, runs.size()));
    if (budget && spent + estimate > *budget) {
      std::cerr << fmt::format("kbench: until-decided: the next round (about {} s) would overrun --budget {}; stopping\n",
                               std::chrono::duration_cast<std::chrono::seconds>(estimate).count(), options.budget);
      break;
    }
    std::cerr << fmt::format("kbench: until-decided: look {} of {}: {} benchmark(s) with undecided rows get one more "
                             "session per swprofile\n",
                             look, looks, again.size());
    runner::ExecOptions more = exec;
    more.resume = false;
    more.first_round = sessions_per_run + look - 1;
    const auto started = Clock::now();
    const auto result = execute_and_report(plan, again, connection_for, store, more, "");
    keep_failure(status, exit_status_of(result));
    spent += Clock::now() - started;
    if (result.interrupted_by != 0) return status;
  }
  const std::size_t left = runner::interrupted() ? 0 : undecided_benchmarks(store, profiles, looks).size();
  std::string compare_command = "kbench compare";
  for (const auto& profile : profiles) compare_command += " " + process::shell_quote(profile);
  std::cerr << fmt::format("kbench: until-decided: {} look(s) of at most {}, {} benchmark(s) still undecided; the "
                           "verdicts at the split level: {} --looks {}\n",
                           look, looks, left, compare_command, looks);
  return status;
}

}  // namespace

PlanSummary check_plan(const PlanRequest& options) {
  for (const auto& name : options.swprofiles) check_name("--swprofile", name);
  const plan::Plan plan = plan::load_plan(options.path);
  runner::ExecOptions exec;
  exec.swprofiles = options.swprofiles;
  if (!plan.suts.empty() || plan.design == plan::Design::Duet) {
    FleetOptions fleet;
    fleet.swprofiles = options.swprofiles;
    check_fleet(plan, plan.suts.empty() ? duet_workers(plan) : plan.suts, fleet);
  } else if (!plan.swprofiles.empty() || !options.swprofiles.empty()) {
    runner::select_swprofiles(plan, exec);
  }
  // Build specs: refs resolve, compilers exist (nothing is built).
  for (const auto& profile : plan.swprofiles) {
    const bool selected = options.swprofiles.empty() ||
                          std::find(options.swprofiles.begin(), options.swprofiles.end(), profile.name) !=
                              options.swprofiles.end();
    if (profile.build && selected) build::check_build_spec(*profile.build, profile.name);
  }
  auto connection = sut::make_local_connection(sut::find_agent_binary());
  const auto runs = runner::resolve_benchmarks(plan, runner::fetch_catalogue(*connection));
  PlanSummary summary;
  std::vector<std::pair<std::string, const plan::SutSpec*>> suts;
  if (plan.sut) suts.emplace_back("sut", &*plan.sut);
  for (const auto& spec : plan.suts) suts.emplace_back("suts[" + spec.name + "]", &spec);
  for (const auto& [at, spec] : suts) {
    const sut::Method& method = plan::sut_method(*spec);
    if (!method.check_online) continue;
    const sut::Method::OnlineCheck check = method.check_online(spec->params);
    if (check.problem) {
      throw InputError(fmt::format("{}{}: {}.connection.params.{}: expected {}", plan.path,
                                   spec->line > 0 ? ":" + std::to_string(spec->line) : "", at, check.problem->key,
                                   check.problem->expected));
    }
    if (!check.note.empty()) summary.notes.push_back(check.note);
  }
  summary.suts = plan.suts.size();
  summary.swprofiles = plan.swprofiles.size();
  summary.benchmarks = runs.size();
  for (const auto& run : runs) summary.repeats += run.settings.repeats * run.settings.sessions;
  return summary;
}

namespace {

// --resume with no run of the plan in the store would start new sessions with
// only a note; refused before the store is created or changed, as run's is.
void require_plan_run_to_resume(const PlanRequest& options, const std::string& store_url,
                                const std::vector<std::string>& plan_keys, const std::vector<std::string>& swprofiles) {
  for (const auto& key : plan_keys) {
    if (has_run_to_resume(store_url, key, swprofiles)) return;
  }
  const std::string names = fmt::format("{}", fmt::join(swprofiles, ", "));
  const std::string which = swprofiles.empty()      ? ""
                            : swprofiles.size() == 1 ? " (swprofile " + names + ")"
                                                     : " (swprofiles " + names + ")";
  throw InputError(fmt::format("--resume: no interrupted run of plan {}{} to resume in {} (leave out --resume to "
                               "start new sessions)",
                               options.path, which, store_url));
}

// Several SUTs: checked here, then measured by one worker process each.
int exec_fleet(plan::Plan plan, const std::vector<plan::SutSpec>& suts, const PlanRequest& options,
                const std::string& plan_key) {
  if (options.until_decided) {
    throw InputError(plan.design == plan::Design::Duet
                         ? "--until-decided: expected a plan with one SUT measured alone, not design: duet"
                         : "--until-decided: expected a plan with one SUT (sut:), not a suts: list");
  }
  // Before anything is built or stored: a machine with one CPU has no halves.
  if (plan.design == plan::Design::Duet) runner::cpu_halves();
  FleetOptions fleet;
  fleet.plan_path = options.path;
  fleet.plan_key = plan_key;
  fleet.swprofiles = options.swprofiles;
  fleet.resume = options.resume;
  fleet.cpus = options.cpus;
  fleet.strict = options.strict;
  fleet.store_url = resolve_store_url(options.store_url);
  check_fleet(plan, suts, fleet);
  auto local = sut::make_local_connection(sut::find_agent_binary());
  const auto runs = runner::resolve_benchmarks(plan, runner::fetch_catalogue(*local));
  // Built once here; each worker finds them in the cache.
  build_kernels(plan, options);
  if (options.resume) {
    // Any SUT of the plan: the failed ones of a fleet are resumed with --sut,
    // and one may have failed before its first session.
    std::vector<std::string> keys;
    for (const auto& sut : plan.suts.empty() ? suts : plan.suts) keys.push_back(fleet_plan_key(plan_key, sut.name));
    require_plan_run_to_resume(options, fleet.store_url, keys, options.swprofiles);
  }
  // Before the store is created: a refused run writes nothing.
  if (options.strict) runner::check_machine_load(/*strict=*/true);
  // Created here, before the workers open it at once.
  auto store = store::open_store(fleet.store_url, store::OpenMode::CreateIfMissing);
  return execute_fleet(plan, suts, runs, fleet, *store);
}

// A plan booting this machine is resumed after each boot by a systemd unit
// running this command: everything it names absolute, and on a filesystem
// that a boot keeps. Checked before the store is opened.
void prepare_local_boots(const PlanRequest& options, const std::string& store_url, runner::ExecOptions& exec) {
  if (options.until_decided) {
    throw InputError("--until-decided: not with sut.boot on this machine; run the plan, then kbench compare");
  }
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) throw RunError("cannot tell where this kbench is (/proc/self/exe)");
  std::string absolute_store = store_url;
  const store::StoreUrl parsed = store::parse_store_url(store_url);
  if (parsed.scheme == "sqlite") {
    const std::string path = std::filesystem::absolute(parsed.path).lexically_normal().string();
    absolute_store = "sqlite://" + path;
    if (const std::string folder = runner::volatile_folder(path); !folder.empty()) {
      throw InputError(fmt::format("--store {}: the store is in {}, which a boot empties; the run resumed after the "
                                   "boot would not find it (sut.boot with connection local)",
                                   store_url, folder));
    }
  }
  if (const std::string folder = runner::volatile_folder(self); !folder.empty()) {
    throw InputError(fmt::format("this kbench ({}) is in {}, which a boot empties; the run resumed after the boot "
                                 "would not find it (sut.boot with connection local)",
                                 self, folder));
  }
  exec.store_url = absolute_store;
  exec.resume_command = {self, "plan", "exec", exec.plan_key, "--store", absolute_store, "--resume"};
  for (const auto& name : options.swprofiles) exec.resume_command.insert(exec.resume_command.end(), {"--swprofile", name});
  // Not --strict: the load average right after a boot counts the boot's own
  // start-up, which the resumed run waits out before it measures.
  if (!options.cpus.empty()) exec.resume_command.insert(exec.resume_command.end(), {"--cpus", options.cpus});
}

}  // namespace

std::string plan_status(const PlanRequest& options) {
  const plan::Plan plan = plan::load_plan(options.path);
  if (!plan.suts.empty()) {
    throw InputError(options.path + ": plan status: expected a plan with one sut (a suts: plan's SUTs each have "
                                    "their own; kbench list boots shows their boots)");
  }
  const std::string plan_key = std::filesystem::absolute(options.path).lexically_normal().string();
  std::string store_url = options.store_url;
  const bool local_boots = plan::boots_this_machine(plan);
  if (store_url.empty() && local_boots) {
    if (const auto state = runner::read_local_boot_state(runner::local_boot_state_path(plan_key))) {
      store_url = state->store;
    } else {
      store_url = runner::read_local_boot_done_store(runner::local_boot_done_path(plan_key));
    }
  }
  store_url = resolve_store_url(store_url);
  std::unique_ptr<store::ResultStore> store;
  const store::StoreUrl parsed = store::parse_store_url(store_url);
  if (parsed.scheme != "sqlite" || std::filesystem::exists(parsed.path)) {
    store = store::open_store(store_url, store::OpenMode::ReadOnly);
  }
  plan::Plan keyed = plan;
  keyed.path = plan_key;
  const auto status = runner::gather_plan_status(keyed, plan_key, store.get(), store_url, /*ask_systemd=*/local_boots);
  return runner::plan_status_text(status);
}

int execute_plan_request(const PlanRequest& options) {
  for (const auto& name : options.swprofiles) check_name("--swprofile", name);
  const plan::Plan loaded = plan::load_plan(options.path);
  // Fleet workers (started below) build into the same cache.
  if (!options.build_cache.empty()) setenv("KBENCH_BUILD_CACHE", options.build_cache.c_str(), 1);
  const std::string plan_key = std::filesystem::absolute(options.path).lexically_normal().string();
  const auto suts = select_suts(loaded, options.suts, options.fleet_worker);
  if (!suts.empty() && !options.fleet_worker) return exec_fleet(loaded, suts, options, plan_key);
  const bool duet = loaded.design == plan::Design::Duet;
  if (duet && !options.fleet_worker) return exec_fleet(loaded, duet_workers(loaded), options, plan_key);
  if (options.duet_half >= 0 && (!duet || !options.fleet_worker || options.duet_half > 1)) {
    throw InputError("--duet-half: expected a duet's fleet worker, half 0 or 1");
  }
  if (options.fleet_worker && !duet && suts.size() != 1) {
    throw InputError("--fleet-worker: expected exactly one --sut of the plan's suts: list");
  }
  plan::Plan plan = suts.empty() ? loaded : loaded.for_sut(suts.front());
  runner::ExecOptions exec;
  exec.swprofiles = options.swprofiles;
  exec.resume = options.resume;
  exec.cpus = options.cpus;
  exec.strict = options.strict;
  exec.announce_steps = options.fleet_worker;
  exec.plan_key = suts.empty() ? plan_key : fleet_plan_key(plan_key, suts.front().name);
  if (duet) {
    // Each half a plan key of its own, as a fleet's SUTs have; the first
    // round of the second half in the other order, on the other CPUs.
    exec.plan_key = fleet_plan_key(plan_key, duet_worker_name(plan.sut->name, options.duet_half));
    exec.first_round = options.duet_half;
    exec.round_cpus = runner::cpu_halves();
  }
  if (loaded.design == plan::Design::Crossover && !suts.empty()) {
    // The second SUT one round ahead: in every round the other order, also
    // when resumed alone.
    const auto place = std::ranges::find(loaded.suts, suts.front().name, &plan::SutSpec::name);
    exec.first_round = static_cast<int>(place - loaded.suts.begin());
  }
  if (!options.pair_dir.empty()) {
    if (!options.fleet_worker || options.pair_id.empty() || options.pair_position < 0 || options.pair_position > 1) {
      throw InputError("--pair-dir: expected a paired fleet worker with --pair-id and --pair-position 0 or 1");
    }
    exec.pairing =
        runner::Pairing{options.pair_dir, options.pair_position, options.pair_id, duet ? "" : suts.front().name};
  }
  runner::select_swprofiles(plan, exec);

  // The catalogue comes from the local agent: the same binary every SUT runs,
  // and asking a qemu SUT would cost a boot.
  auto local = sut::make_local_connection(sut::find_agent_binary());
  const bool local_boots = plan::boots_this_machine(plan);
  // Resumed by its unit right after a boot, this machine may still be
  // starting its services (a slow or loaded one, for minutes).
  const auto catalogue_limit =
      local_boots ? std::max(runner::kCatalogueLimit, plan.sut->boot->timeout) : runner::kCatalogueLimit;
  const auto runs = runner::resolve_benchmarks(plan, runner::fetch_catalogue(*local, catalogue_limit));
  build_kernels(plan, options);
  const plan::SutSpec* sut_spec = plan.sut ? &*plan.sut : nullptr;
  const bool per_profile = sut_spec && plan::sut_method(*sut_spec).has(sut::Capability::BootsKernel);
  std::map<std::string, std::unique_ptr<sut::Connection>> connections;
  if (sut_spec && !per_profile) connections[""] = plan::connect(*sut_spec, nullptr);
  if (per_profile) {
    // Bad qemu params or a missing kernel image are input errors: find them
    // before the store is opened.
    for (const auto& profile : runner::select_swprofiles(plan, exec)) {
      connections[profile.name] = plan::connect(*sut_spec, &profile);
    }
  }
  const runner::ConnectionFor connection_for = [&](const plan::SwprofileSpec& profile) -> sut::Connection& {
    if (!sut_spec) return *local;
    return *connections.at(per_profile ? profile.name : "");
  };
  if (options.until_decided) {
    // Bad values are input errors before the store is opened.
    parse_integer("--max-looks", options.max_looks, 2, 20);
    if (!options.budget.empty()) plan::parse_duration(options.budget, "--budget");
    if (runner::select_swprofiles(plan, exec).size() < 2)
      throw InputError("--until-decided: the plan needs at least two swprofiles to compare");
  }
  const std::string store_url = resolve_store_url(options.store_url);
  if (local_boots) prepare_local_boots(options, store_url, exec);
  // A fleet worker's SUT may not have begun when the fleet stopped (the fleet
  // checked its plan as a whole), and a plan between boots of this machine
  // resumes from its state file.
  if (options.resume && !options.fleet_worker &&
      !(local_boots && runner::read_local_boot_state(runner::local_boot_state_path(exec.plan_key)))) {
    std::vector<std::string> names;
    for (const auto& profile : runner::select_swprofiles(plan, exec)) names.push_back(profile.name);
    require_plan_run_to_resume(options, store_url, {exec.plan_key}, names);
  }
  // Before the store is created: a refused run writes nothing.
  if (options.strict) runner::check_machine_load(/*strict=*/true);
  auto store = store::open_store(store_url, store::OpenMode::CreateIfMissing);

  std::string again = "kbench plan exec " + process::shell_quote(options.path);
  if (!suts.empty()) again += " --sut " + process::shell_quote(suts.front().name);
  for (const auto& name : options.swprofiles) again += " --swprofile " + process::shell_quote(name);
  if (!options.cpus.empty()) again += " --cpus " + process::shell_quote(options.cpus);
  const auto started = std::chrono::steady_clock::now();
  const auto result =
      execute_and_report(plan, runs, connection_for, *store, exec,
                         "; continue with: " + again + " --resume --store " + process::shell_quote(store_url));
  int status = exit_status_of(result);
  if (options.until_decided && result.interrupted_by == 0) {
    keep_failure(status, add_sessions_until_decided(plan, runs, connection_for, *store, exec, options,
                                                    std::chrono::steady_clock::now() - started));
  }
  return status;
}

}  // namespace kbench::app

