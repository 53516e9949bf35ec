#include "runner/session_boots.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <system_error>

#include "common/errors.h"
#include "common/spoken_list.h"
#include "common/utc_time.h"
#include "runner/interrupt.h"
#include "runner/session.h"
#include "runner/sysctl.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::runner {

namespace {

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

SessionBoot skip() { return {SessionBoot::Next::Skip, std::nullopt}; }
SessionBoot stop() { return {SessionBoot::Next::Stop, std::nullopt}; }

}  // namespace

SessionBoots::SessionBoots(const plan::Plan& plan, const std::vector<plan::SwprofileSpec>& profiles,
                           const ConnectionFor& connection_for, store::ResultStore& store, const ExecOptions& options,
                           Progress& progress, BootRun run, std::optional<LocalBootState> local_state,
                           std::string state_path, int sessions)
    : plan_(plan),
      profiles_(profiles),
      connection_for_(connection_for),
      store_(store),
      options_(options),
      progress_(progress),
      run_(std::move(run)),
      local_state_(std::move(local_state)),
      state_path_(std::move(state_path)),
      local_boots_(plan::boots_this_machine(plan)),
      method_(plan::sut_method(plan)) {
  if (plan.sut && plan.sut->boot) {
    sut::RemoteShell* shell = sut::remote_shell(connection_for(profiles.front()));
    if (!shell) {
      throw InputError("sut.boot: expected sut.connection.method " +
                       spoken_list(sut::MethodRegistry::instance().names_with(sut::Capability::Deploy)));
    }
    deployer_.emplace(*shell, *plan.sut->boot, [&progress](const std::string& line) { progress.message(line); },
                      sleep_unless_interrupted, local_boots_);
    planned_boots_ = sessions * static_cast<int>(profiles.size());
  }
  boots_per_run_ = !deployer_ && method_.has(sut::Capability::BootsKernel);
}

void SessionBoots::stage_all() {
  if (deployer_) {
    deployer_->probe();
    if (options_.sut_original && !local_boots_) deployer_->adopt_original(*options_.sut_original);
    if (local_state_) {
      deployer_->adopt_original(local_state_->original);
      deployer_->count_boots(local_state_->boots);
    }
    for (const auto& profile : profiles_) deployer_->stage(profile);
  }
  if ((deployer_ || boots_per_run_) && options_.resume) earlier_boots_ = store_.list_boots(options_.plan_key, run_.id);
  vm_boots_ = static_cast<int>(earlier_boots_.size());
  for (const auto& boot : earlier_boots_) {
    if (!boot.ok) remember_failed_kernel(boot.swprofile, boot.plan_session, boot.reason);
  }
  sut_name_ = plan_.sut && !plan_.sut->name.empty() ? plan_.sut->name
              : deployer_     ? sut::remote_shell(connection_for_(profiles_.front()))->describe_target()
              : boots_per_run_ ? connection_for_(profiles_.front()).describe()
                               : "";
}

bool SessionBoots::judge_boot_in_flight(ExecResult& result) {
  if (!local_state_ || !local_state_->pending) return false;
  const PendingBoot pending = *local_state_->pending;
  deploy::BootReport report = deployer_->finish(pending.boot);
  local_state_->pending.reset();
  save_state();
  if (pending.plan_session < 0) {
    progress_.message(boot_line(report, planned_boots_, /*restoring=*/true, /*this_machine=*/true));
    store_.record_boot(record_of(report, -1));
    if (!report.ok) {
      progress_.message("kbench: warning: this machine is not back on its own kernel: " + report.reason);
      ++result.failed;
    }
    finish_on_this_machine();
    return true;
  }
  if (report.ok) {
    just_booted_ = report;
    just_booted_session_ = pending.plan_session;
  } else {
    progress_.message(boot_line(report, planned_boots_, false, /*this_machine=*/true));
    earlier_boots_.push_back(record_of(report, pending.plan_session));
    store_.record_boot(earlier_boots_.back());
    remember_failed_kernel(report.swprofile, pending.plan_session, report.reason);
    ++result.failed;
    ++result.failed_boots;
  }
  return false;
}

