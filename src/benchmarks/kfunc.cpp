// kfunc/<function>: the time spent in one kernel function per call, while a
// workload drives it (docs/benchmarks/kfunc.md).
//
// The kernel's function_graph tracer times the function: set_graph_function
// and set_ftrace_filter name it, max_graph_depth 1 keeps its callees out,
// tracing_cpumask keeps the trace to the workload's CPU and that CPU's buffer
// is sized for one repeat's calls. The workload runs with tracing on; the
// durations are read from per_cpu/cpuN/trace after tracing stopped (nothing
// reads the trace while the workload runs). Lost events (the CPU's stats
// overrun) fail the repeat: a mean over the calls that survived is biased.
//
// The tracer costs time inside the measured interval too. Each repeat also
// reports, measured in the same repeat:
//   - tracer floor: the traced duration of a trivial system call's handler
//     driven by that call: what the tracer itself adds to every traced
//     duration;
//   - tracer overhead: the workload's time per iteration traced, relative to
//     untraced (current_tracer nop, so no hooks are patched in), in percent;
//     the untraced loop runs before and after the traced one and their mean
//     is the baseline, so drift and first-run effects cancel.
//
// Workloads, each the loop of a benchmark whose path the function may be on:
//   - pingpong: two threads pinned to one CPU passing a byte over pipes; each
//     pass blocks one thread and wakes the other, so every pass is a context
//     switch (finish_task_switch, schedule, pipe_read and pipe_write each run
//     once per pass): ctxsw/pipe-threads' loop (benchmarks/ctxsw.h);
//   - getppid, getpid: that system call in a loop, syscall/getppid's and
//     syscall/getpid's path (the handler and what it calls).
// The floor's system call is getppid for pingpong and getuid for the system
// call workloads: as a depth-1 graph function the getppid handler would hide
// every function it calls, which is what those workloads are there to time.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>

#include "benchmarks/benchmark.h"
#include "benchmarks/ctxsw.h"
#include "benchmarks/sched_tasks.h"
#include "common/errors.h"
#include "common/median.h"
#include "timing/affinity.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"
#include "tracing/tracefs.h"

namespace kbench::bench {
namespace {

constexpr const char* kPrefix = "kfunc/";

// A system call handler's names per architecture: the syscall wrappers
// (CONFIG_ARCH_HAS_SYSCALL_WRAPPER) first, the plain names of older kernels
// after.
std::vector<std::string> handler_candidates(const std::string& call) {
#if defined(__x86_64__)
  return {"__x64_sys_" + call, "__do_sys_" + call, "sys_" + call};
#elif defined(__aarch64__)
  return {"__arm64_sys_" + call, "__do_sys_" + call, "sys_" + call};
#else
  return {"sys_" + call};
#endif
}

struct Workload {
  const char* name;
  long syscall_number;  // 0: the pipe ping-pong
  const char* floor_call;
  long floor_number;
};

const Workload kWorkloads[] = {
    {"pingpong", 0, "getppid", SYS_getppid},
    {"getppid", SYS_getppid, "getuid", SYS_getuid},
    {"getpid", SYS_getpid, "getuid", SYS_getuid},
};

const Workload& workload_named(const std::string& name) {
  for (const Workload& workload : kWorkloads)
    if (name == workload.name) return workload;
  throw InputError("kfunc workload '" + name + "': expected pingpong, getppid or getpid");
}

__attribute__((noinline)) void call_repeatedly(long number, long calls) {
  for (long i = 0; i < calls; ++i) syscall(number);
}

// Bytes of ring buffer one traced call takes: an entry and a return event
// (about 24 + 48 bytes with headers), rounded up for the page headers.
constexpr long kBytesPerTracedCall = 128;

std::vector<double> durations_of(const tracing::GraphTrace& trace, const std::string& function, int cpu) {
  std::vector<double> out;
  for (const auto& call : trace.calls) {
    if (call.function == function && (call.cpu < 0 || call.cpu == cpu)) out.push_back(call.duration_ns);
  }
  return out;
}

double mean_of(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

class Kfunc : public Benchmark {
 public:
  explicit Kfunc(std::string name) : name_(std::move(name)), function_(name_.substr(std::string(kPrefix).size())) {
    const bool valid = !function_.empty() && std::all_of(function_.begin(), function_.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    });
    if (!valid) {
      throw InputError("benchmark '" + name_ + "': expected kfunc/<kernel function>, the function named with " +
                       "letters, digits, '_' and '.'");
    }
  }

  std::string name() const override { return name_; }
  std::string description() const override {
    return "time in the kernel function " + function_ +
           " per call, traced by function_graph (depth 1, one CPU) while a workload on that CPU drives it (two "
           "threads ping-ponging over pipes, or a getppid or getpid loop); with the tracer's floor and overhead "
           "measured in the same repeat";
  }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec{"workload", "pingpong", "pingpong",
                  "what drives the function: pingpong = two threads on one CPU passing a byte over pipes "
                  "(ctxsw/pipe-threads' path); getppid, getpid = that system call in a loop (syscall/getppid's, "
                  "syscall/getpid's path)"}
            .choice({"pingpong", "getppid", "getpid"}),
        ParamSpec{"calls", "20000", "2000",
                  "workload iterations per repeat, traced and untraced: context switches (pingpong) or system calls"}
            .integer(2, 5e6),
        ParamSpec{"floor_calls", "20000", "2000",
                  "calls per repeat that time the tracer floor: getppid() (pingpong) or getuid() (the system call "
                  "workloads)"}
            .integer(1, 5e6),
    };
  }
  std::vector<ResultClass> result_classes(const Params& params) const override {
    const bool switches = workload_named(params.at("workload")).syscall_number == 0;
    return {{"time per call", "ns", Better::Lower},
            {"median per call", "ns", Better::Lower},
            {"time per call", "ticks", Better::Lower},
            {"tracer floor", "ns", Better::Lower},
            {switches ? "tracer overhead per switch" : "tracer overhead per system call", "%", Better::Lower}};
  }

