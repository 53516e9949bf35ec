#include "runner/plan_executor.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <random>
#include <thread>
#include <set>
#include <sstream>

#include "common/cpu_list.h"
#include "common/errors.h"
#include "common/utc_time.h"
#include "deploy/deployer.h"
#include "runner/interrupt.h"
#include "runner/local_boot.h"
#include "runner/session_boots.h"
#include "runner/sysctl.h"
#include "sysinfo/fingerprint_view.h"
#include "sysinfo/sha256.h"

namespace kbench::runner {

namespace fingerprint_key = sysinfo::fingerprint_key;

namespace {

std::set<std::string> running_cmdline_words() {
  std::ifstream in("/proc/cmdline");
  std::set<std::string> words;
  for (std::string word; in >> word;) words.insert(word);
  return words;
}

using sut::Capability;

// The agent runs on this machine, under its running kernel.
bool plan_is_local(const plan::Plan& plan) { return plan::sut_method(plan).has(Capability::OnController); }

using plan::boots_this_machine;

// What a plan booting this machine needs of it and of the plan, before
// anything is written: a boot must not strand the machine or lose the plan.
void check_local_boot_plan(const plan::Plan& plan, const std::vector<plan::SwprofileSpec>& selected) {
  if (const std::string folder = volatile_folder(plan.path); !folder.empty()) {
    throw InputError(fmt::format("{}: sut.boot with connection local: the plan is in {}, which a boot empties; the "
                                 "run resumed after the boot would not find it (put it elsewhere)",
                                 plan.path, folder));
  }
  for (const auto& spec : selected) {
    for (const auto* file : {&spec.kernel.deb, &spec.kernel.image, &spec.kernel.modules, &spec.kernel.config}) {
      if (const std::string folder = file->empty() ? "" : volatile_folder(*file); !folder.empty()) {
        throw InputError(fmt::format("{}:{}: swprofile {}: kernel file {} is in {}, which a boot empties; the run "
                                     "resumed after the boot would not find it",
                                     plan.path, spec.line, spec.name, *file, folder));
      }
    }
    if (const std::string word = deploy::hanging_panic_word(spec.cmdline); !word.empty()) {
      throw InputError(fmt::format("{}:{}: swprofile {}: cmdline '{}' leaves a panicked kernel hanging, and this "
                                   "machine has no power_cycle to recover; leave it out (kbench adds {} to each "
                                   "boot here) or give a panic=N that reboots",
                                   plan.path, spec.line, spec.name, word, deploy::kPanicRebootWord));
    }
  }
  // The machine last: the plan's own faults are found on any machine.
  const std::string obstacle = local_boot_obstacle(kSystemdRunDir, geteuid() == 0);
  if (!obstacle.empty()) {
    throw InputError(fmt::format("{}:{}: sut.boot with connection local: {}", plan.path, plan.sut->boot->line,
                                 obstacle));
  }
}

// A session of this run that --resume finds complete: nothing of it runs
// again, not even its fingerprint (a boot, on a qemu SUT).
std::optional<SessionSummary> completed_session(store::ResultStore& store, const std::string& swprofile,
                                                const std::string& plan_key, const std::string& run_id, int round) {
  const auto id = store.find_plan_session(swprofile, plan_key, run_id, round);
  if (!id) return std::nullopt;
  const auto stored = store.session(*id);
  if (!stored || !stored->complete()) return std::nullopt;
  SessionSummary summary;
  summary.session = *id;
  summary.number = stored->number();
  summary.swprofile = swprofile;
  summary.sut.name = stored->sut;
  return summary;
}

std::string outcome_text(const BenchmarkOutcome& outcome) {
  switch (outcome.outcome.status) {
    case store::OutcomeStatus::Ok:
      return fmt::format("{} repeats", outcome.repeats_stored);
    case store::OutcomeStatus::Skipped:
      return "skipped: " + outcome.outcome.reason;
    case store::OutcomeStatus::Failed:
      return "FAILED: " + outcome.outcome.reason;
  }
  return "";
}

// What a plan execution writes into every new session's fingerprint.
struct PlanContext {
  const plan::Plan& plan;
  const ExecOptions& options;
  const std::string& identity;
  const nlohmann::json& description;
  const std::string& run_id;
};

// The new session `round`'s fingerprint gets the plan (path, key, identity,
// run, round, benchmarks and their order), the swprofile's settings, and
// the boot it was measured in.
void describe_new_session(nlohmann::json& fingerprint, const PlanContext& context, int round, int slot,
                          const std::string& pair_unit, const nlohmann::json& order_names, const plan::SwprofileSpec& profile,
                          const std::optional<deploy::BootReport>& boot) {
  const plan::Plan& plan = context.plan;
  namespace in_plan = fingerprint_key::plan;
  namespace in_swprofile = fingerprint_key::swprofile;
  nlohmann::json& recorded_plan = fingerprint[fingerprint_key::kPlan];
  recorded_plan = {{in_plan::kPath, plan.path},
                   {in_plan::kKey, context.options.plan_key},
                   {in_plan::kIdentity, context.identity},
                   {in_plan::kRun, context.run_id},
                   {in_plan::kSession, round},
                   {in_plan::kBenchmarks, context.description},
                   {in_plan::kOrdering, plan.order == plan::Order::Listed ? "listed" : "shuffled"},
                   {in_plan::kOrder, order_names}};
  // Sessions paused apart (calibrate --spread) are runs of their own:
  // the machine may drift during the pause as it does between runs.
  if (context.options.session_gap.count() > 0) {
    recorded_plan[in_plan::kBlock] = fmt::format("{}/{}", context.run_id, round);
  }
  // Both sides of a crossover write the same pair for the sessions they
  // measure side by side, whether or not the other side got there.
  if (const auto& pairing = context.options.pairing; pairing && !context.options.resume) {
    recorded_plan[in_plan::kPair] = fmt::format("{}/{}/{}", pairing->id, round, slot);
    recorded_plan[in_plan::kPairUnit] = pair_unit;
  }
  fingerprint[fingerprint_key::kSysctl] = profile.sysctl;
  // What the swprofile sets on purpose, so compare does not list it as an
  // undeclared environment difference (analysis/environment.h).
  nlohmann::json& declared = fingerprint[fingerprint_key::kSwprofile];
  declared = {{in_swprofile::kKernel, profile.kernel.describe()}, {in_swprofile::kCmdline, profile.cmdline}};
  if (!profile.wrapper.empty()) declared[in_swprofile::kWrapper] = profile.wrapper;
  // The path alone would not tell two device trees of one name apart.
  if (!profile.kernel.dtb.empty()) declared[in_swprofile::kDtbSha256] = sysinfo::file_sha256(profile.kernel.dtb);
  // A kernel kbench built: how (commit, config hash, compiler version, ...).
  if (!profile.build_info.is_null()) declared[in_swprofile::kBuild] = profile.build_info;
  if (boot) fingerprint[fingerprint_key::kBoot] = boot->to_json();
}

// Runs session `round`'s benchmarks in `order` (a resumed session only those
// without an outcome), each after meeting the other side at `barrier` (a
// crossover's, else null); false when an interrupt stopped it first.
bool run_session_benchmarks(sut::Connection& connection, store::ResultStore& store, SessionSummary& summary,
                            int round, int slot, const std::vector<std::size_t>& order,
                            const std::vector<BenchmarkRun>& benchmarks, bool resumed, const std::string& cpus,
                            PairBarrier* barrier, Progress& progress, ExecResult& result) {
  for (std::size_t step = 0; step < order.size(); ++step) {
    const BenchmarkRun& run = benchmarks[order[step]];
    if (round >= run.settings.sessions) continue;
    const std::string label = fmt::format("{} session {} {}", summary.swprofile, summary.number, run.name);
    const store::BenchmarkKey key{run.name, run.params};
    if (resumed) {
      if (const auto done = store.outcome_of(summary.session, key)) {
        progress.step_started(label, run.name, run.settings.repeats);
        progress.step_finished("already done (" + std::string(store::to_string(done->status)) + ")");
        continue;
      }
      // Interrupted mid-benchmark: its repeats are redone from the start,
      // so none is counted twice and warmups precede the measurement.
      store.discard_benchmark(summary.session, key);
    }
    // The other side's benchmark may still run for up to its timeout, after
    // the start of its agent.
    if (barrier) {
      barrier->meet(pair_point(round, slot, static_cast<int>(step) + 1),
                    run.settings.timeout + connection.start_allowance());
    }
    if (interrupted()) return false;
    progress.step_started(label, run.name, run.settings.repeats);
    BenchmarkOutcome outcome = run_benchmark(connection, store, summary.session, run, cpus, progress);
    if (interrupted()) {
      // The agent was killed by our own signal handler: not the benchmark's
      // fault, so it has no outcome (its repeats so far stay, unused by
      // compare); --resume redoes this benchmark.
      store.discard_outcome(summary.session, key);
      progress.step_finished("interrupted");
      return false;
    }
    if (outcome.outcome.status == store::OutcomeStatus::Failed) ++result.failed;
    progress.step_finished(outcome_text(outcome));
    summary.outcomes.push_back(std::move(outcome));
  }
  return true;
}

// What the store adds to the session's fingerprint at its end: the load
// during the session shows in the load averages at its end, which the
// fingerprint at its start cannot know. Asked of the SUT's agent; a SUT
// that cannot answer leaves the key null, never fails the finished session.
// A method that boots a kernel for each agent would answer from a VM booted
// for the question, whose load says nothing of the session: not asked.
nlohmann::json state_at_end(sut::Connection& connection, const sut::Method& method) {
  nlohmann::json state = {{fingerprint_key::kLoadavgEnd, nullptr}};
  if (method.has(Capability::BootsKernel)) return state;
  try {
    const nlohmann::json fingerprint = fetch_fingerprint(connection);
    if (const nlohmann::json* loadavg = sysinfo::FingerprintView(fingerprint).member(fingerprint_key::kLoadavg))
      state[fingerprint_key::kLoadavgEnd] = *loadavg;
  } catch (const std::exception&) {
  }
  return state;
}

// The run this execution belongs to: the one a plan between boots of this
// machine carries in its state, the newest one of the store on --resume,
// else a new one. A run is one execution of the plan and its resumptions:
// --resume continues the sessions of the newest run, never those of an
// older one.
std::string choose_run_id(const plan::Plan& plan, const std::vector<plan::SwprofileSpec>& profiles,
                          const nlohmann::json& description, const std::string& identity,
                          const std::optional<LocalBootState>& local_state, const std::string& state_path,
                          store::ResultStore& store, const ExecOptions& options, Progress& progress) {
  std::string run_id;
  if (local_state) {
    if (!options.resume) {
      throw InputError(fmt::format("plan {} is between boots of this machine ({}): `kbench plan status {}` shows "
                                   "where it stands; its resume unit {} continues it after the boot",
                                   plan.path, state_path, plan.path, local_state->unit));
    }
    if (local_state->identity != identity) {
      throw InputError(fmt::format("plan changed since its boots began (state {}); undo the change to resume",
                                   state_path));
    }
    run_id = local_state->run;
  } else if (options.resume) {
    std::vector<std::string> names;
    for (const auto& profile : profiles) names.push_back(profile.name);
    if (const auto latest = store.latest_plan(options.plan_key, names)) {
      if (latest->value(fingerprint_key::plan::kIdentity, std::string()) != identity) {
        auto changes = plan_changes(latest->value(fingerprint_key::plan::kBenchmarks, nlohmann::json::array()),
                                    description);
        throw InputError(fmt::format("plan changed since the interrupted run: {}; undo the change to resume, or "
                                     "run without --resume to start new sessions",
                                     fmt::join(changes, "; ")));
      }
      run_id = latest->value(fingerprint_key::plan::kRun, std::string());
    } else {
      progress.message("kbench: nothing to resume in " + store.location() + "; starting new sessions");
    }
  }
  // Both sides of a crossover shuffle each round's benchmarks alike.
  if (run_id.empty() && options.pairing && !options.resume) run_id = options.pairing->id;
  if (run_id.empty()) run_id = fmt::format("{}-{}", utc_now_iso8601(), getpid());
  return run_id;
}

}  // namespace

nlohmann::json plan_description(const std::vector<BenchmarkRun>& benchmarks) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& run : benchmarks) {
    list.push_back({{"name", run.name},
                    {"params", run.params},
                    {"warmups", run.settings.warmups},
                    {"repeats", run.settings.repeats},
                    {"sessions", run.settings.sessions},
                    {"timeout", fmt::format("{}s", run.settings.timeout.count())}});
  }
  return list;
}