SessionBoot SessionBoots::boot_for(const plan::SwprofileSpec& profile, int session, ExecResult& result) {
  if (deployer_) {
    if (const auto done =
            booted_before(store_, earlier_boots_, profile.name, options_.plan_key, run_.id, session, progress_)) {
      if (*done) return skip();
    }
  }
  if (deployer_ || boots_per_run_) {
    if (const auto failed = failed_kernels_.find(profile.name); failed != failed_kernels_.end()) {
      progress_.message(fmt::format("kbench: session {} of {} not measured: its kernel failed to boot in {}; not "
                                    "booted again in this run",
                                    session + 1, profile.name, failed->second));
      ++result.failed;
      ++result.failed_boots;
      return skip();
    }
  }
  if (!deployer_) return {};
  std::optional<deploy::BootReport> boot;
  if (!local_boots_) {
    boot = deployer_->boot(profile);
  } else if (just_booted_ && just_booted_->swprofile == profile.name && just_booted_session_ == session) {
    boot = std::move(just_booted_);
    just_booted_.reset();
  } else if (auto failed = launch(&profile, session)) {
    boot = std::move(failed);
  } else {
    return {SessionBoot::Next::BootPending, std::nullopt};
  }
  if (boot->ok) {
    if (const std::string failed = deployer_->apply_sysctls(profile.sysctl); !failed.empty()) {
      boot->ok = false;
      boot->reason = failed;
    }
  }
  progress_.message(boot_line(*boot, planned_boots_, false, local_boots_));
  if (!boot->ok) {
    // On this machine a failed start is recorded also when a shutdown
    // interrupts this run: the next run must not start it again.
    if (interrupted() && !local_boots_) return stop();
    // Nothing is recorded under the swprofile: only the boot, with why.
    store_.record_boot(record_of(*boot, session));
    remember_failed_kernel(profile.name, session, boot->reason);
    ++result.failed;
    ++result.failed_boots;
    return skip();
  }
  return {SessionBoot::Next::Measure, std::move(boot)};
}

SessionBoot SessionBoots::boot_by_fingerprint(sut::Connection& connection, const plan::SwprofileSpec& profile,
                                              int session, nlohmann::json& fingerprint, ExecResult& result) {
  deploy::BootReport boot;
  try {
    boot = boot_for_fingerprint(connection, method_, profile.name, ++vm_boots_, fingerprint);
  } catch (const InfrastructureError& error) {
    // The lab failed the session, not the kernel: no failed boot, and
    // the kernel's next session boots it again.
    if (interrupted()) return stop();
    progress_.message(fmt::format("kbench: session {} of {} not measured: the lab failed its run (an "
                                  "infrastructure error, not counted against the kernel: its next session "
                                  "boots it again): {}",
                                  session + 1, profile.name, error.what()));
    ++result.failed;
    return skip();
  }
  if (!boot.ok) {
    if (interrupted()) return stop();
    progress_.message(fmt::format("kbench: session {} of {}: its kernel did not come up by {}: {}", session + 1,
                                  profile.name, method_.name, boot.reason));
    store_.record_boot(record_of(boot, session));
    remember_failed_kernel(profile.name, session, boot.reason);
    ++result.failed;
    ++result.failed_boots;
    return skip();
  }
  return {SessionBoot::Next::Measure, std::move(boot)};
}

void SessionBoots::record(const deploy::BootReport& boot, int session, std::int64_t stored_session) {
  auto record = record_of(boot, session);
  record.session = stored_session;
  store_.record_boot(record);
}

