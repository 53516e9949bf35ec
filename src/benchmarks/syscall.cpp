// syscall/getpid, syscall/getppid, syscall/invalid: the latency of one cheap
// system call, every call timed on its own with the cycle counter.
//
// Each call is bracketed by counter::begin()/end(). What the bracket adds to
// a call is measured in prepare(), on the same CPU, where it is paid: the same
// call loop run bare (timed as one block) and bracketed, alternating over
// many short rounds (timing/bracket_cost.h). That cost, not the cost of an empty
// bracket, is subtracted from the mean, the median and the percentiles. On
// the x86-64 VM of the study the two agree within ~1.5 ns (the reads cost
// 12.4-13.1 ns around a getppid, 11.5-11.7 ns empty: docs/benchmarks/syscall.md,
// "Timer-cost study"); the in-call figure is the one that is right by
// construction, on any CPU. Latencies go into a bounded histogram, so memory
// does not grow with the number of calls.
//
// The mean is the mean of all calls, as the seed defines it: a rare
// preemption inside a call (milliseconds against ~100 ns) can lift it above
// the p99. `median (ns)` is the robust companion.
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <memory>
#include <string>

#include "benchmarks/benchmark.h"
#include "benchmarks/sched_tasks.h"
#include "common/errors.h"
#include "timing/affinity.h"
#include "timing/bracket_cost.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"
#include "timing/histogram.h"

namespace kbench::bench {
namespace {

// A number beyond every kernel's syscall table (x86-64 is near 470, arm64
// below 470): the kernel's entry code rejects it with ENOSYS, so
// syscall/invalid measures entry and exit with no work in between.
constexpr long kUnusedSyscall = 100000;

// The timed loop, shared by run_repeat() and prepare()'s bracket-cost
// measurement so both run the same machine code (hence noinline). Returns the
// number of calls whose result was wrong.
__attribute__((noinline)) std::int64_t bracketed_calls(long number, bool expect_enosys, std::int64_t calls,
                                                       timing::Histogram& histogram) {
  std::int64_t wrong_results = 0;
  for (std::int64_t i = 0; i < calls; ++i) {
    const std::uint64_t start = timing::counter::begin();
    const long result = syscall(number);
    const std::uint64_t stop = timing::counter::end();
    histogram.record(stop - start);
    // getppid may legitimately change (reparenting), so only failure is checked.
    wrong_results += expect_enosys ? result != -1 : result < 0;
  }
  return wrong_results;
}

// The same calls with no timing inside: the loop of `perf bench syscall basic`.
__attribute__((noinline)) void bare_calls(long number, std::int64_t calls) {
  for (std::int64_t i = 0; i < calls; ++i) syscall(number);
}

struct SyscallKind {
  const char* name;
  const char* what;
  long number;
  bool expect_enosys;
};

class SyscallLatency : public Benchmark {
 public:
  explicit SyscallLatency(SyscallKind kind) : kind_(kind) {}

  std::string name() const override { return kind_.name; }
  std::string description() const override {
    return std::string("latency of ") + kind_.what +
           " via syscall(2), each call timed with the cycle counter, the bracket's measured cost in a call "
           "subtracted; mean = mean of all calls (rare preemptions can lift it above p99), median = robust companion";
  }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec{"calls", "10000000", "1000000", "system calls timed per repeat"}.integer(1, 1e11)};
  }
  std::vector<ResultClass> result_classes(const Params&) const override {
    return {{"mean", "ns", Better::Lower},
            {"median", "ns", Better::Lower},
            {"p99", "ns", Better::Lower},
            {"p99.9", "ns", Better::Lower}};
  }

  void prepare(const Params& params, const Placement& where) override {
    calls_ = param_int(params, "calls");
    // Every session on one CPU, --cpu's or the first allowed: a VM's vCPUs
    // run at different speeds that change by the minute (on the 2-vCPU test
    // VM one was 15 % slower for a minute, then the other), so a session
    // left to the scheduler draws either; sessions on one CPU a few seconds
    // apart share its speed, which a plan's rounds cancel
    // (docs/benchmarks/syscall.md, "Placement").
    cpu_ = tasks::home_cpu(where.cpu);
    pinned_by_agent_ = where.cpu >= 0;
    timing::pin_to_cpu(cpu_);
    calibration_ = timing::calibration();
    overhead_ = timing::measure_timer_overhead();
    const long number = kind_.number;
    const bool expect_enosys = kind_.expect_enosys;
    in_call_ = timing::measure_bracket_cost_in_call(
        [number](std::int64_t n) { bare_calls(number, n); },
        [this, number, expect_enosys](std::int64_t n) {
          histogram_.clear();
          bracketed_calls(number, expect_enosys, n, histogram_);
          return histogram_.sum();
        },
        overhead_.cost_ticks);
    subtracted_ = timing::choose_bracket_cost(in_call_, overhead_.cost_ticks);
    if (kind_.expect_enosys) {
      errno = 0;
      const long result = syscall(kind_.number);
      if (result != -1 || errno != ENOSYS) {
        throw RunError("syscall " + std::to_string(kind_.number) + " returned " +
                       std::to_string(result) + " (errno " + std::to_string(errno) +
                       "), expected -1 with ENOSYS");
      }
    }
  }

