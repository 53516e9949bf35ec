#pragma once
#include <ostream>

#include "runner/plan_executor.h"
#include "store/result_store.h"

namespace kbench::cli {

// The single-profile table of every session just run, with its skipped and
// failed benchmarks (kbench run, kbench plan exec).
void print_session_tables(store::ResultStore& store, const runner::ExecResult& result, std::ostream& out);

// Executes the plan with progress on stderr, prints the session tables, and
// sets the exit status: 128+N when signal N stopped it (with `resume_hint`
// after the message), 1 when a benchmark failed.
void execute_and_report(const plan::Plan& plan, const std::vector<runner::BenchmarkRun>& runs,
                        const runner::ConnectionFor& connection_for, store::ResultStore& store,
                        const runner::ExecOptions& exec, const std::string& resume_hint);

}  // namespace kbench::cli