void SessionBoots::boot_back(ExecResult& result) {
  if (local_boots_ && !result.interrupted_by) {
    // Back into the machine's own kernel, unless it runs it already (a
    // failed last boot came back on it).
    if (!deployer_->runs_original()) {
      progress_.message(fmt::format("kbench: booting this machine back into {}", deployer_->original().release));
      const auto failed = launch(nullptr, -1);
      if (!failed) {
        result.boot_pending = true;
        return;
      }
      progress_.message(boot_line(*failed, planned_boots_, /*restoring=*/true, /*this_machine=*/true));
      store_.record_boot(record_of(*failed, -1));
      progress_.message("kbench: warning: this machine is not back on its own kernel: " + failed->reason);
      ++result.failed;
    }
    finish_on_this_machine();
  } else if (local_boots_) {
    progress_.message(fmt::format("kbench: interrupted: `kbench plan exec {} --resume` continues the plan{}",
                                  plan_.path,
                                  local_state_ ? "; its resume unit continues it at the next boot" : ""));
  } else if (deployer_ && !options_.boot_back) {
    // The driver boots it back at its end (boot_sut_back), or says why not.
  } else if (deployer_ && !result.interrupted_by && deployer_->boots() > 0) {
    // A SUT never booted by this execution (a --resume with nothing left)
    // still runs what it ran before.
    progress_.message(fmt::format("kbench: booting {} back into {}", sut_name_, deployer_->original().release));
    const auto back = deployer_->restore();
    progress_.message(boot_line(back, planned_boots_, /*restoring=*/true));
    store_.record_boot(record_of(back, -1));
    if (!back.ok) {
      progress_.message("kbench: warning: the SUT is not back on its own kernel: " + back.reason);
      ++result.failed;
    }
  } else if (deployer_) {
    progress_.message(fmt::format("kbench: interrupted: {} still runs the kernel of the last boot; `plan exec "
                                  "--resume` continues the plan and boots it back into {} at its end",
                                  sut_name_, deployer_->original().release));
  }
}

std::optional<deploy::SutKernel> SessionBoots::sut_original() const {
  if (!deployer_ || local_boots_) return std::nullopt;
  return deployer_->original();
}

std::optional<deploy::BootReport> boot_sut_back(const plan::Plan& plan, sut::Connection& connection,
                                                const deploy::SutKernel& original, Progress& progress) {
  sut::RemoteShell* shell = sut::remote_shell(connection);
  if (!plan.sut || !plan.sut->boot || !shell) return std::nullopt;
  deploy::Deployer deployer(*shell, *plan.sut->boot, [&progress](const std::string& line) { progress.message(line); },
                            sleep_unless_interrupted);
  deployer.probe();
  deployer.adopt_original(original);
  if (deployer.runs_original()) {
    deployer.cleanup();
    return std::nullopt;
  }
  progress.message(fmt::format("kbench: booting {} back into {}", shell->describe_target(), original.release));
  deploy::BootReport back = deployer.restore();
  progress.message(boot_line(back, 0, /*restoring=*/true));
  return back;
}

store::BootRecord SessionBoots::record_of(const deploy::BootReport& boot, int session) const {
  store::BootRecord record;
  record.sut = sut_name_;
  record.swprofile = boot.swprofile;
  record.plan_key = options_.plan_key;
  record.run = run_.id;
  record.plan_session = session;
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
}

void SessionBoots::remember_failed_kernel(const std::string& swprofile, int session, const std::string& reason) {
  failed_kernels_.emplace(swprofile, fmt::format("session {}: {}", session + 1, reason));
}

// This machine: a boot ends this process. The state and the resume unit are
// written before the first boot, the boot in flight before each.
void SessionBoots::save_state() { write_local_boot_state(state_path_, *local_state_); }