  std::vector<Measurement> run_repeat(const Params&, const Placement&) override {
    histogram_.clear();
    const std::int64_t wrong_results = bracketed_calls(kind_.number, kind_.expect_enosys, calls_, histogram_);
    if (wrong_results > 0) {
      throw RunError(std::to_string(wrong_results) + " of " + std::to_string(calls_) + " " +
                     kind_.what + (kind_.expect_enosys ? " calls did not fail" : " calls failed"));
    }
    if (kind_.expect_enosys && errno != ENOSYS) {
      throw RunError(std::string(kind_.what) + " left errno " + std::to_string(errno) +
                     ", expected ENOSYS");
    }
    const auto rcs = result_classes({});
    return {{rcs[0], net_ns(histogram_.mean(), "mean")},
            {rcs[1], net_ns(histogram_.interpolated_median(double(overhead_.step_ticks)), "median")},
            {rcs[2], net_ns(histogram_.percentile(99.0), "p99")},
            {rcs[3], net_ns(histogram_.percentile(99.9), "p99.9")}};
  }

  std::map<std::string, std::string> notes() const override {
    std::map<std::string, std::string> notes = {
        {"counter", timing::counter::kName},
        {"counter_begin_read", timing::counter::kBeginSequence},
        {"counter_end_read", timing::counter::end_sequence()},
        {"counter_hz", std::to_string(calibration_.ticks_per_second)},
        {"timer_overhead_ticks", std::to_string(overhead_.cost_ticks)},
        {"timer_overhead_statistic", overhead_.statistic},
        {"timer_overhead_min_ticks", std::to_string(overhead_.min_ticks)},
        {"timer_overhead_ns", std::to_string(calibration_.ticks_to_ns(overhead_.cost_ticks))},
        // What is subtracted: the bracket's cost inside a call loop.
        {"timer_cost_in_call_ticks", std::to_string(in_call_.cost_ticks)},
        {"timer_cost_in_call_ns", std::to_string(calibration_.ticks_to_ns(in_call_.cost_ticks))},
        {"timer_cost_in_call_raw_ticks", std::to_string(in_call_.raw_median_ticks)},
        {"timer_cost_in_call_bare_ns_per_call", std::to_string(calibration_.ticks_to_ns(in_call_.bare_ticks_per_call))},
        {"timer_cost_in_call_bracketed_ns_per_call",
         std::to_string(calibration_.ticks_to_ns(in_call_.bracketed_ticks_per_call))},
        {"timer_cost_in_call_rounds",
         std::to_string(in_call_.rounds) + " x " + std::to_string(in_call_.calls_per_round) + " calls"},
        {"timer_cost_subtracted", subtracted_.in_call ? "in_call" : "empty_bracket"},
        {"placement", "cpu" + std::to_string(cpu_) + (pinned_by_agent_ ? " (--cpu)" : " (the first allowed CPU)")}};
    if (!subtracted_.in_call) notes["timer_cost_fallback"] = subtracted_.reason;
    // arm64: CNTFRQ_EL0, what the calibration is checked against.
    if (calibration_.nominal_hz > 0) notes["counter_nominal_hz"] = std::to_string(calibration_.nominal_hz);
    return notes;
  }

 private:
  double net_ns(double gross_ticks, const char* what) const {
    const double net = gross_ticks - subtracted_.cost_ticks;
    if (!(net > 0)) {
      throw RunError(std::string(what) + " of " + std::to_string(gross_ticks) +
                     " ticks is not above the timer's own cost in a call of " +
                     std::to_string(subtracted_.cost_ticks) + " ticks");
    }
    return calibration_.ticks_to_ns(net);
  }

  SyscallKind kind_;
  std::int64_t calls_ = 0;
  int cpu_ = -1;
  bool pinned_by_agent_ = false;
  timing::Calibration calibration_;
  timing::TimerOverhead overhead_;
  timing::BracketCostInCall in_call_;
  timing::BracketCostChoice subtracted_;
  timing::Histogram histogram_;
};

KBENCH_REGISTER("syscall/getpid", [] {
  return std::make_unique<SyscallLatency>(SyscallKind{"syscall/getpid", "getpid", SYS_getpid, false});
});
KBENCH_REGISTER("syscall/getppid", [] {
  return std::make_unique<SyscallLatency>(SyscallKind{"syscall/getppid", "getppid", SYS_getppid, false});
});
KBENCH_REGISTER("syscall/invalid", [] {
  return std::make_unique<SyscallLatency>(
      SyscallKind{"syscall/invalid", "an unused syscall number (ENOSYS)", kUnusedSyscall, true});
});

}  // namespace
}  // namespace kbench::bench
