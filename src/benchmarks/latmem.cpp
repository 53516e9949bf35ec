// lmbench/lat-mem-rd: memory read latency by pointer chasing, as lmbench's
// lat_mem_rd: every load's address comes from the previous load, so loads
// cannot overlap and the time per load is the latency of wherever the line
// lives (L1, L2, L3, DRAM, plus TLB misses).
//
// seq: line i points to line i+1 (stride bytes on); the hardware prefetcher
//      follows it, so this is the latency the prefetcher leaves visible.
// rnd: one random cycle over all lines of the buffer (Sattolo's algorithm),
//      which randomises both the order of pages and of lines within them,
//      so neither the stride nor the page prefetcher can predict the next line.
#include <sys/mman.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/benchmark.h"
#include "benchmarks/mm_probe.h"
#include "common/errors.h"
#include "timing/affinity.h"

namespace kbench::bench {
namespace {

// Sizes spelled as perf's mem families spell them ("16KB", "1GB").
using mm::kGiB;
using mm::kMiB;
using mm::size_label;

constexpr int kUnroll = 16;
// Fixed so that every session chases the same chain.
constexpr std::uint64_t kChainSeed = 0x6c6d62656e6368ull;

struct LatParams {
  std::vector<std::uint64_t> sizes;
  std::uint64_t stride = 0;
  double duration = 0;
};

LatParams parse_lat_params(const Params& params) {
  LatParams p;
  p.stride = parse_size(param_string(params, "stride"), "parameter 'stride'");
  // The range of each value is checked against params(); what remains are
  // the rules between values.
  if (p.stride % sizeof(void*) != 0) {
    throw InputError("lmbench/lat-mem-rd: parameter 'stride' = '" + param_string(params, "stride") +
                     "': expected a multiple of 8 bytes");
  }
  for (const auto& item : param_list(params, "sizes")) {
    const std::uint64_t size = parse_size(item, "parameter 'sizes'");
    if (size < 2 * p.stride || size % p.stride != 0) {
      throw InputError("lmbench/lat-mem-rd: parameter 'sizes': '" + item +
                       "': expected a multiple of the stride and at least two strides");
    }
    p.sizes.push_back(size);
  }
  p.duration = param_double(params, "duration");
  return p;
}

std::string label(std::uint64_t size, std::uint64_t stride, const char* kind) {
  return "size:" + size_label(size) + " P:1 stride:" + std::to_string(stride) + "B " + kind + "_read_lat";
}

// `iterations` x kUnroll dependent loads from `start`; returns where it ended
// so that the compiler must perform every load.
__attribute__((noinline)) void* chase(void* start, std::uint64_t iterations) {
  void* const* p = static_cast<void* const*>(start);
  for (std::uint64_t i = 0; i < iterations; ++i) {
#define KBENCH_HOP p = static_cast<void* const*>(*p);
    KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP
    KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP KBENCH_HOP
#undef KBENCH_HOP
  }
  return const_cast<void*>(static_cast<const void*>(p));
}
static_assert(kUnroll == 16, "chase() unrolls 16 hops");

void* volatile g_sink;

// CPU time of the calling thread: the chase is single-threaded and does no
// system calls, so this is its run time without the slices other tasks got
// on the same CPU (wall-clock time would inflate every load by the share of
// the CPU the machine's other load took).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// An anonymous buffer holding one pointer chain; 4KB pages so that every
// session sees the same TLB behaviour whatever the THP setting.
class Chain {
 public:
  Chain(std::uint64_t bytes, std::uint64_t stride, bool random) : bytes_(bytes) {
    void* raw = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
      throw RunError("lmbench/lat-mem-rd: mmap of " + size_label(bytes) + " failed: " + std::strerror(errno));
    }
    base_ = static_cast<char*>(raw);
    madvise(base_, bytes_, MADV_NOHUGEPAGE);
    const std::uint64_t lines = bytes / stride;
    auto at = [&](std::uint64_t line) { return reinterpret_cast<void**>(base_ + line * stride); };
    if (!random) {
      for (std::uint64_t i = 0; i < lines; ++i) *at(i) = at((i + 1) % lines);
      return;
    }
    // Sattolo: a uniformly random permutation that is a single cycle, so
    // the chase visits every line once per lap.
    std::vector<std::uint32_t> next(lines);
    for (std::uint64_t i = 0; i < lines; ++i) next[i] = static_cast<std::uint32_t>(i);
    std::mt19937_64 rng(kChainSeed);
    for (std::uint64_t i = lines - 1; i > 0; --i) {
      std::uniform_int_distribution<std::uint64_t> pick(0, i - 1);
      std::swap(next[i], next[pick(rng)]);
    }
    for (std::uint64_t i = 0; i < lines; ++i) *at(i) = at(next[i]);
  }
  ~Chain() {
    if (base_) munmap(base_, bytes_);
  }
  Chain(const Chain&) = delete;
  Chain& operator=(const Chain&) = delete;
  void* head() const { return base_; }
  std::uint64_t lines(std::uint64_t stride) const { return bytes_ / stride; }

