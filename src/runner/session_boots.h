#pragma once
// The boots of a plan execution. With sut.boot every session is a fresh boot
// of the SUT into its swprofile's kernel, staged once before the first (on
// the machine kbench runs on, each boot ends the process, and the run after
// the boot judges it); a method that boots the swprofile's kernel for every
// agent run (a VM, a LAVA job) boots it by asking for the session's
// fingerprint. The boots are recorded in the store, and a kernel that failed
// to boot is not booted again in the run: a panic repeats, and on a lab
// machine each try can cost a power cycle.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "deploy/deployer.h"
#include "plan/plan.h"
#include "runner/local_boot.h"
#include "runner/plan_executor.h"
#include "runner/progress.h"
#include "store/result_store.h"
#include "sut/connection.h"

namespace kbench::runner {

// What a session's boot came to, and so what the plan does next.
struct SessionBoot {
  enum class Next {
    Measure,      // measure the session, in `report`'s boot when there is one
    Skip,         // the session is not measured; the plan goes on
    Stop,         // interrupted: the plan stops
    BootPending,  // this machine boots now; the run after the boot goes on
  };
  Next next = Next::Measure;
  std::optional<deploy::BootReport> report;
};

// The run the boots belong to.
struct BootRun {
  std::string id;
  std::string identity;  // plan_identity() of its benchmarks
};

// After executions that left an ssh SUT in the kernel of their last boot
// (ExecOptions::boot_back false): boots it back into `original` and removes
// kbench's boot entries and module copies. Nullopt when it runs `original`
// already. Throws RunError when the SUT cannot be reached.
std::optional<deploy::BootReport> boot_sut_back(const plan::Plan& plan, sut::Connection& connection,
                                                const deploy::SutKernel& original, Progress& progress);

class SessionBoots {
 public:
  // `local_state`: what a plan booting this machine carried across its boots,
  // in the state file `state_path`. `sessions`: the plan's rounds.
  SessionBoots(const plan::Plan& plan, const std::vector<plan::SwprofileSpec>& profiles,
               const ConnectionFor& connection_for, store::ResultStore& store, const ExecOptions& options,
               Progress& progress, BootRun run, std::optional<LocalBootState> local_state, std::string state_path,
               int sessions);
  SessionBoots(const SessionBoots&) = delete;
  SessionBoots& operator=(const SessionBoots&) = delete;

  // Before the first session: with sut.boot, probes the SUT and stages every
  // swprofile's kernel; on --resume, finds the run's earlier boots and the
  // kernels that failed in them. Throws InputError when the SUT's connection
  // cannot boot kernels, RunError when the SUT fails.
  void stage_all();
  // sut.boot: every session is a boot of its own, which drops its sysctls.
  bool deploys() const { return deployer_.has_value(); }
  // The method boots the swprofile's kernel for every agent run.
  bool boots_per_run() const { return boots_per_run_; }
  // sut.boot on an ssh SUT: what it ran before the execution (after
  // stage_all).
  std::optional<deploy::SutKernel> sut_original() const;

  // The boot the previous process started on this machine, judged now that
  // it is over. True when it was the boot back into the machine's own
  // kernel: the plan is done.
  bool judge_boot_in_flight(ExecResult& result);
  // With sut.boot, the boot session `session` (0-based) of `profile` is
  // measured in; on any booting method, a kernel that failed earlier in the
  // run skips the session. Failures are counted in `result`.
  SessionBoot boot_for(const plan::SwprofileSpec& profile, int session, ExecResult& result);
  // On a method that boots for every agent run: the session's fingerprint,
  // asked of its agent, is its boot.
  SessionBoot boot_by_fingerprint(sut::Connection& connection, const plan::SwprofileSpec& profile, int session,
                                  nlohmann::json& fingerprint, ExecResult& result);
  // The session's boot, stored with the session measured in it.
  void record(const deploy::BootReport& boot, int session, std::int64_t stored_session);
  // At the plan's end (`result.interrupted_by` set): the SUT back on its own
  // kernel; on this machine that is a boot too (`result.boot_pending`), and
  // when the machine runs its own kernel again, what carried the plan across
  // its boots goes.
  void boot_back(ExecResult& result);

 private:
  store::BootRecord record_of(const deploy::BootReport& boot, int session) const;
  void remember_failed_kernel(const std::string& swprofile, int session, const std::string& reason);
  void save_state();
  std::optional<deploy::BootReport> launch(const plan::SwprofileSpec* profile, int session);
  void finish_on_this_machine();

  const plan::Plan& plan_;
  const std::vector<plan::SwprofileSpec>& profiles_;
  const ConnectionFor& connection_for_;
  store::ResultStore& store_;
  const ExecOptions& options_;
  Progress& progress_;
  const BootRun run_;
  std::optional<LocalBootState> local_state_;
  const std::string state_path_;
  const bool local_boots_;
  const sut::Method& method_;
  std::optional<deploy::Deployer> deployer_;
  bool boots_per_run_ = false;
  int planned_boots_ = 0;
  int vm_boots_ = 0;
  std::string sut_name_;
  std::vector<store::BootRecord> earlier_boots_;
  // Keyed by swprofile: the session and the reason of the failure.
  std::map<std::string, std::string> failed_kernels_;
  // The boot the previous process started, when it came up: the session it
  // is for runs in it.
  std::optional<deploy::BootReport> just_booted_;
  int just_booted_session_ = -1;
};

}  // namespace kbench::runner
