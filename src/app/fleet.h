#pragma once
// kbench plan exec with `suts:`: every SUT measured at the same time by a
// worker of its own, one combined progress view, a summary per SUT.
//
// Each worker is a child process, `kbench plan exec PLAN --sut NAME` (with a
// hidden --fleet-worker), not a thread: the executor keeps per-process state
// (the interrupt handler's one agent to stop, the sysctl journal, the exit
// status), a worker that crashes or is killed takes only its SUT down, and
// each worker has its own store connection as a separate controller would.
#include <string>
#include <vector>

#include "plan/plan.h"
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

// Every check that needs no SUT and no store, for each selected SUT (the
// swprofiles' requirements, connection parameters); throws InputError.
void check_fleet(const plan::Plan& plan, const std::vector<plan::SutSpec>& suts, const FleetOptions& options);

// Runs the workers, shows their progress, prints each SUT's tables and the
// summary. Returns the exit status: kExitFailure when a SUT failed, 128+N on
// signal N, else kExitOk. `store`: already opened (created) by the caller,
// for the summary.
int execute_fleet(const plan::Plan& plan, const std::vector<plan::SutSpec>& suts,
                   const std::vector<runner::BenchmarkRun>& runs, const FleetOptions& options,
                   store::ResultStore& store);

}  // namespace kbench::app