std::vector<std::string> plan_changes(const nlohmann::json& before, const nlohmann::json& after) {
  // Keyed by name, with "#2" for a name the plan lists a second time.
  auto by_name = [](const nlohmann::json& list) {
    std::vector<std::pair<std::string, nlohmann::json>> entries;
    std::map<std::string, int> seen;
    if (!list.is_array()) return entries;
    for (const auto& entry : list) {
      const std::string name = entry.value("name", std::string("?"));
      const int count = ++seen[name];
      entries.emplace_back(count == 1 ? name : fmt::format("{}#{}", name, count), entry);
    }
    return entries;
  };
  const auto old_entries = by_name(before);
  const auto new_entries = by_name(after);
  auto find = [](const auto& entries, const std::string& key) -> const nlohmann::json* {
    for (const auto& [name, entry] : entries) {
      if (name == key) return &entry;
    }
    return nullptr;
  };
  std::vector<std::string> changes;
  for (const auto& [name, old_entry] : old_entries) {
    const nlohmann::json* new_entry = find(new_entries, name);
    if (!new_entry) {
      changes.push_back("benchmark " + name + " removed");
      continue;
    }
    for (const char* field : {"params", "warmups", "repeats", "sessions", "timeout"}) {
      const auto old_value = old_entry.value(field, nlohmann::json());
      const auto new_value = new_entry->value(field, nlohmann::json());
      if (old_value == new_value) continue;
      auto text = [](const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); };
      changes.push_back(fmt::format("benchmark {} {} {} -> {}", name, field, text(old_value), text(new_value)));
    }
  }
  for (const auto& [name, entry] : new_entries) {
    if (!find(old_entries, name)) changes.push_back("benchmark " + name + " added");
  }
  if (changes.empty() && before != after) changes.push_back("the order of the benchmarks");
  return changes;
}

