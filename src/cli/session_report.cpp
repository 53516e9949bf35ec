#include "cli/session_report.h"

#include "analysis/compare.h"
#include "report/model.h"

namespace kbench::cli {

void print_session_tables(store::ResultStore& store, const runner::ExecResult& result, std::ostream& out) {
  for (const auto& session : result.sessions) {
    store::SampleQuery query;
    query.swprofiles = {session.swprofile};
    auto tables = analysis::build_profile_tables(store.samples(query), session.swprofile, session.session);
    if (tables.empty()) tables.push_back({session.sut.name, session.swprofile, {}, {}, {}});
    for (const auto& outcome : session.outcomes) {
      const std::string line = outcome.benchmark + ": " + outcome.outcome.reason;
      if (outcome.outcome.status == store::OutcomeStatus::Skipped) tables.front().skipped.push_back(line);
      if (outcome.outcome.status == store::OutcomeStatus::Failed) tables.front().failed.push_back(line);
    }
    out << "swprofile " << session.swprofile << ", session " << session.session << "\n";
    for (const auto& table : tables) report::render_profile_grid(table, out);
  }
}

}  // namespace kbench::cli
