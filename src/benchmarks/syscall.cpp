// syscall/getpid, syscall/getppid, syscall/invalid: the latency of one cheap
// system call, every call timed on its own with the cycle counter.
//
// Each call is bracketed by counter::begin()/end(); the bracket's own cost
// (the mode of empty brackets, or their mean on a coarse counter such as a
// 25 MHz cntvct_el0, measured on the same CPU in prepare()) is subtracted from
// the mean and the percentiles. Latencies go into a bounded
// histogram, so memory does not grow with the number of calls.
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <memory>
#include <string>

#include "benchmarks/benchmark.h"
#include "common/errors.h"
#include "timing/affinity.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"
#include "timing/histogram.h"

namespace kbench::bench {
namespace {

// A number beyond every kernel's syscall table (x86-64 is near 470, arm64
// below 470): the kernel's entry code rejects it with ENOSYS, so
// syscall/invalid measures entry and exit with no work in between.
constexpr long kUnusedSyscall = 100000;

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
           " via syscall(2), each call timed with the cycle counter, timer cost subtracted";
  }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec{"calls", "10000000", "1000000", "system calls timed per repeat"}.integer(1, 1e11)};
  }
  std::vector<ResultClass> result_classes(const Params&) const override {
    return {{"mean", "ns", Better::Lower},
            {"p99", "ns", Better::Lower},
            {"p99.9", "ns", Better::Lower}};
  }

  void prepare(const Params& params, const Placement& where) override {
    calls_ = param_int(params, "calls");
    if (where.cpu >= 0) timing::pin_to_cpu(where.cpu);
    calibration_ = timing::calibration();
    overhead_ = timing::measure_timer_overhead();
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
    std::int64_t wrong_results = 0;
    const long number = kind_.number;
    for (std::int64_t i = 0; i < calls_; ++i) {
      const std::uint64_t start = timing::counter::begin();
      const long result = syscall(number);
      const std::uint64_t stop = timing::counter::end();
      histogram_.record(stop - start);
      // getppid may legitimately change (reparenting), so only failure is checked.
      wrong_results += kind_.expect_enosys ? result != -1 : result < 0;
    }
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
            {rcs[1], net_ns(histogram_.percentile(99.0), "p99")},
            {rcs[2], net_ns(histogram_.percentile(99.9), "p99.9")}};
  }

  std::map<std::string, std::string> notes() const override {
    std::map<std::string, std::string> notes = {
        {"counter", timing::counter::kName},
        {"counter_hz", std::to_string(calibration_.ticks_per_second)},
        {"timer_overhead_ticks", std::to_string(overhead_.cost_ticks)},
        {"timer_overhead_statistic", overhead_.statistic},
        {"timer_overhead_min_ticks", std::to_string(overhead_.min_ticks)},
        {"timer_overhead_ns", std::to_string(calibration_.ticks_to_ns(overhead_.cost_ticks))}};
    // arm64: CNTFRQ_EL0, what the calibration is checked against.
    if (calibration_.nominal_hz > 0) notes["counter_nominal_hz"] = std::to_string(calibration_.nominal_hz);
    return notes;
  }

 private:
  double net_ns(double gross_ticks, const char* what) const {
    const double net = gross_ticks - overhead_.cost_ticks;
    if (!(net > 0)) {
      throw RunError(std::string(what) + " of " + std::to_string(gross_ticks) +
                     " ticks is not above the timer's own cost of " +
                     std::to_string(overhead_.cost_ticks) + " ticks");
    }
    return calibration_.ticks_to_ns(net);
  }

  SyscallKind kind_;
  std::int64_t calls_ = 0;
  timing::Calibration calibration_;
  timing::TimerOverhead overhead_;
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
