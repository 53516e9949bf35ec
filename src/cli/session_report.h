#pragma once
#include <ostream>

#include "runner/plan_executor.h"
#include "store/result_store.h"

namespace kbench::cli {

// The single-profile table of every session just run, with its skipped and
// failed benchmarks (kbench run, kbench plan exec).
void print_session_tables(store::ResultStore& store, const runner::ExecResult& result, std::ostream& out);

}  // namespace kbench::cli