std::string plan_identity(const nlohmann::json& description) {
  const std::string text = description.dump();
  std::uint64_t hash = 1469598103934665603ull;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return fmt::format("{:016x}", hash);
}

std::vector<std::size_t> session_order(const std::string& run_id, int session, std::size_t count, plan::Order order) {
  std::vector<std::size_t> indices(count);
  for (std::size_t i = 0; i < count; ++i) indices[i] = i;
  if (order == plan::Order::Listed || count < 2) return indices;
  // FNV-1a of "run/session" seeds mt19937_64, whose output the standard
  // fixes, and the Fisher-Yates swaps are our own (std::shuffle's are the
  // library's): the same run and session give the same order on any build.
  const std::string key = run_id + "/" + std::to_string(session);
  std::uint64_t seed = 1469598103934665603ull;
  for (const unsigned char c : key) {
    seed ^= c;
    seed *= 1099511628211ull;
  }
  std::mt19937_64 generator(seed);
  for (std::size_t i = count - 1; i > 0; --i) {
    std::swap(indices[i], indices[generator() % (i + 1)]);
  }
  return indices;
}

std::vector<std::size_t> round_order(int round, std::size_t count) {
  if (count == 0) return {};
  // Williams's first row is 0, 1, n-1, 2, n-2, ...; row r adds r to every
  // entry (mod n); for an odd n the reversed rows complete the balance. The
  // entries are then renamed by their place in the first row, which keeps
  // the balance and makes the first row the listed order.
  const long n = static_cast<long>(count);
  std::vector<long> first(count);
  std::vector<std::size_t> place(count);
  for (long j = 0; j < n; ++j) {
    first[j] = j % 2 == 1 ? (j + 1) / 2 : (n - j / 2) % n;
    place[first[j]] = static_cast<std::size_t>(j);
  }
  const long rows = n % 2 == 0 ? n : 2 * n;
  const long row = ((round % rows) + rows) % rows;
  std::vector<std::size_t> order(count);
  for (long j = 0; j < n; ++j) order[j] = place[(first[j] + row) % n];
  if (row >= n) std::reverse(order.begin(), order.end());
  return order;
}

