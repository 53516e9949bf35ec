#pragma once
// A plan that boots the machine kbench runs on (sut.connection.method local
// with sut.boot). Each boot ends the kbench process that started it, so the
// plan is carried across boots by two things kept on the machine: a state
// file (the plan, its run, the machine's own kernel, the boot in flight) and
// a systemd unit that runs `kbench plan exec PLAN --resume` after each boot.
// Both are removed by the run that finds the machine back on its own kernel.
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "deploy/deployer.h"

namespace kbench::runner {

// The boot in flight and the plan session it is for; -1: the boot back into
// the machine's own kernel at the end of the plan.
struct PendingBoot {
  deploy::LaunchedBoot boot;
  int plan_session = 0;
};

struct LocalBootState {
  std::string plan;      // the plan file, absolute
  std::string plan_key;  // what --resume matches the plan's sessions and boots by
  std::string store;     // the store's URL
  std::string run;       // the run of the plan the boots belong to
  std::string identity;  // plan_identity() of the plan's benchmarks: a changed plan is refused
  std::string unit;      // the resume unit's name
  std::string log;       // where the unit's runs write
  deploy::SutKernel original;  // what the machine ran when the plan started (tools not kept)
  int boots = 0;               // boots started so far
  std::optional<PendingBoot> pending;
  nlohmann::json to_json() const;
  // Throws RunError naming what is missing or malformed.
  static LocalBootState from_json(const nlohmann::json& json);
};

// The files of a plan's local boots, named by a hash of its plan key, in
// kbench_state_dir()/local-boot: KEY.json (the state) and KEY.log (what the
// resume unit's runs print).
std::string local_boot_key(const std::string& plan_key);
std::string local_boot_state_path(const std::string& plan_key);
std::string local_boot_log_path(const std::string& plan_key);
// kbench-resume-KEY.service
std::string resume_unit_name(const std::string& plan_key);
// KEY.done beside the log: where a finished plan's results went, so that
// `kbench plan status PLAN` finds its store after the state is gone.
std::string local_boot_done_path(const std::string& plan_key);
void write_local_boot_done(const std::string& path, const std::string& store, const std::string& run);
// The store URL a finished plan ran into, "" when there is no record.
std::string read_local_boot_done_store(const std::string& path);

// nullopt when there is no state file; RunError when it cannot be read.
std::optional<LocalBootState> read_local_boot_state(const std::string& path);
// Written whole or not at all (a temporary file, synced, renamed over the
// old): the machine may go down right after.
void write_local_boot_state(const std::string& path, const LocalBootState& state);

// Why this machine cannot run a plan that boots it, "" when it can: the
// plan installs a systemd unit (`systemd_run_dir`, /run/systemd/system,
// exists only on a machine booted with systemd) and boots the machine, both
// root's to do.
std::string local_boot_obstacle(const std::string& systemd_run_dir, bool root);

// A path that does not survive a boot (/tmp, /run, /dev/shm: emptied or
// memory), so the resumed run would not find it; "" when it is not one, else
// its volatile folder.
std::string volatile_folder(const std::string& path);

struct ResumeUnit {
  std::string name;                  // kbench-resume-KEY.service
  std::string plan;                  // for its description
  std::vector<std::string> command;  // kbench plan exec PLAN --store URL --resume ..., absolute paths
  std::map<std::string, std::string> environment;
  std::string log;  // stdout and stderr are appended here
};
// The unit file's text.
std::string resume_unit_text(const ResumeUnit& unit);
// Writes it to `unit_dir` (/etc/systemd/system), reloads systemd and
// enables it (it runs at the next boot). Throws RunError when systemctl fails.
void install_resume_unit(const ResumeUnit& unit, const std::string& unit_dir);
// Disables and removes it; a running instance (the caller itself) goes on
// to its end. Problems are returned as warnings, "" when there were none.
std::string remove_resume_unit(const std::string& name, const std::string& unit_dir);
// systemctl's word for it: "enabled, activating", "not installed", ...
std::string resume_unit_state(const std::string& name);

inline constexpr const char* kSystemdUnitDir = "/etc/systemd/system";
inline constexpr const char* kSystemdRunDir = "/run/systemd/system";

}  // namespace kbench::runner
