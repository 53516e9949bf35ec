#pragma once
// Runs each repeat of a benchmark in a process of its own.
//
// A process keeps the speed it drew when it started (its kernel stack, its
// physical pages and their cache sets, its address-space tags) for its whole
// life, and the next process draws another: on the 2-vCPU test VM getpid's
// mean differs by an sd of 2.35 % between fresh processes and 0.62 % between
// repeats of one process (docs/benchmarks/syscall.md, "The process, not the
// minute"). Repeats of one process cannot average that draw away; repeats of
// fresh processes do, so a session's mean carries a fraction of it.
#include "benchmarks/harness.h"

namespace kbench::bench {

// As run_benchmark, with the same records and exit statuses, except that
// each repeat is measured by a forked child that prepares the benchmark, runs
// the warmups and that one repeat, and finishes. The children's records are
// passed on as one stream: one benchmark record (with all repeats), repeats
// numbered in order, each note written when it is new or has changed.
int run_benchmark_process_per_repeat(Benchmark& benchmark, const std::string& name, const Params& params,
                                     const RunSettings& settings, const RecordWriter& write);

}  // namespace kbench::bench
