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

#include "common/errors.h"
#include "common/utc_time.h"
#include "deploy/deployer.h"
#include "runner/interrupt.h"
#include "runner/local_boot.h"
#include "runner/sysctl.h"
#include "sysinfo/fingerprint_view.h"

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
void describe_new_session(nlohmann::json& fingerprint, const PlanContext& context, int round,
                          const nlohmann::json& order_names, const plan::SwprofileSpec& profile,
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
  fingerprint[fingerprint_key::kSysctl] = profile.sysctl;
  // What the swprofile sets on purpose, so compare does not list it as an
  // undeclared environment difference (analysis/environment.h).
  nlohmann::json& declared = fingerprint[fingerprint_key::kSwprofile];
  declared = {{in_swprofile::kKernel, profile.kernel.describe()}, {in_swprofile::kCmdline, profile.cmdline}};
  if (!profile.wrapper.empty()) declared[in_swprofile::kWrapper] = profile.wrapper;
  // A kernel kbench built: how (commit, config hash, compiler version, ...).
  if (!profile.build_info.is_null()) declared[in_swprofile::kBuild] = profile.build_info;
  if (boot) fingerprint[fingerprint_key::kBoot] = boot->to_json();
}

// Runs session `round`'s benchmarks in `order` (a resumed session only those
// without an outcome); false when an interrupt stopped it first.
bool run_session_benchmarks(sut::Connection& connection, store::ResultStore& store, SessionSummary& summary,
                            int round, const std::vector<std::size_t>& order,
                            const std::vector<BenchmarkRun>& benchmarks, bool resumed, const std::string& cpus,
                            Progress& progress, ExecResult& result) {
  for (const std::size_t index : order) {
    const BenchmarkRun& run = benchmarks[index];
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

// "boot 3/8: patched by kexec: ready after 41s, runs 6.12.1 (verified)".
// `this_machine`: the boot's seconds run to the resumed run, not to ssh.
std::string boot_line(const deploy::BootReport& boot, int planned, bool restoring = false, bool this_machine = false) {
  const std::string of = restoring ? "back" : fmt::format("{}/{}", boot.number, planned);
  if (boot.ok) {
    return fmt::format("kbench: boot {}: {} by {}: {} after {}, runs {} (verified: uname -r, uname -v, "
                       "/proc/cmdline)",
                       of, boot.swprofile, boot.method, this_machine ? "resumed" : "ssh ready",
                       format_seconds(boot.seconds), boot.release);
  }
  std::string line = fmt::format("kbench: boot {}: {} by {} FAILED: {}", of, boot.swprofile, boot.method, boot.reason);
  if (!boot.console_tail.empty()) line += "\nconsole:\n" + boot.console_tail;
  return line;
}

// On --resume with sut.boot: true when session `s` of `swprofile` needs no
// boot (it ran to its end, or its boot failed before and is not retried);
// an unfinished session is deleted, so that it is measured again in one
// fresh boot rather than across two.
std::optional<bool> booted_before(store::ResultStore& store, const std::vector<store::BootRecord>& earlier,
                                  const std::string& swprofile, const std::string& plan_key, const std::string& run,
                                  int s, Progress& progress) {
  for (const auto& boot : earlier) {
    if (boot.swprofile == swprofile && boot.plan_session == s && !boot.ok) {
      progress.message(fmt::format("kbench: session {} of {} failed to boot before ({}); not retried", s + 1, swprofile,
                                   boot.reason));
      return true;
    }
  }
  const auto session = store.find_plan_session(swprofile, plan_key, run, s);
  if (!session) return std::nullopt;
  const auto stored = store.session(*session);
  if (stored && stored->complete()) return true;
  store.delete_session(*session);
  progress.message(fmt::format("kbench: session {} of {} was interrupted; measuring it again in a fresh boot", s + 1,
                               swprofile));
  return false;
}

// With a method that boots the swprofile's kernel for every agent run (a
// VM, a LAVA job), asking the agent for the fingerprint is the boot: the
// report is ok, with the release the fingerprint names, when the agent
// answered, and says why not (the console's tail after the first line of
// the error) when it did not.
deploy::BootReport boot_for_fingerprint(sut::Connection& connection, const sut::Method& method,
                                        const std::string& swprofile, int number, nlohmann::json& fingerprint) {
  deploy::BootReport boot;
  boot.number = number;
  boot.swprofile = swprofile;
  boot.method = method.name;
  boot.started_at = utc_now_iso8601();
  const auto started = std::chrono::steady_clock::now();
  try {
    fingerprint = fetch_fingerprint(connection);
  } catch (const InfrastructureError&) {
    throw;  // the lab's failure, not the boot's: the caller's to report
  } catch (const RunError& error) {
    const std::string text = error.what();
    const auto newline = text.find('\n');
    boot.reason = text.substr(0, newline);
    if (newline != std::string::npos) boot.console_tail = text.substr(newline + 1);
  }
  boot.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!boot.reason.empty()) return boot;
  boot.ok = true;
  boot.release = sysinfo::FingerprintView(fingerprint).kernel_release().value_or("");
  return boot;
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
  // An ssh SUT with sut.boot: every session is a fresh boot into its
  // swprofile's kernel, staged once before the first.
  std::optional<deploy::Deployer> deployer;
  std::vector<store::BootRecord> earlier_boots;
  if (plan.sut && plan.sut->boot) {
    sut::RemoteShell* shell = sut::remote_shell(connection_for(profiles.front()));
    if (!shell) {
      throw InputError("sut.boot: expected sut.connection.method " +
                       spoken_list(sut::MethodRegistry::instance().names_with(Capability::Deploy)));
    }
    deployer.emplace(*shell, *plan.sut->boot, [&](const std::string& line) { progress.message(line); },
                     sleep_unless_interrupted, local_boots);
    deployer->probe();
    if (local_state) {
      deployer->adopt_original(local_state->original);
      deployer->count_boots(local_state->boots);
    }
    for (const auto& profile : profiles) deployer->stage(profile);
    if (options.resume) earlier_boots = store.list_boots(options.plan_key, run_id);
  }
  // A method that boots the swprofile's kernel for every agent run (a VM, a
  // LAVA job): a kernel that does not come up fails the session's first
  // run, its fingerprint. That is the kernel's failure, not the plan's: it
  // is recorded as a failed boot, and the plan goes on without it.
  const sut::Method& method = plan::sut_method(plan);
  const bool boots_per_run = !deployer && method.has(Capability::BootsKernel);
  if (boots_per_run && options.resume) earlier_boots = store.list_boots(options.plan_key, run_id);
  int vm_boots = static_cast<int>(earlier_boots.size());
  // A kernel that failed to boot is not booted again in this run: a panic
  // repeats, and on a lab machine each try can cost a power cycle. Its
  // later sessions are counted as not measured. Keyed by swprofile, with
  // the session and reason of the failure.
  std::map<std::string, std::string> failed_kernels;
  auto remember_failed_kernel = [&](const std::string& swprofile, int plan_session, const std::string& reason) {
    failed_kernels.emplace(swprofile, fmt::format("session {}: {}", plan_session + 1, reason));
  };
  for (const auto& boot : earlier_boots) {
    if (!boot.ok) remember_failed_kernel(boot.swprofile, boot.plan_session, boot.reason);
  }
  const int planned_boots = deployer ? sessions * static_cast<int>(profiles.size()) : 0;
  const std::string boot_sut_name = plan.sut && !plan.sut->name.empty() ? plan.sut->name
                                    : deployer ? sut::remote_shell(connection_for(profiles.front()))->describe_target()
                                    : boots_per_run ? connection_for(profiles.front()).describe()
                                                    : "";
  auto boot_record = [&](const deploy::BootReport& boot, int plan_session) {
    store::BootRecord record;
    record.sut = boot_sut_name;
    record.swprofile = boot.swprofile;
    record.plan_key = options.plan_key;
    record.run = run_id;
    record.plan_session = plan_session;
    record.number = boot.number;
    record.method = boot.method;
    record.started_at = boot.started_at;
    record.seconds = boot.seconds;
    record.ok = boot.ok;
    record.power_cycled = boot.power_cycled;
    record.release = boot.release;
    record.reason = boot.reason;
    record.console_tail = boot.console_tail;
    return record;
  };
  // This machine: a boot ends this process. The state and the resume unit
  // are written before the first boot, the boot in flight before each.
  auto save_state = [&] { write_local_boot_state(state_path, *local_state); };
  auto launch = [&](const plan::SwprofileSpec* profile, int plan_session) -> std::optional<deploy::BootReport> {
    if (!local_state) {
      local_state.emplace();
      local_state->plan = plan.path;
      local_state->plan_key = options.plan_key;
      local_state->store = options.store_url;
      local_state->run = run_id;
      local_state->identity = identity;
      local_state->unit = resume_unit_name(options.plan_key);
      local_state->log = local_boot_log_path(options.plan_key);
      local_state->original = deployer->original();
      local_state->original.tools.clear();
      save_state();
      ResumeUnit unit{local_state->unit, plan.path, options.resume_command,
                      {{"KBENCH_STATE_DIR", kbench_state_dir()}}, local_state->log};
      if (const char* agent = std::getenv("KBENCH_AGENT"); agent && *agent) unit.environment["KBENCH_AGENT"] = agent;
      install_resume_unit(unit, kSystemdUnitDir);
      progress.message(fmt::format("kbench: installed {}: it resumes the plan after each boot of this machine (log: "
                                   "{})",
                                   local_state->unit, local_state->log));
    }
    // A safety net: a boot that repeats (a start reported failed that
    // happened all the same, a kernel that never gets judged) must not
    // reboot the machine forever. Past twice the plan's boots, the unit
    // goes and the machine stays up.
    if (local_state->boots > 2 * planned_boots + 1) {
      const std::string warning = remove_resume_unit(local_state->unit, kSystemdUnitDir);
      deploy::BootReport refused;
      refused.number = local_state->boots + 1;
      refused.swprofile = profile ? profile->name : "(the SUT's own kernel)";
      refused.method = plan.sut->boot->method;
      refused.started_at = utc_now_iso8601();
      refused.reason = fmt::format("not started: the plan has started {} boots, more than twice the {} it plans; {} "
                                   "removed so the machine stops booting{}",
                                   local_state->boots, planned_boots, local_state->unit,
                                   warning.empty() ? "" : " (" + warning + ")");
      return refused;
    }
    const auto keep = [&](const deploy::LaunchedBoot& boot) {
      local_state->pending = PendingBoot{boot, plan_session};
      local_state->boots = boot.number;
      save_state();
    };
    auto failed = profile ? deployer->launch(*profile, keep) : deployer->launch_restore(keep);
    if (failed && local_state->pending && interrupted()) {
      // Cut short by the shutdown it began (it stops the resume unit, or the
      // ssh session, with everything in it), not refused: the boot is under
      // way, and the run after it judges it.
      progress.message("kbench: the start of the boot was cut short by the shutdown it began; the run after the boot "
                       "judges it");
    } else if (failed) {
      local_state->pending.reset();
      save_state();
      return failed;
    }
    progress.message(fmt::format("kbench: boot {}: {} by {}: this machine boots now; {} resumes the plan after the "
                                 "boot (log: {}); `kbench plan status {}` shows where it stands",
                                 plan_session < 0 ? std::string("back")
                                                  : fmt::format("{}/{}", local_state->boots, planned_boots),
                                 local_state->pending->boot.swprofile, local_state->pending->boot.method,
                                 local_state->unit, local_state->log, plan.path));
    return std::nullopt;
  };
  // The plan is done on this machine: its own kernel runs again, and what
  // kbench installed to carry the plan across boots goes.
  auto finish_local = [&] {
    deployer->cleanup();
    if (!local_state) return;
    if (const std::string warning = remove_resume_unit(local_state->unit, kSystemdUnitDir); !warning.empty()) {
      progress.message("kbench: warning: " + warning);
    }
    write_local_boot_done(local_boot_done_path(options.plan_key), local_state->store, local_state->run);
    std::error_code ec;
    std::filesystem::remove(state_path, ec);
    progress.message(fmt::format("kbench: plan done: this machine runs its own kernel {}; {} and {} removed (its log "
                                 "stays: {})",
                                 deployer->original().release, local_state->unit, state_path, local_state->log));
  };
  // The boot the previous process started, judged now that it is over.
  std::optional<deploy::BootReport> just_booted;
  int just_booted_session = -1;
  if (local_state && local_state->pending) {
    const PendingBoot pending = *local_state->pending;
    deploy::BootReport report = deployer->finish(pending.boot);
    local_state->pending.reset();
    save_state();
    if (pending.plan_session < 0) {
      progress.message(boot_line(report, planned_boots, /*restoring=*/true, /*this_machine=*/true));
      store.record_boot(boot_record(report, -1));
      if (!report.ok) {
        progress.message("kbench: warning: this machine is not back on its own kernel: " + report.reason);
        ++result.failed;
      }
      finish_local();
      return result;
    }
    if (report.ok) {
      just_booted = report;
      just_booted_session = pending.plan_session;
    } else {
      progress.message(boot_line(report, planned_boots, false, /*this_machine=*/true));
      earlier_boots.push_back(boot_record(report, pending.plan_session));
      store.record_boot(earlier_boots.back());
      remember_failed_kernel(report.swprofile, pending.plan_session, report.reason);
      ++result.failed;
      ++result.failed_boots;
    }
  }
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
    for (const std::size_t profile_index : round_order(options.first_round + s, profiles.size())) {
      const plan::SwprofileSpec& profile = profiles[profile_index];
      if (interrupted()) break;
      sut::Connection& connection = connection_for(profile);
      std::optional<deploy::BootReport> boot;
      if (deployer) {
        if (const auto done = booted_before(store, earlier_boots, profile.name, options.plan_key, run_id, s, progress)) {
          if (*done) continue;
        }
      }
      if (deployer || boots_per_run) {
        if (const auto failed = failed_kernels.find(profile.name); failed != failed_kernels.end()) {
          progress.message(fmt::format("kbench: session {} of {} not measured: its kernel failed to boot in {}; not "
                                       "booted again in this run",
                                       s + 1, profile.name, failed->second));
          ++result.failed;
          ++result.failed_boots;
          continue;
        }
      }
      if (deployer) {
        if (!local_boots) {
          boot = deployer->boot(profile);
        } else if (just_booted && just_booted->swprofile == profile.name && just_booted_session == s) {
          boot = std::move(just_booted);
          just_booted.reset();
        } else if (auto failed = launch(&profile, s)) {
          boot = std::move(failed);
        } else {
          result.boot_pending = true;
          return result;
        }
        if (boot->ok) {
          if (const std::string failed = deployer->apply_sysctls(profile.sysctl); !failed.empty()) {
            boot->ok = false;
            boot->reason = failed;
          }
        }
        progress.message(boot_line(*boot, planned_boots, false, local_boots));
        if (!boot->ok) {
          // On this machine a failed start is recorded also when a shutdown
          // interrupts this run: the next run must not start it again.
          if (interrupted() && !local_boots) break;
          // Nothing is recorded under the swprofile: only the boot, with why.
          store.record_boot(boot_record(*boot, s));
          remember_failed_kernel(profile.name, s, boot->reason);
          ++result.failed;
          ++result.failed_boots;
          continue;
        }
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
      nlohmann::json fingerprint;
      if (boots_per_run) {
        deploy::BootReport vm_boot;
        try {
          vm_boot = boot_for_fingerprint(connection, method, profile.name, ++vm_boots, fingerprint);
        } catch (const InfrastructureError& error) {
          // The lab failed the session, not the kernel: no failed boot, and
          // the kernel's next session boots it again.
          if (interrupted()) break;
          progress.message(fmt::format("kbench: session {} of {} not measured: the lab failed its run (an "
                                       "infrastructure error, not counted against the kernel: its next session "
                                       "boots it again): {}",
                                       s + 1, profile.name, error.what()));
          ++result.failed;
          continue;
        }
        if (!vm_boot.ok) {
          if (interrupted()) break;
          progress.message(fmt::format("kbench: session {} of {}: its kernel did not come up by {}: {}", s + 1,
                                       profile.name, method.name, vm_boot.reason));
          store.record_boot(boot_record(vm_boot, s));
          remember_failed_kernel(profile.name, s, vm_boot.reason);
          ++result.failed;
          ++result.failed_boots;
          continue;
        }
        boot = std::move(vm_boot);
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
        describe_new_session(fingerprint, {plan, options, identity, description, run_id}, s, order_names, profile,
                             boot);
        std::vector<store::BenchmarkKey> planned;
        for (const auto& run : benchmarks) {
          if (s < run.settings.sessions) planned.push_back({run.name, run.params});
        }
        summary.session =
            store.begin_session({summary.sut, profile.name, fingerprint, utc_now_iso8601(), planned, /*uid=*/""});
        if (boot) {
          auto record = boot_record(*boot, s);
          record.session = summary.session;
          store.record_boot(record);
        }
      }
      const auto stored_session = store.session(summary.session);
      summary.number = stored_session ? stored_session->number() : 0;
      if (resumed) progress.message(fmt::format("resuming session {} of swprofile {}", summary.number, profile.name));
      SysctlGuard sysctls;
      if (!deployer) sysctls.apply(profile.sysctl);
      const bool ran_to_end =
          run_session_benchmarks(connection, store, summary, s, order, benchmarks, resumed.has_value(), options.cpus,
                                 progress, result);
      sysctls.restore();
      if (ran_to_end) store.finish_session(summary.session, state_at_end(connection, plan::sut_method(plan)));
      result.sessions.push_back(std::move(summary));
    }
  }
  result.interrupted_by = interrupt_signal();
  if (local_boots && !result.interrupted_by) {
    // Back into the machine's own kernel, unless it runs it already (a
    // failed last boot came back on it).
    if (!deployer->runs_original()) {
      progress.message(fmt::format("kbench: booting this machine back into {}", deployer->original().release));
      const auto failed = launch(nullptr, -1);
      if (!failed) {
        result.boot_pending = true;
        return result;
      }
      progress.message(boot_line(*failed, planned_boots, /*restoring=*/true, /*this_machine=*/true));
      store.record_boot(boot_record(*failed, -1));
      progress.message("kbench: warning: this machine is not back on its own kernel: " + failed->reason);
      ++result.failed;
    }
    finish_local();
  } else if (local_boots) {
    progress.message(fmt::format("kbench: interrupted: `kbench plan exec {} --resume` continues the plan{}", plan.path,
                                 local_state ? "; its resume unit continues it at the next boot" : ""));
  } else if (deployer && !result.interrupted_by && deployer->boots() > 0) {
    // A SUT never booted by this execution (a --resume with nothing left)
    // still runs what it ran before.
    progress.message(fmt::format("kbench: booting {} back into {}", boot_sut_name, deployer->original().release));
    const auto back = deployer->restore();
    progress.message(boot_line(back, planned_boots, /*restoring=*/true));
    store.record_boot(boot_record(back, -1));
    if (!back.ok) {
      progress.message("kbench: warning: the SUT is not back on its own kernel: " + back.reason);
      ++result.failed;
    }
  } else if (deployer) {
    progress.message(fmt::format("kbench: interrupted: {} still runs the kernel of the last boot; `plan exec --resume` "
                                 "continues the plan and boots it back into {} at its end",
                                 boot_sut_name, deployer->original().release));
  }
  return result;
}

}  // namespace kbench::runner