std::optional<deploy::BootReport> SessionBoots::launch(const plan::SwprofileSpec* profile, int session) {
  if (!local_state_) {
    local_state_.emplace();
    local_state_->plan = plan_.path;
    local_state_->plan_key = options_.plan_key;
    local_state_->store = options_.store_url;
    local_state_->run = run_.id;
    local_state_->identity = run_.identity;
    local_state_->unit = resume_unit_name(options_.plan_key);
    local_state_->log = local_boot_log_path(options_.plan_key);
    local_state_->original = deployer_->original();
    local_state_->original.tools.clear();
    save_state();
    ResumeUnit unit{local_state_->unit, plan_.path, options_.resume_command,
                    {{"KBENCH_STATE_DIR", kbench_state_dir()}}, local_state_->log};
    if (const char* agent = std::getenv("KBENCH_AGENT"); agent && *agent) unit.environment["KBENCH_AGENT"] = agent;
    install_resume_unit(unit, kSystemdUnitDir);
    progress_.message(fmt::format("kbench: installed {}: it resumes the plan after each boot of this machine (log: "
                                  "{})",
                                  local_state_->unit, local_state_->log));
  }
  // A safety net: a boot that repeats (a start reported failed that
  // happened all the same, a kernel that never gets judged) must not
  // reboot the machine forever. Past twice the plan's boots, the unit
  // goes and the machine stays up.
  if (local_state_->boots > 2 * planned_boots_ + 1) {
    const std::string warning = remove_resume_unit(local_state_->unit, kSystemdUnitDir);
    deploy::BootReport refused;
    refused.number = local_state_->boots + 1;
    refused.swprofile = profile ? profile->name : "(the SUT's own kernel)";
    refused.method = plan_.sut->boot->method;
    refused.started_at = utc_now_iso8601();
    refused.reason = fmt::format("not started: the plan has started {} boots, more than twice the {} it plans; {} "
                                 "removed so the machine stops booting{}",
                                 local_state_->boots, planned_boots_, local_state_->unit,
                                 warning.empty() ? "" : " (" + warning + ")");
    return refused;
  }
  const auto keep = [&](const deploy::LaunchedBoot& boot) {
    local_state_->pending = PendingBoot{boot, session};
    local_state_->boots = boot.number;
    save_state();
  };
  auto failed = profile ? deployer_->launch(*profile, keep) : deployer_->launch_restore(keep);
  if (failed && local_state_->pending && interrupted()) {
    // Cut short by the shutdown it began (it stops the resume unit, or the
    // ssh session, with everything in it), not refused: the boot is under
    // way, and the run after it judges it.
    progress_.message("kbench: the start of the boot was cut short by the shutdown it began; the run after the boot "
                      "judges it");
  } else if (failed) {
    local_state_->pending.reset();
    save_state();
    return failed;
  }
  progress_.message(fmt::format("kbench: boot {}: {} by {}: this machine boots now; {} resumes the plan after the "
                                "boot (log: {}); `kbench plan status {}` shows where it stands",
                                session < 0 ? std::string("back") : fmt::format("{}/{}", local_state_->boots,
                                                                                planned_boots_),
                                local_state_->pending->boot.swprofile, local_state_->pending->boot.method,
                                local_state_->unit, local_state_->log, plan_.path));
  return std::nullopt;
}

// The plan is done on this machine: its own kernel runs again, and what
// kbench installed to carry the plan across boots goes.
void SessionBoots::finish_on_this_machine() {
  deployer_->cleanup();
  if (!local_state_) return;
  if (const std::string warning = remove_resume_unit(local_state_->unit, kSystemdUnitDir); !warning.empty()) {
    progress_.message("kbench: warning: " + warning);
  }
  write_local_boot_done(local_boot_done_path(options_.plan_key), local_state_->store, local_state_->run);
  std::error_code ec;
  std::filesystem::remove(state_path_, ec);
  progress_.message(fmt::format("kbench: plan done: this machine runs its own kernel {}; {} and {} removed (its log "
                                "stays: {})",
                                deployer_->original().release, local_state_->unit, state_path_, local_state_->log));
}

}  // namespace kbench::runner