bool sleep_unless_interrupted(std::chrono::milliseconds duration) {
  // Short slices: a signal between the check and the sleep costs at most one.
  const auto until = std::chrono::steady_clock::now() + duration;
  while (!interrupted()) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(200)));
  }
  return false;
}

void declare_sut_class(nlohmann::json& fingerprint, const std::string& declared) {
  if (declared.empty()) return;
  const nlohmann::json* derived = sysinfo::FingerprintView(fingerprint).member(fingerprint_key::kSutClass);
  fingerprint[fingerprint_key::kSutClassDerived] = derived ? *derived : nlohmann::json();
  fingerprint[fingerprint_key::kSutClass] = declared;
}

MachineLoad machine_load() {
  MachineLoad load;
  std::ifstream in("/proc/loadavg");
  in >> load.load1;
  load.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (load.cpus < 1) load.cpus = 1;
  return load;
}

std::string check_machine_load(bool strict) {
  const MachineLoad load = machine_load();
  if (!load.busy()) return "";
  const std::string warning = fmt::format("machine busy: 1-minute load average {:.2f} on {} CPUs", load.load1, load.cpus);
  if (strict) throw RunError(warning + "; --strict refuses to start");
  return warning;
}

std::vector<plan::SwprofileSpec> select_swprofiles(const plan::Plan& plan, const ExecOptions& options) {
  std::vector<plan::SwprofileSpec> selected;
  if (plan.swprofiles.empty()) {
    if (options.swprofiles.size() != 1) {
      throw InputError("plan " + plan.path + " names no swprofiles: expected --swprofile NAME");
    }
    plan::SwprofileSpec adhoc;
    adhoc.name = options.swprofiles.front();
    selected.push_back(adhoc);
  } else if (options.swprofiles.empty()) {
    selected = plan.swprofiles;
  } else {
    for (const auto& name : options.swprofiles) {
      bool found = false;
      for (const auto& spec : plan.swprofiles) {
        if (spec.name == name) {
          selected.push_back(spec);
          found = true;
        }
      }
      if (!found) {
        std::string known;
        for (const auto& spec : plan.swprofiles) known += (known.empty() ? "" : ", ") + spec.name;
        throw InputError("--swprofile " + name + ": plan " + plan.path + " has no such swprofile (known: " + known + ")");
      }
    }
  }
  for (const auto& spec : selected) {
    if (!spec.wrapper.empty() && plan.sut && !plan::sut_method(plan).has(Capability::Wrapper)) {
      throw InputError(fmt::format(
          "{}:{}: swprofile {}: wrapper: expected a {} SUT; a {} SUT's guest has only kbench's own initramfs",
          plan.path, spec.line, spec.name,
          spoken_list(sut::MethodRegistry::instance().names_with(Capability::Wrapper)), plan.sut->method));
    }
  }
  if (plan_is_local(plan) && !boots_this_machine(plan)) {
    const auto running = running_cmdline_words();
    for (const auto& spec : selected) {
      for (const auto& word : spec.cmdline) {
        if (!running.count(word)) {
          throw InputError(fmt::format(
              "{}:{}: swprofile {} needs '{}' on the kernel command line, but this boot's /proc/cmdline lacks it; "
              "boot with it, or run only the matching swprofile with --swprofile",
              plan.path, spec.line, spec.name, word));
        }
      }
      if (spec.build) {
        throw InputError(fmt::format("{}:{}: swprofile {} builds a kernel; a local SUT measures the running kernel "
                                     "(use sut.connection.method qemu, or ssh with sut.boot, to boot it)",
                                     plan.path, spec.line, spec.name));
      }
      if (!spec.kernel.empty()) {
        throw InputError(fmt::format("{}:{}: swprofile {} names a kernel image; a local SUT measures the running "
                                     "kernel (use sut.connection.method qemu to boot images)",
                                     plan.path, spec.line, spec.name));
      }
      validate_sysctls(spec.sysctl);
    }
  } else if (plan.sut->boot) {
    if (boots_this_machine(plan)) check_local_boot_plan(plan, selected);
    // The kernel files are read before anything is connected or stored.
    for (const auto& spec : selected) {
      for (const auto* file : {&spec.kernel.deb, &spec.kernel.image, &spec.kernel.modules, &spec.kernel.config}) {
        if (!file->empty() && (access(file->c_str(), R_OK) != 0 || !std::filesystem::is_regular_file(*file))) {
          throw InputError(fmt::format("{}:{}: swprofile {}: kernel file {}: expected a readable file", plan.path,
                                       spec.line, spec.name, *file));
        }
      }
    }
  } else {
    for (const auto& spec : selected) {
      // A kernel or sysctls on an ssh SUT need a boot per session: the boot
      // installs the kernel, and the next boot drops the sysctls.
      if (!spec.sysctl.empty() && plan::sut_method(plan).has(Capability::Sysctls)) {
        throw InputError(fmt::format("{}:{}: swprofile {}: sysctl settings on an {} SUT need sut.boot (every "
                                     "session a fresh boot that the settings are applied to)",
                                     plan.path, spec.line, spec.name, plan.sut->method));
      }
      if (!spec.sysctl.empty()) {
        throw InputError(fmt::format("{}:{}: swprofile {}: sysctl settings are not applied inside {} SUTs",
                                     plan.path, spec.line, spec.name, plan.sut->method));
      }
      if (!plan::sut_method(plan).has(Capability::BootsKernel) && (!spec.kernel.empty() || spec.build)) {
        throw InputError(fmt::format("{}:{}: swprofile {} names a kernel; an {} SUT installs and boots it only with "
                                     "sut.boot (method kexec or reboot)",
                                     plan.path, spec.line, spec.name, plan.sut->method));
      }
    }
  }
  return selected;
}

