#include "app/session_report.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "analysis/compare.h"
#include "common/errors.h"
#include "report/model.h"
#include "runner/interrupt.h"

namespace kbench::app {

std::string describe_incompleteness(const store::SessionListing& session) {
  if (session.complete()) return "";
  std::string text;
  if (!session.finished) text = "not finished (interrupted, killed, or still running)";
  if (!session.gaps.empty()) {
    text += text.empty() ? "no outcome for " : "; no outcome for ";
    for (std::size_t i = 0; i < session.gaps.size(); ++i) {
      const auto& gap = session.gaps[i];
      if (i) text += ", ";
      text += gap.benchmark;
      if (gap.repeats_stored > 0) {
        text += " (interrupted after " + std::to_string(gap.repeats_stored) +
                (gap.repeats_stored == 1 ? " repeat" : " repeats") + ", not used)";
      }
    }
  }
  return text;
}

void print_incomplete_sessions(store::ResultStore& store, const std::vector<std::string>& swprofiles,
                               std::ostream& out) {
  for (const auto& session : store.list_sessions(swprofiles)) {
    if (session.complete()) continue;
    out << "incomplete: swprofile " << session.swprofile << " session " << session.number() << " on "
        << session.sut << ": " << describe_incompleteness(session) << "\n";
  }
}

std::string describe_session_numbers(std::vector<int> numbers) {
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  if (numbers.empty()) return "no session";
  if (numbers.size() == 1) return "session " + std::to_string(numbers.front());
  if (numbers.back() - numbers.front() + 1 == static_cast<int>(numbers.size())) {
    return "sessions " + std::to_string(numbers.front()) + " to " + std::to_string(numbers.back());
  }
  std::string text = "sessions ";
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    if (i > 0) text += i + 1 == numbers.size() ? " and " : ", ";
    text += std::to_string(numbers[i]);
  }
  return text;
}

void print_session_tables(store::ResultStore& store, const runner::ExecResult& result, std::ostream& out) {
  // Swprofiles in the order they first ran.
  std::vector<std::string> profiles;
  for (const auto& session : result.sessions) {
    if (std::find(profiles.begin(), profiles.end(), session.swprofile) == profiles.end()) {
      profiles.push_back(session.swprofile);
    }
  }
  for (const auto& profile : profiles) {
    std::set<std::int64_t> ids;
    std::vector<int> numbers;
    std::string sut_name;
    std::vector<const runner::BenchmarkOutcome*> outcomes;
    for (const auto& session : result.sessions) {
      if (session.swprofile != profile) continue;
      ids.insert(session.session);
      numbers.push_back(session.number);
      sut_name = session.sut.name;
      for (const auto& outcome : session.outcomes) outcomes.push_back(&outcome);
    }
    store::SampleQuery query;
    query.swprofiles = {profile};
    query.settled_only = true;
    auto samples = store.samples(query);
    samples.erase(std::remove_if(samples.begin(), samples.end(),
                                 [&](const store::SampleRow& row) { return !ids.count(row.session); }),
                  samples.end());
    auto tables = analysis::build_profile_tables(samples, profile);
    if (tables.empty()) tables.push_back({sut_name, profile, {}, {}, {}});
    const bool several = ids.size() > 1;
    for (const auto* outcome : outcomes) {
      if (outcome->outcome.status == store::OutcomeStatus::Ok) continue;
      std::string line = outcome->benchmark + ": " + outcome->outcome.reason;
      auto& list = outcome->outcome.status == store::OutcomeStatus::Skipped ? tables.front().skipped
                                                                            : tables.front().failed;
      // A skip repeats in every session for the same reason: listed once.
      if (several && std::find(list.begin(), list.end(), line) != list.end()) continue;
      list.push_back(std::move(line));
    }
    out << "swprofile " << profile << ", " << describe_session_numbers(numbers) << "\n";
    for (const auto& table : tables) report::render_profile_grid(table, out);
  }
}

runner::ExecResult execute_and_report(const plan::Plan& plan, const std::vector<runner::BenchmarkRun>& runs,
                        const runner::ConnectionFor& connection_for, store::ResultStore& store,
                        const runner::ExecOptions& exec, const std::string& resume_hint) {
  int steps = 0;
  const auto profiles = runner::select_swprofiles(plan, exec);
  for (const auto& run : runs) steps += run.settings.sessions * static_cast<int>(profiles.size());
  runner::Progress progress(stderr, isatty(STDERR_FILENO) == 1, steps);
  progress.announce_starts(exec.announce_steps);
  runner::install_interrupt_handlers();
  const runner::ExecResult result = runner::execute_plan(plan, runs, connection_for, store, exec, progress);
  print_session_tables(store, result, std::cout);
  if (result.interrupted_by != 0) {
    std::cerr << "kbench: interrupted by signal " << result.interrupted_by << "; settings restored" << resume_hint
              << "\n";
  }
  if (result.failed_boots > 0) {
    std::cerr << "kbench: " << result.failed_boots
              << " session(s) not measured: the kernel did not boot as asked (kbench list boots shows why)\n";
  }
  return result;
}

int exit_status_of(const runner::ExecResult& result) {
  if (result.interrupted_by != 0) return 128 + result.interrupted_by;
  return result.failed > 0 ? kExitFailure : kExitOk;
}

}  // namespace kbench::app
