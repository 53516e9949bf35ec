// canary/loop: the speed of the machine itself, in a form no kernel change
// moves. A dependent chain of integer multiply-adds runs in registers only:
// no loads or stores, no system calls, no page faults, so what it takes per
// iteration depends on the core's clock and on the time the CPU is taken
// away (steal on a VM host, interrupts, other tasks), not on the kernel
// measured. Measured in every session beside the other benchmarks it is a
// covariate of the session's machine speed; bench/canary-covariate tests
// whether adjusting session means by it shrinks the noise between runs.
//
// Each repeat times `iterations` iterations in blocks of kBlockIterations,
// each block in its own cycle-counter bracket (the bracket of the syscall
// family), and the whole loop in an outer one. `mean (ns)` is the whole
// loop's time per iteration: it includes every preemption, as the mean of
// syscall/* and the loop time of ctxsw/* do. `median (ns)` is the median
// block's time per iteration: an interrupted block is an outlier there, so it
// follows the clock rate alone. The brackets' own cost is not subtracted: two
// counter reads per block of 100,000 iterations are ~0.02 % of it, the same
// in every session.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/benchmark.h"
#include "benchmarks/sched_tasks.h"
#include "common/errors.h"
#include "timing/affinity.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"

namespace kbench::bench {
namespace {

// About 0.1-0.5 ms per block on current cores: far below a scheduler tick,
// so most blocks run uninterrupted and the median block is a clean one.
constexpr std::int64_t kBlockIterations = 100000;

// Knuth's MMIX linear congruential step: one multiply and one add, each
// depending on the previous iteration's result.
constexpr std::uint64_t kMultiplier = 6364136223846793005ULL;
constexpr std::uint64_t kIncrement = 1442695040888963407ULL;

// noinline: every repeat and every session runs the same machine code.
__attribute__((noinline)) std::uint64_t dependent_chain(std::uint64_t x, std::int64_t iterations) {
  for (std::int64_t i = 0; i < iterations; ++i) {
    x = x * kMultiplier + kIncrement;
    // Emits no instruction, but the compiler must assume x changed here: it
    // can neither compute the chain in closed form, nor vectorise or drop it,
    // and x stays in a register.
    asm volatile("" : "+r"(x));
  }
  return x;
}

class CanaryLoop : public Benchmark {
 public:
  std::string name() const override { return "canary/loop"; }
  std::string description() const override {
    return "machine-speed canary: a dependent integer multiply-add chain in registers (no memory traffic, no "
           "system calls), ns per iteration; mean = whole loop, median = median block of 100000 iterations";
  }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec{"iterations", "200000000", "50000000", "loop iterations timed per repeat"}.integer(1, 1e11)};
  }
  std::vector<ResultClass> result_classes(const Params&) const override {
    return {{"mean", "ns", Better::Lower}, {"median", "ns", Better::Lower}};
  }

  void prepare(const Params& params, const Placement& where) override {
    iterations_ = param_int(params, "iterations");
    timing::pin_to_cpu(tasks::home_cpu(where.cpu));
    cpus_ = timing::current_affinity();
    calibration_ = timing::calibration();
    block_ticks_per_iteration_.reserve(static_cast<std::size_t>((iterations_ + kBlockIterations - 1) / kBlockIterations));
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement&) override {
    block_ticks_per_iteration_.clear();
    std::uint64_t x = seed_;
    const std::uint64_t start = timing::counter::begin();
    for (std::int64_t done = 0; done < iterations_;) {
      const std::int64_t block = std::min(kBlockIterations, iterations_ - done);
      const std::uint64_t block_start = timing::counter::begin();
      x = dependent_chain(x, block);
      const std::uint64_t block_stop = timing::counter::end();
      block_ticks_per_iteration_.push_back(double(block_stop - block_start) / double(block));
      done += block;
    }
    const std::uint64_t stop = timing::counter::end();
    // Only the end of the chain leaves the registers: the next repeat starts
    // from it, so no repeat's chain is dead code.
    seed_ = x;
    const auto classes = result_classes(params);
    return {{classes[0], positive_ns(double(stop - start) / double(iterations_), "mean")},
            {classes[1], positive_ns(median(block_ticks_per_iteration_), "median")}};
  }

  std::map<std::string, std::string> notes() const override {
    // Placed as syscall/* is (--cpu's CPU or the first allowed one), so the
    // canary sees the CPU the rows it adjusts see.
    const std::string placement =
        cpus_.size() == 1 ? "cpu" + std::to_string(cpus_.front()) : "unpinned, cpus " + tasks::describe_cpus(cpus_);
    return {{"placement", placement},
            {"counter", timing::counter::kName},
            {"counter_hz", std::to_string(calibration_.ticks_per_second)},
            {"block_iterations", std::to_string(kBlockIterations)}};
  }

 private:
  static double median(std::vector<double> values) {
    const std::size_t middle = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
    const double upper = values[middle];
    if (values.size() % 2 == 1) return upper;
    return (upper + *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle))) / 2;
  }

  double positive_ns(double ticks, const char* what) const {
    // A counter that did not advance over a whole block would report 0.
    if (!(ticks > 0)) throw RunError(std::string("canary/loop: ") + what + " of 0 ticks per iteration");
    return calibration_.ticks_to_ns(ticks);
  }

  std::int64_t iterations_ = 0;
  std::uint64_t seed_ = 1;
  std::vector<int> cpus_;
  timing::Calibration calibration_;
  std::vector<double> block_ticks_per_iteration_;
};

KBENCH_REGISTER("canary/loop", [] { return std::make_unique<CanaryLoop>(); });

}  // namespace
}  // namespace kbench::bench