std::vector<BenchmarkRun> resolve_benchmarks(const plan::Plan& plan, const Catalogue& catalogue) {
  std::vector<BenchmarkRun> runs;
  for (const auto& entry : plan.benchmarks) {
    const auto it = catalogue.find(entry.name);
    if (!it) {
      throw InputError(fmt::format("{}:{}: benchmark '{}' is not in kbench-agent's catalogue (known: {})",
                                   entry.file.empty() ? plan.path : entry.file, entry.line, entry.name,
                                   catalogue.known_names()));
    }
    const auto settings = plan.settings_for(entry);
    try {
      runs.push_back({entry.name, it->effective_params(settings.size, entry.params), settings, it->result_classes});
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}:{}: params: {}", entry.file.empty() ? plan.path : entry.file, entry.line, e.what()));
    }
  }
  return runs;
}

ExecResult execute_plan(const plan::Plan& plan, const std::vector<BenchmarkRun>& benchmarks,
                        const ConnectionFor& connection_for, store::ResultStore& store, const ExecOptions& options,
                        Progress& progress) {
  const auto profiles = select_swprofiles(plan, options);
  const nlohmann::json description = plan_description(benchmarks);
  const std::string identity = plan_identity(description);
  // A plan booting this machine keeps its run and the boot in flight in a
  // state file between its boots.
  const bool local_boots = boots_this_machine(plan);
  const std::string state_path = local_boots ? local_boot_state_path(options.plan_key) : "";
  std::optional<LocalBootState> local_state;
  if (local_boots) local_state = read_local_boot_state(state_path);
  const std::string run_id =
      choose_run_id(plan, profiles, description, identity, local_state, state_path, store, options, progress);

  if (const std::string warning = check_machine_load(options.strict); !warning.empty()) {
    progress.message("kbench: warning: " + warning + "; results will be noisier");
  }
  std::ostringstream restored;
  restore_journalled_sysctls(restored);
  if (!restored.str().empty()) progress.message(restored.str().substr(0, restored.str().size() - 1));

  int sessions = 1;
  for (const auto& run : benchmarks) sessions = std::max(sessions, run.settings.sessions);
  for (int s = 0; s < sessions; ++s) {
    for (std::size_t p = 0; p < profiles.size(); ++p) {
      for (const auto& run : benchmarks) {
        if (s < run.settings.sessions) progress.plan_step(run.name);
      }
    }
  }

  ExecResult result;
  // The kernels the sessions run in, when the plan boots them (session_boots.h).
  SessionBoots boots(plan, profiles, connection_for, store, options, progress, {run_id, identity},
                     std::move(local_state), state_path, sessions);
  boots.stage_all();
  result.sut_original = boots.sut_original();
  if (boots.judge_boot_in_flight(result)) return result;
  // Left (gone.<position> written) however this execution ends, so that the
  // other side never waits for this one.
  std::optional<PairBarrier> barrier;
  if (options.pairing && !options.resume) barrier.emplace(*options.pairing, progress);
  // What the other side may still do before it meets this one at a
  // session's start: its last benchmark, its boot, its fingerprint.
  std::chrono::seconds longest_benchmark{0};
  for (const auto& run : benchmarks) longest_benchmark = std::max(longest_benchmark, run.settings.timeout);
  const std::chrono::seconds boot_allowance = plan.sut && plan.sut->boot ? plan.sut->boot->timeout
                                                                        : std::chrono::seconds{0};
  // Sessions alternate between the swprofiles, so drift of the machine
  // falls on every side, in an order balanced for carry-over (round_order).
  for (int s = 0; s < sessions && !interrupted(); ++s) {
    if (s > 0 && options.session_gap.count() > 0) {
      progress.message(fmt::format("kbench: pausing {} before session round {} of {}",
                                   format_seconds(std::chrono::duration<double>(options.session_gap).count()), s + 1,
                                   sessions));
      if (!sleep_unless_interrupted(options.session_gap)) break;
    }
    // One order per round: every swprofile runs the benchmarks in the same
    // order within a round, so they stay paired.
    const auto order = session_order(run_id, s, benchmarks.size(), plan.order);
    nlohmann::json order_names = nlohmann::json::array();
    for (const std::size_t index : order) {
      if (s < benchmarks[index].settings.sessions) order_names.push_back(benchmarks[index].name);
    }
    const auto profile_order = round_order(options.first_round + s, profiles.size());
    for (std::size_t slot_index = 0; slot_index < profile_order.size(); ++slot_index) {
      const int slot = static_cast<int>(slot_index);
      const plan::SwprofileSpec& profile = profiles[profile_order[slot_index]];
      if (interrupted()) break;
      // Before the session's boot: the VM inherits the pinning.
      std::string pair_unit = options.pairing ? options.pairing->unit : "";
      if (!options.round_cpus.empty()) {
        const auto& cpus = options.round_cpus[static_cast<std::size_t>(options.first_round + s) %
                                              options.round_cpus.size()];
        pin_to_cpus(cpus);
        pair_unit = "cpus " + format_cpu_list(cpus);
      }
      sut::Connection& connection = connection_for(profile);
      SessionBoot boot = boots.boot_for(profile, s, result);
      if (boot.next == SessionBoot::Next::Skip) continue;
      if (boot.next == SessionBoot::Next::Stop) break;
      if (boot.next == SessionBoot::Next::BootPending) {
        result.boot_pending = true;
        return result;
      }
      if (options.resume) {
        if (auto done = completed_session(store, profile.name, options.plan_key, run_id, s)) {
          for (const std::size_t index : order) {
            const BenchmarkRun& run = benchmarks[index];
            if (s >= run.settings.sessions) continue;
            const auto outcome = store.outcome_of(done->session, {run.name, run.params});
            progress.step_started(fmt::format("{} session {} {}", profile.name, done->number, run.name), run.name,
                                  run.settings.repeats);
            progress.step_finished("already done" +
                                   (outcome ? " (" + std::string(store::to_string(outcome->status)) + ")" : ""));
          }
          result.sessions.push_back(std::move(*done));
          continue;
        }
      }
      connection.set_wrapper(profile.wrapper);
      // Not the run's id: a plan killed before its first session was stored
      // resumes as a new run, and its job may still be going.
      connection.set_run_label(fmt::format("{}\n{}\n{}\n{}", store.location(), options.plan_key, profile.name, s),
                               options.resume);
      nlohmann::json fingerprint;
      if (boots.boots_per_run()) {
        boot = boots.boot_by_fingerprint(connection, profile, s, fingerprint, result);
        if (boot.next == SessionBoot::Next::Skip) continue;
        if (boot.next == SessionBoot::Next::Stop) break;
      } else {
        fingerprint = fetch_fingerprint(connection);
      }
      if (plan.sut) declare_sut_class(fingerprint, plan.sut->sut_class);
      // Before the session is written: a --cpus the SUT lacks is bad input.
      check_cpus_on_sut(options.cpus, fingerprint, connection.describe());
      SessionSummary summary;
      summary.swprofile = profile.name;
      summary.sut = sut_from_fingerprint(fingerprint, options.sut_name.empty() && plan.sut ? plan.sut->name
                                                                                           : options.sut_name);
      std::optional<std::int64_t> resumed;
      if (options.resume) resumed = store.find_plan_session(profile.name, options.plan_key, run_id, s);
      if (resumed) {
        summary.session = *resumed;
      } else {
        describe_new_session(fingerprint, {plan, options, identity, description, run_id}, s, slot, pair_unit,
                             order_names, profile, boot.report);
        std::vector<store::BenchmarkKey> planned;
        for (const auto& run : benchmarks) {
          if (s < run.settings.sessions) planned.push_back({run.name, run.params});
        }
        summary.session =
            store.begin_session({summary.sut, profile.name, fingerprint, utc_now_iso8601(), planned, /*uid=*/""});
        if (boot.report) boots.record(*boot.report, s, summary.session);
      }
      const auto stored_session = store.session(summary.session);
      summary.number = stored_session ? stored_session->number() : 0;
      if (resumed) progress.message(fmt::format("resuming session {} of swprofile {}", summary.number, profile.name));
      SysctlGuard sysctls;
      if (!boots.deploys()) sysctls.apply(profile.sysctl);
      if (barrier) {
        barrier->meet(pair_point(s, slot, 0), longest_benchmark + boot_allowance + connection.start_allowance());
      }
      const bool ran_to_end =
          run_session_benchmarks(connection, store, summary, s, slot, order, benchmarks, resumed.has_value(),
                                 options.cpus, barrier ? &*barrier : nullptr, progress, result);
      sysctls.restore();
      if (ran_to_end) store.finish_session(summary.session, state_at_end(connection, plan::sut_method(plan)));
      result.sessions.push_back(std::move(summary));
    }
  }
  result.interrupted_by = interrupt_signal();
  boots.boot_back(result);
  return result;
}

}  // namespace kbench::runner