  void prepare(const Params& params, const Placement& where) override {
    workload_ = &workload_named(params.at("workload"));
    calls_ = param_int(params, "calls");
    floor_calls_ = param_int(params, "floor_calls");
    // The last CPU by default: CPU 0 takes most of the housekeeping work.
    const auto allowed = timing::current_affinity();
    cpu_ = where.cpu >= 0 ? where.cpu : (allowed.empty() ? tasks::online_cpus().back() : allowed.back());

    // A run killed with the tracer set up left its originals in a journal:
    // put them back first (its function_graph would read as "in use").
    abandoned_ = tracing::restore_abandoned_sessions();
    tracefs_.emplace(tracing::open_tracefs());
    if (const auto reason = tracing::function_graph_unavailable(*tracefs_)) throw SkipBenchmark(*reason);
    const auto functions =
        tracing::parse_filter_functions(tracefs_->read("available_filter_functions").value_or(""));
    const auto symbol = tracing::resolve_symbol(functions, function_);
    if (!symbol) {
      throw SkipBenchmark(function_ + " is not traceable here: not in " +
                          tracefs_->path("available_filter_functions") +
                          " (inlined, notrace, or not in this kernel)");
    }
    symbol_ = *symbol;
    floor_symbol_.clear();
    const auto floor_candidates = handler_candidates(workload_->floor_call);
    for (const auto& candidate : floor_candidates) {
      if (const auto found = tracing::resolve_symbol(functions, candidate)) {
        floor_symbol_ = *found;
        break;
      }
    }
    if (floor_symbol_.empty()) {
      throw SkipBenchmark(std::string("no ") + workload_->floor_call + " handler (" + floor_candidates.front() +
                          ") is traceable here to measure the tracer floor");
    }
    if (floor_symbol_ == symbol_) throw InputError(name_ + ": the function is the tracer floor's own calibration function");

    // Ticks: function_graph's durations are ns of the kernel's local trace
    // clock whatever trace_clock says; the cycle counter's rate converts.
    ticks_per_ns_ = timing::calibration().ticks_per_second / 1e9;

    const long traced_calls = calls_ + floor_calls_ + 1000;  // + the CPU's other calls
    const long buffer_kb = (traced_calls * kBytesPerTracedCall * 2) / 1024 + 1024;
    session_.emplace(*tracefs_, tracing::FunctionGraphSession::Options{{symbol_, floor_symbol_}, cpu_, buffer_kb});
    tracer_setup_ = session_->describe();
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement&) override {
    tasks::ScopedAffinity pin({cpu_});  // the system call loops run here too
    const auto workload_ns = [&] {
      if (workload_->syscall_number == 0) {
        return measure_context_switch(Transport::Pipe, TaskKind::Thread, std::max(1L, calls_ / 2), cpu_).ns;
      }
      const double start = timing::monotonic_seconds();
      call_repeatedly(workload_->syscall_number, calls_);
      return (timing::monotonic_seconds() - start) * 1e9 / static_cast<double>(calls_);
    };

    session_->detach();
    const double untraced_before_ns = workload_ns();
    session_->attach();
    session_->clear();
    session_->start();
    double traced_ns = 0;
    try {
      traced_ns = workload_ns();
      call_repeatedly(workload_->floor_number, floor_calls_);
    } catch (...) {
      session_->stop();
      throw;
    }
    session_->stop();
    const std::uint64_t lost = session_->lost_since_clear();
    const auto trace = tracing::parse_graph_trace(session_->read_trace());
    session_->detach();
    // Left detached: the next repeat starts untraced, and finish() restores
    // the tracer found at the start.
    const double untraced_ns = (untraced_before_ns + workload_ns()) / 2;
    last_overhead_ = "traced " + std::to_string(traced_ns) + " ns, untraced " + std::to_string(untraced_ns) +
                     " ns per " + (workload_->syscall_number == 0 ? "switch" : "system call") + " in the last repeat";
    if (lost > 0 || trace.lost_events > 0) {
      throw RunError(name_ + ": the trace buffer of cpu" + std::to_string(cpu_) + " lost " +
                     std::to_string(std::max<std::uint64_t>(lost, trace.lost_events)) +
                     " events in this repeat; a mean over the rest would be biased (lower calls)");
    }
    const auto calls = durations_of(trace, symbol_, cpu_);
    const auto floor = durations_of(trace, floor_symbol_, cpu_);
    if (calls.empty()) {
      throw RunError(name_ + ": no call of " + symbol_ + " was traced on cpu" + std::to_string(cpu_) +
                     " while the workload ran (the workload does not reach it)");
    }
    if (floor.empty()) throw RunError(name_ + ": no call of " + floor_symbol_ + " was traced for the tracer floor");
    last_counts_ = std::to_string(calls.size()) + " calls of " + symbol_ + ", " + std::to_string(floor.size()) +
                   " of " + floor_symbol_ + " in the last repeat";

    const double mean = mean_of(calls);
    const auto classes = result_classes(params);
    return {{classes[0], mean},
            {classes[1], median_of(calls)},
            {classes[2], mean * ticks_per_ns_},
            {classes[3], mean_of(floor)},
            // Signed: where the tracer adds less than the loops' noise the
            // difference can come out below zero, and is reported as it is.
            {classes[4], 100.0 * (traced_ns - untraced_ns) / untraced_ns}};
  }

