#include "runner/plan_status.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "runner/local_boot.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::runner {

namespace {

int planned_sessions(const plan::Plan& plan) {
  int sessions = 1;
  for (const auto& entry : plan.benchmarks) sessions = std::max(sessions, plan.settings_for(entry).sessions);
  return sessions;
}

std::string boot_summary(const store::BootRecord& boot) {
  const std::string number = boot.plan_session < 0 ? "back" : fmt::format("{}", boot.number);
  std::string line = fmt::format("  boot {:<4} {:<20} {:<7} ", number, boot.swprofile, boot.method);
  if (boot.ok) return line + fmt::format("ok {} ({:.0f}s)", boot.release, boot.seconds);
  return line + "FAILED: " + boot.reason;
}

int sessions_left(const PlanStatus& status) {
  int left = 0;
  for (const auto& profile : status.swprofiles) {
    if (profile.kernel_failed.empty()) left += std::max(0, profile.planned - profile.done);
  }
  return left;
}

}  // namespace

PlanStatus gather_plan_status(const plan::Plan& plan, const std::string& plan_key, store::ResultStore* store,
                              const std::string& store_url, bool ask_systemd) {
  PlanStatus status;
  status.plan = plan.path;
  status.store = store_url;
  status.boots_this_machine = plan::boots_this_machine(plan);
  status.now_epoch =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (status.boots_this_machine) {
    status.state = read_local_boot_state(local_boot_state_path(plan_key));
    status.unit = resume_unit_name(plan_key);
    status.log = local_boot_log_path(plan_key);
    if (ask_systemd) status.unit_state = resume_unit_state(status.unit);
  }
  std::vector<std::string> names;
  for (const auto& profile : plan.swprofiles) names.push_back(profile.name);
  if (status.state) {
    status.run = status.state->run;
  } else if (store) {
    if (const auto latest = store->latest_plan(plan_key, names)) {
      status.run = latest->value(sysinfo::fingerprint_key::plan::kRun, std::string());
    }
  }
  if (store && !status.run.empty()) status.boots = store->list_boots(plan_key, status.run);
  const int planned = planned_sessions(plan);
  for (const auto& name : names) {
    SwprofileProgress progress{name, 0, planned, ""};
    for (int s = 0; store && !status.run.empty() && s < planned; ++s) {
      const auto session = store->find_plan_session(name, plan_key, status.run, s);
      if (!session) continue;
      const auto stored = store->session(*session);
      if (stored && stored->complete()) ++progress.done;
    }
    for (const auto& boot : status.boots) {
      if (boot.swprofile == name && boot.plan_session >= 0 && !boot.ok && progress.kernel_failed.empty()) {
        progress.kernel_failed = fmt::format("its kernel failed to boot in session {}", boot.plan_session + 1);
      }
    }
    status.swprofiles.push_back(progress);
  }
  return status;
}

std::string plan_status_word(const PlanStatus& status) {
  int planned_boots = 0;
  for (const auto& profile : status.swprofiles) planned_boots += profile.planned;
  // systemd keeps a unit's failure until the next boot: the run resumed after
  // this boot stopped before it could record it, and nothing will go on alone.
  if (status.state && status.unit_state.ends_with("failed")) {
    return fmt::format("stopped: the run resumed after the last boot failed (its log: {}); `kbench plan exec {} "
                       "--resume` continues it",
                       status.log, status.plan);
  }
  if (status.state && status.state->pending) {
    const auto& pending = *status.state->pending;
    const std::string which = pending.plan_session < 0
                                  ? fmt::format("the boot back into {} by {}", status.state->original.release,
                                                pending.boot.method)
                                  : fmt::format("boot {}/{} ({} by {})", pending.boot.number, planned_boots,
                                                pending.boot.swprofile, pending.boot.method);
    return fmt::format("waiting for {}, started {} ({}s ago); {} resumes the plan after it", which,
                       pending.boot.started_at, std::max<std::int64_t>(0, status.now_epoch - pending.boot.started_epoch),
                       status.state->unit);
  }
  if (status.state) {
    if (status.unit_state.find("activ") != std::string::npos && status.unit_state.find("inactive") == std::string::npos) {
      return "running: the run resumed after the last boot measures";
    }
    return fmt::format("stopped between boots: `kbench plan exec {} --resume` continues it (the resume unit at the "
                       "next boot)",
                       status.plan);
  }
  if (status.run.empty()) return "not started: the store has no run of this plan";
  if (const int left = sessions_left(status); left > 0) {
    return fmt::format("stopped: {} session(s) left; `kbench plan exec {} --resume` continues it", left, status.plan);
  }
  return "finished";
}

std::string plan_status_text(const PlanStatus& status) {
  std::string text = fmt::format("plan: {}\nstore: {}\n", status.plan, status.store);
  if (!status.run.empty()) text += fmt::format("run: {}\n", status.run);
  text += "status: " + plan_status_word(status) + "\n";
  std::string sessions;
  for (const auto& profile : status.swprofiles) {
    sessions += fmt::format("{}{} {}/{}", sessions.empty() ? "" : ", ", profile.name, profile.done, profile.planned);
    if (!profile.kernel_failed.empty()) sessions += " (" + profile.kernel_failed + ")";
  }
  text += "sessions: " + (sessions.empty() ? std::string("none planned") : sessions) + "\n";
  const auto ok = std::count_if(status.boots.begin(), status.boots.end(), [](const auto& boot) { return boot.ok; });
  text += fmt::format("boots: {} ({} ok, {} failed)\n", status.boots.size(), ok,
                      static_cast<long>(status.boots.size()) - ok);
  for (const auto& boot : status.boots) text += boot_summary(boot) + "\n";
  if (status.boots_this_machine) {
    if (status.state && status.state->pending) {
      const auto& boot = status.state->pending->boot;
      text += fmt::format("pending: boot {}: {} by {} since {}, expecting {} {}\n", boot.number, boot.swprofile,
                          boot.method, boot.started_at, boot.expected.release, boot.expected.version);
    } else {
      text += "pending: no boot\n";
    }
    text += fmt::format("unit: {}: {}\n", status.unit, status.unit_state.empty() ? "unknown" : status.unit_state);
    text += fmt::format("log: {}\n", status.log);
  }
  return text;
}

}  // namespace kbench::runner