 private:
  std::uint64_t bytes_ = 0;
  char* base_ = nullptr;
};

// ns per load: one untimed lap to bring the chain into cache/TLB as far as
// it fits, a short calibration, then enough loads to fill `seconds`.
double measure_chain(const Chain& chain, std::uint64_t stride, double seconds) {
  const std::uint64_t lap = (chain.lines(stride) + kUnroll - 1) / kUnroll;
  void* p = chase(chain.head(), lap);
  std::uint64_t probe = 4096;
  double t0 = thread_cpu_seconds();
  p = chase(p, probe);
  double elapsed = thread_cpu_seconds() - t0;
  while (elapsed < 0.01) {
    probe *= 4;
    t0 = thread_cpu_seconds();
    p = chase(p, probe);
    elapsed = thread_cpu_seconds() - t0;
  }
  const double per_iteration = elapsed / static_cast<double>(probe);
  const auto iterations = static_cast<std::uint64_t>(std::max(1.0, seconds / per_iteration));
  t0 = thread_cpu_seconds();
  p = chase(p, iterations);
  elapsed = thread_cpu_seconds() - t0;
  g_sink = p;
  return elapsed * 1e9 / (static_cast<double>(iterations) * kUnroll);
}

class LatMemRd final : public Benchmark {
 public:
  std::string name() const override { return "lmbench/lat-mem-rd"; }
  std::string description() const override {
    return "memory read latency by dependent-load pointer chase, random (one Sattolo cycle over all lines) "
           "and sequential, per buffer size, as lmbench lat_mem_rd";
  }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec{"sizes", "4MB,16MB,64MB,256MB", "4MB,16MB", "buffer sizes to chase through (comma-separated)"}
            .size(16, 16.0 * kGiB)
            .list_of(),
        ParamSpec{"stride", "128B", "128B", "distance between chained lines"}.size(8, 4096),
        ParamSpec{"duration", "1", "0.1", "seconds of timed chasing per result class (not part of the name)"}
            .number(0.001, 600),
    };
  }
  std::vector<ResultClass> result_classes(const Params& params) const override {
    const LatParams p = parse_lat_params(params);
    std::vector<ResultClass> out;
    for (const auto size : p.sizes) {
      out.push_back({label(size, p.stride, "rnd"), "ns", Better::Lower});
      out.push_back({label(size, p.stride, "seq"), "ns", Better::Lower});
    }
    return out;
  }
  void prepare(const Params& params, const Placement& where) override {
    const LatParams p = parse_lat_params(params);
    placement_ = where.cpu >= 0 ? "cpu" + std::to_string(timing::pin_to_cpu(where.cpu).front()) : "not pinned";
    // Built once: building a 256MB random chain costs more than chasing it.
    for (const auto size : p.sizes) {
      chains_.push_back(std::make_unique<Chain>(size, p.stride, true));
      chains_.push_back(std::make_unique<Chain>(size, p.stride, false));
    }
  }
  std::vector<Measurement> run_repeat(const Params& params, const Placement& /*where*/) override {
    const LatParams p = parse_lat_params(params);
    if (chains_.size() != 2 * p.sizes.size()) throw RunError("lmbench/lat-mem-rd: run_repeat() before prepare()");
    std::vector<Measurement> out;
    const auto classes = result_classes(params);
    for (std::size_t i = 0; i < classes.size(); ++i) {
      out.push_back({classes[i], measure_chain(*chains_[i], p.stride, p.duration)});
    }
    return out;
  }
  void finish() override { chains_.clear(); }
  std::map<std::string, std::string> notes() const override {
    return {{"placement", placement_.empty() ? "not pinned" : placement_},
            {"pages", "4KB (MADV_NOHUGEPAGE), so TLB misses are part of the latency"}};
  }

 private:
  std::vector<std::unique_ptr<Chain>> chains_;
  std::string placement_;
};

KBENCH_REGISTER("lmbench/lat-mem-rd", [] { return std::make_unique<LatMemRd>(); });

}  // namespace
}  // namespace kbench::bench