  void finish() override {
    session_.reset();  // restores every tracefs setting it changed
  }

  std::map<std::string, std::string> notes() const override {
    std::map<std::string, std::string> out{
        {"placement", std::string(workload_ && workload_->syscall_number != 0
                                      ? "the workload's and the floor's system call loops on cpu"
                                      : "both ping-pong threads and the floor's getppid loop on cpu") +
                          std::to_string(cpu_)}};
    if (!symbol_.empty()) {
      out["function"] = symbol_ == function_ ? symbol_ : function_ + " traced as " + symbol_;
      out["tracer floor function"] = floor_symbol_;
      out["tracer"] = tracer_setup_;
      out["ticks"] = std::string("function_graph durations are ns of the kernel's local trace clock; ticks = ns x ") +
                     timing::counter::kName + " rate calibrated against CLOCK_MONOTONIC (" +
                     std::to_string(ticks_per_ns_) + " ticks/ns)";
    }
    if (!last_counts_.empty()) out["traced calls"] = last_counts_;
    if (!last_overhead_.empty()) {
      out[workload_->syscall_number == 0 ? "workload per switch" : "workload per system call"] = last_overhead_;
    }
    std::string abandoned;
    for (const auto& line : abandoned_) abandoned += (abandoned.empty() ? "" : "; ") + line;
    if (!abandoned.empty()) out["tracefs restored"] = abandoned;
    return out;
  }

 private:
  std::string name_;
  std::string function_;
  std::string symbol_, floor_symbol_;
  const Workload* workload_ = nullptr;
  long calls_ = 0, floor_calls_ = 0;
  int cpu_ = 0;
  double ticks_per_ns_ = 0;
  std::string tracer_setup_, last_counts_, last_overhead_;
  std::vector<std::string> abandoned_;
  std::optional<tracing::Tracefs> tracefs_;
  std::optional<tracing::FunctionGraphSession> session_;
};

KBENCH_REGISTER_FAMILY(kPrefix, "kfunc/finish_task_switch",
                       [](const std::string& name) { return std::make_unique<Kfunc>(name); });

}  // namespace
}  // namespace kbench::bench
