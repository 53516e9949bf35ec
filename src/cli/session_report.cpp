#include "cli/session_report.h"

#include <unistd.h>

#include <iostream>

#include "analysis/compare.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "runner/interrupt.h"
#include "report/model.h"

namespace kbench::cli {

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

void print_session_tables(store::ResultStore& store, const runner::ExecResult& result, std::ostream& out) {
  for (const auto& session : result.sessions) {
    store::SampleQuery query;
    query.swprofiles = {session.swprofile};
    query.settled_only = true;
    auto tables = analysis::build_profile_tables(store.samples(query), session.swprofile, session.session);
    if (tables.empty()) tables.push_back({session.sut.name, session.swprofile, {}, {}, {}});
    for (const auto& outcome : session.outcomes) {
      const std::string line = outcome.benchmark + ": " + outcome.outcome.reason;
      if (outcome.outcome.status == store::OutcomeStatus::Skipped) tables.front().skipped.push_back(line);
      if (outcome.outcome.status == store::OutcomeStatus::Failed) tables.front().failed.push_back(line);
    }
    out << "swprofile " << session.swprofile << ", session " << session.number << "\n";
    for (const auto& table : tables) report::render_profile_grid(table, out);
  }
}

void execute_and_report(const plan::Plan& plan, const std::vector<runner::BenchmarkRun>& runs,
                        const runner::ConnectionFor& connection_for, store::ResultStore& store,
                        const runner::ExecOptions& exec, const std::string& resume_hint) {
  int steps = 0;
  const auto profiles = runner::select_swprofiles(plan, exec);
  for (const auto& run : runs) steps += run.settings.sessions * static_cast<int>(profiles.size());
  runner::Progress progress(stderr, isatty(STDERR_FILENO) == 1, steps);
  runner::install_interrupt_handlers();
  const runner::ExecResult result = runner::execute_plan(plan, runs, connection_for, store, exec, progress);
  print_session_tables(store, result, std::cout);
  if (result.interrupted_by != 0) {
    std::cerr << "kbench: interrupted by signal " << result.interrupted_by << "; settings restored" << resume_hint
              << "\n";
    pending_exit_status() = 128 + result.interrupted_by;
  } else if (result.failed > 0) {
    pending_exit_status() = kExitFailure;
  }
}

}  // namespace kbench::cli
