#pragma once
// Where a plan stands, for `kbench plan status`: sessions measured per
// swprofile, its boots, and for a plan booting the machine kbench runs on
// the boot in flight, the resume unit and its log. Such a plan outlives the
// terminal it was started from; this is how its user finds it again.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "runner/local_boot.h"
#include "store/result_store.h"

namespace kbench::runner {

struct SwprofileProgress {
  std::string name;
  int done = 0;     // sessions measured to their end
  int planned = 0;
  std::string kernel_failed;  // why its kernel is not booted again in the run, "" when it is not
};

struct PlanStatus {
  std::string plan;
  std::string store;
  std::string run;  // "" when the store has no run of the plan
  std::vector<SwprofileProgress> swprofiles;
  std::vector<store::BootRecord> boots;
  bool boots_this_machine = false;
  std::optional<LocalBootState> state;  // a plan between boots of this machine
  std::string unit;
  std::string unit_state;  // resume_unit_state()
  std::string log;
  std::int64_t now_epoch = 0;  // for the age of the boot in flight
};

// From the store and, for a plan booting this machine, its state file and
// systemd (`ask_systemd` false: the unit's state is left empty).
PlanStatus gather_plan_status(const plan::Plan& plan, const std::string& plan_key, store::ResultStore* store,
                              const std::string& store_url, bool ask_systemd);

// The status word of the plan: "finished", "waiting for boot 3/6 ...", ...
std::string plan_status_word(const PlanStatus& status);
// The whole report, one fact a line.
std::string plan_status_text(const PlanStatus& status);

}  // namespace kbench::runner
