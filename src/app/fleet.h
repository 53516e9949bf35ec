#pragma once
// kbench plan exec with `suts:`: every SUT measured at the same time by a
// worker of its own, one combined progress view, a summary per SUT.
//
// Each worker is a child process, `kbench plan exec PLAN --sut NAME` (with a
// hidden --fleet-worker), not a thread: the executor keeps per-process state
// (the interrupt handler's one agent to stop, the sysctl journal, the exit
// status), a worker that crashes or is killed takes only its SUT down, and
// each worker has its own store connection as a separate controller would.
#include <functional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "process/process.h"
#include "runner/session.h"
#include "store/result_store.h"

namespace kbench::app {

struct FleetOptions {
  std::string plan_path;
  std::string plan_key;  // the plan file's absolute path
  std::vector<std::string> swprofiles;
  bool resume = false;
  std::string cpus;
  bool strict = false;
  std::string store_url;
};

// The SUTs of `plan.suts` named by --sut (all when `names` is empty), in the
// plan's order; a name is also a shell glob unless `exact` (a worker's own
// SUT). Throws InputError for a name or glob matching no SUT of the plan, or
// for --sut on a plan without `suts:`.
std::vector<plan::SutSpec> select_suts(const plan::Plan& plan, const std::vector<std::string>& names,
                                       bool exact = false);

// What --resume matches one SUT's sessions by: the plan's key and the SUT,
// so two SUTs of one plan never continue each other's sessions.
std::string fleet_plan_key(const std::string& plan_key, const std::string& sut_name);

// A duet (plan design: duet) runs its one SUT as two workers, each a VM on
// one half of this machine's CPUs: the two as the fleet lists them, the SUT
// named "<name>#<half>" (what the view, the summary and --resume's plan key
// call each; the sessions keep the SUT's own name). Each is started with a
// hidden --duet-half instead of --sut.
std::vector<plan::SutSpec> duet_workers(const plan::Plan& plan);
std::string duet_worker_name(const std::string& sut_name, int half);

// Every check that needs no SUT and no store, for each selected SUT (the
// swprofiles' requirements, connection parameters); throws InputError.
void check_fleet(const plan::Plan& plan, const std::vector<plan::SutSpec>& suts, const FleetOptions& options);

// Starts the worker of `sut`, whose command line is `argv` (this kbench's
// plan exec with --fleet-worker --sut NAME and the parent's options); the
// fleet reads the Child's stdout and stderr to their end and waits for it.
using StartWorker = std::function<process::Child(const plan::SutSpec& sut, const std::vector<std::string>& argv)>;

// Runs argv as a worker: a process group of its own, SIGTERM'd when this
// process dies (a worker then stops as on an interrupt).
process::Child spawn_worker(const plan::SutSpec& sut, const std::vector<std::string>& argv);

// Runs the workers, shows their progress, prints each SUT's tables and the
// summary. Returns the exit status: kExitFailure when a SUT failed, 128+N on
// signal N, else kExitOk. `store`: already opened (created) by the caller,
// for the summary. `start_worker`: spawn_worker but in tests, which run a
// worker of their own in its place.
int execute_fleet(const plan::Plan& plan, const std::vector<plan::SutSpec>& suts,
                   const std::vector<runner::BenchmarkRun>& runs, const FleetOptions& options,
                   store::ResultStore& store, const StartWorker& start_worker = spawn_worker);

}  // namespace kbench::app
