#pragma once
// Executes a plan on one SUT: sessions x swprofiles x benchmarks, sysctls
// applied and restored, progress shown, resumable after a kill.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "deploy/deployer.h"
#include "plan/plan.h"
#include "runner/catalogue.h"
#include "runner/pairing.h"
#include "runner/progress.h"
#include "runner/session.h"
#include "store/result_store.h"
#include "sut/connection.h"

namespace kbench::runner {

struct ExecOptions {
  std::vector<std::string> swprofiles;  // only these of the plan's (empty: all)
  bool resume = false;                  // continue the plan's unfinished sessions
  std::string cpus;                     // --cpus LIST for every benchmark
  bool strict = false;                  // refuse to start on a busy machine
  std::string sut_name;                 // overrides the plan's sut.name
  // What --resume matches sessions by: the plan file's absolute path for
  // `plan exec`, "kbench run" for the implicit plan of `kbench run`.
  std::string plan_key;
  // A pause between one round of sessions (every swprofile once) and the
  // next, so the sessions sample the machine at different times (kbench
  // calibrate --spread). SIGINT/SIGTERM end it at once.
  std::chrono::milliseconds session_gap{0};
  // Progress off a terminal also announces each step as it starts (a fleet
  // worker's, read by the fleet's view).
  bool announce_steps = false;
  // A plan that boots the machine kbench runs on: the store's URL and the
  // command (absolute paths) that resumes the plan after each boot.
  std::string store_url;
  std::vector<std::string> resume_command;
  // The balanced swprofile order (round_order) of this execution's first
  // round: --until-decided's later rounds go on where the plan left off, and
  // the second SUT of a crossover one round ahead of the first (the other
  // order in every round).
  int first_round = 0;
  // One of the two workers of a crossover fleet (runner/pairing.h): its run
  // id is the pairing's, each session's measurement and each benchmark wait
  // for the other side, and each new session records its pair. Never on
  // --resume: what is resumed is measured alone.
  std::optional<Pairing> pairing;
  // A duet's CPU halves: before each session the execution pins itself (and
  // so the VM it starts) to round_cpus[(first_round + round) % size], which
  // is then the session's pair unit.
  std::vector<std::vector<int>> round_cpus;
  // sut.boot on a SUT kbench reaches over ssh, for a driver that runs one
  // execution after another on it (bisect): what the SUT ran before the
  // first, so that every execution boots its kernels with that kernel's
  // cmdline and knows what "back" means, not the kernel the execution before
  // left running; and whether this one ends by booting the SUT back into it.
  // A driver that says false boots it back once at its end (boot_sut_back):
  // a boot back between two executions would double their boots.
  std::optional<deploy::SutKernel> sut_original;
  bool boot_back = true;
};

struct SessionSummary {
  std::int64_t session = 0;  // the store's id
  int number = 0;            // 1-based within (SUT, swprofile): what users see
  std::string swprofile;
  store::Sut sut;
  std::vector<BenchmarkOutcome> outcomes;
};

struct ExecResult {
  std::vector<SessionSummary> sessions;
  int failed = 0;
  int failed_boots = 0;  // sut.boot: sessions whose kernel did not come up as asked
  int interrupted_by = 0;  // signal number when SIGINT/SIGTERM stopped the run
  // A plan booting the machine kbench runs on: a boot was started, and the
  // resume unit goes on with the plan after it.
  bool boot_pending = false;
  // sut.boot on an ssh SUT: what the SUT ran when the execution started (or
  // ExecOptions::sut_original), for the next execution of a driver.
  std::optional<deploy::SutKernel> sut_original;
};

// The checks that need no agent and no store: swprofile selection, cmdline
// requirements on a local SUT, sysctl names. Throws InputError.
std::vector<plan::SwprofileSpec> select_swprofiles(const plan::Plan& plan, const ExecOptions& options);

// Benchmark entries resolved against the catalogue (names, parameters).
// Throws InputError "<plan>:<line>: ..." for unknown names or parameters.
std::vector<BenchmarkRun> resolve_benchmarks(const plan::Plan& plan, const Catalogue& catalogue);

// The connection that measures a swprofile: one for every swprofile on a
// local or ssh SUT, one per swprofile on qemu (it boots that kernel).
using ConnectionFor = std::function<sut::Connection&(const plan::SwprofileSpec&)>;

ExecResult execute_plan(const plan::Plan& plan, const std::vector<BenchmarkRun>& benchmarks,
                        const ConnectionFor& connection_for, store::ResultStore& store, const ExecOptions& options,
                        Progress& progress);

// What a plan runs, as stored with each session: per benchmark its name,
// effective parameters, warmups, repeats, sessions and timeout. Comments
// and layout of the plan file are not part of it.
nlohmann::json plan_description(const std::vector<BenchmarkRun>& benchmarks);
// FNV-1a of the description's text, hex: --resume refuses when it differs.
std::string plan_identity(const nlohmann::json& description);
// "benchmark syscall/getpid repeats 5 -> 7", "benchmark sched/yield added", ...
std::vector<std::string> plan_changes(const nlohmann::json& before, const nlohmann::json& after);

// The order in which session `session` (0-based) of run `run_id` runs the
// plan's `count` benchmarks, as indices into the plan's list: the listed
// order, or a shuffle seeded by the run and the session alone, so a resumed
// run finds every session's order again (recorded as plan.order in the
// session's fingerprint).
std::vector<std::size_t> session_order(const std::string& run_id, int session, std::size_t count, plan::Order order);

// The order in which round `round` (0-based) visits `count` swprofiles, as
// indices into the selected list: the rows of a Williams design, in turn
// (count rows for an even count, 2 x count for an odd one). Within every
// full cycle of rows each swprofile comes first, last and right after each
// other swprofile equally often, so what one session leaves behind (a warm
// or a disturbed machine, a cost that outlasts its session) falls on every
// side alike instead of always on the one that follows it. Round 0 is the
// listed order. Two swprofiles: a b, b a, a b, ...
std::vector<std::size_t> round_order(int round, std::size_t count);

// The plan's declared SUT class (sut.class, suts[].class) replaces the one
// the agent derived, which stays as sut_class_derived; `declared` empty:
// the fingerprint is left as the agent wrote it.
void declare_sut_class(nlohmann::json& fingerprint, const std::string& declared);

// Sleeps `duration` unless SIGINT/SIGTERM arrives (interrupt.h); returns
// false when interrupted.
bool sleep_unless_interrupted(std::chrono::milliseconds duration);

// 1-minute load average and CPU count, for the busy-machine check.
struct MachineLoad {
  double load1 = 0;
  int cpus = 1;
  bool busy() const { return load1 >= 0.5 * cpus; }
};
MachineLoad machine_load();
// On a busy machine: with `strict`, throws RunError ("--strict refuses to
// start"), which callers do before they open the store, so nothing is
// written; else returns the warning to show. Empty when the machine is idle.
std::string check_machine_load(bool strict);

}  // namespace kbench::runner
