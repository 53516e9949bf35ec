#pragma once
#include <ostream>

#include "runner/plan_executor.h"
#include "store/result_store.h"

namespace kbench::app {

// What an incomplete session lacks, in one line: "not finished (killed, or
// still running); no outcome for syscall/getpid (interrupted after 1 repeat,
// its samples are not used), syscall/read". Empty for a complete session.
std::string describe_incompleteness(const store::SessionListing& session);

// "session 3", "sessions 4 to 6", "sessions 1, 3 and 5": the numbers of
// the sessions of one swprofile a run added.
std::string describe_session_numbers(std::vector<int> numbers);

// "incomplete: swprofile base session 2 on host: ..." for every incomplete
// session of these swprofiles (all when empty). Used by compare and show,
// whose tables leave out what such sessions lack.
void print_incomplete_sessions(store::ResultStore& store, const std::vector<std::string>& swprofiles,
                               std::ostream& out);

// The single-profile table of each swprofile just run, over the sessions
// this run added (the repeats of all of them, as compare sees them), with
// the skipped and failed benchmarks (kbench run, kbench plan exec).
void print_session_tables(store::ResultStore& store, const runner::ExecResult& result, std::ostream& out);

// Executes the plan with progress on stderr and prints the session tables;
// when a signal stopped it, says so with `resume_hint` after the message.
// Returns what ran (exit_status_of says what the command then exits with).
runner::ExecResult execute_and_report(const plan::Plan& plan, const std::vector<runner::BenchmarkRun>& runs,
                        const runner::ConnectionFor& connection_for, store::ResultStore& store,
                        const runner::ExecOptions& exec, const std::string& resume_hint);

// 128+N when signal N stopped the run, kExitFailure when a benchmark failed
// (the run went on), else kExitOk.
int exit_status_of(const runner::ExecResult& result);

}  // namespace kbench::app
