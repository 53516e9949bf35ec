// mmtests/sysbench-cpu, mmtests/sysbench-mutex, mmtests/sysbench-thread: the
// work of one sysbench 1.0 "event" of its cpu, mutex and threads tests, done by
// N threads, reported the way mmtests extracts sysbench's output:
//   cpu    events per second over a time-limited run         (higher is better)
//   mutex  mean time a thread needs for its one event, usec  (lower is better)
//   thread 95th percentile of per-event latency, usec        (lower is better)
// docs/benchmarks/sysbench.md explains each, including where mmtests' labels
// differ from the units reported here.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/benchmark.h"
#include "common/errors.h"
#include "timing/clock.h"
#include "timing/histogram.h"

namespace kbench::bench {
namespace {

// ---------------------------------------------------------------------------
// Threads and their placement

int online_cpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? int(n) : 1;
}

// mmtests scales thread counts from 1 to twice the CPU count. On small
// machines its stride would give only the two ends, so "auto" also includes
// half the CPUs and the CPU count: on 2 CPUs 1, 2, 4.
std::vector<int> auto_thread_ladder(int cpus) {
  std::set<int> counts{1, std::max(1, cpus / 2), cpus, 2 * cpus};
  return {counts.begin(), counts.end()};
}

// Values were checked against params() (kThreadsParam, kPinParam).
std::vector<int> parse_thread_ladder(const Params& params, int cpus) {
  if (param_string(params, "threads") == "auto") return auto_thread_ladder(cpus);
  std::vector<int> counts;
  for (const auto& item : param_list(params, "threads")) counts.push_back(std::stoi(item));
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

enum class Pinning { Free, AgentCpu };

Pinning parse_pinning(const Params& params) {
  const std::string& text = param_string(params, "pin");
  if (text == "free") return Pinning::Free;
  return Pinning::AgentCpu;
}

// Applied by each worker to itself. The agent pins its own thread to --cpu and
// new threads inherit that, so "free" must widen the mask explicitly: sysbench
// leaves its threads to the scheduler on every CPU.
void place_worker(Pinning pinning, int agent_cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pinning == Pinning::AgentCpu && agent_cpu >= 0) {
    CPU_SET(agent_cpu, &set);
  } else {
    // The kernel intersects this with the online CPUs and the cpuset.
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw RunError(std::string("sched_setaffinity for a sysbench worker: ") + std::strerror(errno));
  }
}

std::string placement_note(Pinning pinning, int agent_cpu) {
  if (pinning == Pinning::AgentCpu && agent_cpu >= 0) {
    return "all threads pinned to cpu" + std::to_string(agent_cpu);
  }
  return "threads unpinned: the scheduler places them on any of the " +
         std::to_string(online_cpus()) + " online CPUs (as sysbench does)";
}

// Releases all workers at once so that none runs alone while the others are
// still being created, like sysbench's start barrier. A start that failed
// (a thread or the timer could not be created) releases them abandoned: they
// return without running, since nothing would ever tell a time-limited
// worker to stop.
class StartGate {
 public:
  // Whether the worker is to run: false when the start was abandoned.
  bool wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
    return !abandoned_;
  }
  void open() { release(false); }
  void abandon() { release(true); }

 private:
  void release(bool abandoned) {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
      abandoned_ = abandoned;
    }
    cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  bool abandoned_ = false;
};

// Runs body(index) on `count` threads started together; rethrows the first
// exception a worker raised. `on_release` runs as the workers are released.
// Returns the wall time from release to the last worker's end, in seconds.
template <typename Body, typename OnRelease>
double run_workers(int count, Pinning pinning, int agent_cpu, Body body, OnRelease on_release) {
  StartGate gate;
  std::mutex error_mutex;
  std::exception_ptr error;
  std::vector<std::thread> workers;
  workers.reserve(std::size_t(count));
  auto worker = [&](int index) {
    try {
      place_worker(pinning, agent_cpu);
      if (gate.wait()) body(index);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  auto join_all = [&] {
    for (auto& thread : workers) thread.join();
  };
  double started = 0;
  try {
    for (int i = 0; i < count; ++i) workers.emplace_back(worker, i);
    started = timing::monotonic_seconds();
    on_release();
  } catch (...) {
    gate.abandon();
    join_all();
    throw;
  }
  gate.open();
  join_all();
  const double elapsed = timing::monotonic_seconds() - started;
  if (error) std::rethrow_exception(error);
  return elapsed;
}

template <typename Body>
double run_workers(int count, Pinning pinning, int agent_cpu, Body body) {
  return run_workers(count, pinning, agent_cpu, body, [] {});
}

// Stops time-limited workers: each checks it after each event, so an event in
// flight completes and is counted, as in sysbench, and every worker completes
// one event at least: a worker the scheduler started late still gives the run
// a rate (events over the wall time they took) rather than none.
void sleep_then_stop(double seconds, std::atomic<bool>& stop) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true, std::memory_order_relaxed);
}

// Time-limited variant: workers loop until `stop`. The clock starts as the
// workers are released, not before they exist: creating threads can take
// longer than a short run's whole time on a loaded machine.
template <typename Body>
double run_workers_for(double seconds, int count, Pinning pinning, int agent_cpu,
                       std::atomic<bool>& stop, Body body) {
  stop.store(false);
  std::exception_ptr timer_error;
  std::thread timer;
  const auto start_timer = [&] {
    timer = std::thread([&] {
      try {
        sleep_then_stop(seconds, stop);
      } catch (...) {
        timer_error = std::current_exception();
        stop.store(true);
      }
    });
  };
  double elapsed = 0;
  try {
    elapsed = run_workers(count, pinning, agent_cpu, body, start_timer);
  } catch (...) {
    stop.store(true);
    if (timer.joinable()) timer.join();
    throw;
  }
  timer.join();
  if (timer_error) std::rethrow_exception(timer_error);
  return elapsed;
}

const ParamSpec kThreadsParam =
    ParamSpec{"threads", "auto", "auto",
              "thread counts to run, comma-separated, or 'auto': 1, CPUs/2, CPUs and 2*CPUs (online CPUs)"}
        .integer(1, 4096)
        .list_of()
        .or_word("auto");
const ParamSpec kPinParam = ParamSpec{"pin", "free", "free",
                                      "'free': threads may run on every CPU, placed by the scheduler as sysbench's "
                                      "are; 'agent-cpu': all threads on the agent's --cpu"}
                                .choice({"free", "agent-cpu"});
const ParamSpec kTimeParam = ParamSpec{"time", "2", "0.3", "seconds each thread count runs"}.number(0.001, 3600);

// The three tests run the same thread ladder, one result class per thread
// count, and note where their threads were placed; each names its result
// class and checks its own params.
class SysbenchBase : public Benchmark {
 public:
  std::map<std::string, std::string> notes() const override { return notes_; }
  std::vector<ResultClass> result_classes(const Params& params) const override {
    std::vector<ResultClass> out;
    for (int n : parse_thread_ladder(params, online_cpus())) out.push_back(result_class(n));
    return out;
  }
  void prepare(const Params& params, const Placement& where) override {
    notes_["placement"] = placement_note(parse_pinning(params), where.cpu);
  }

 protected:
  SysbenchBase(std::string class_prefix, std::string unit, Better better)
      : class_prefix_(std::move(class_prefix)), unit_(std::move(unit)), better_(better) {}
  // "<prefix><threads>", e.g. sysbenchcpu-4.
  ResultClass result_class(int threads) const { return {class_prefix_ + std::to_string(threads), unit_, better_}; }

 private:
  std::map<std::string, std::string> notes_;
  std::string class_prefix_;
  std::string unit_;
  Better better_;
};

// ---------------------------------------------------------------------------
// cpu: one event is a trial-division prime search over 3..max_prime-1 in
// 64-bit integers with a floating-point square root bound, as sysbench's.

unsigned long long count_primes_below(unsigned long long max_prime) {
  unsigned long long primes = 0;
  for (unsigned long long candidate = 3; candidate < max_prime; ++candidate) {
    const double bound = std::sqrt(double(candidate));
    unsigned long long divisor = 2;
    while (double(divisor) <= bound && candidate % divisor != 0) ++divisor;
    if (double(divisor) > bound) ++primes;
  }
  return primes;
}

class SysbenchCpu : public SysbenchBase {
 public:
  SysbenchCpu() : SysbenchBase("sysbenchcpu-", "ops/second", Better::Higher) {}
  std::string name() const override { return "mmtests/sysbench-cpu"; }
  std::string description() const override {
    return "sysbench cpu: N threads each repeat a trial-division prime search up to "
           "cpu-max-prime; events per second";
  }
  std::vector<ParamSpec> params() const override {
    return {kThreadsParam,
            ParamSpec{"cpu-max-prime", "10000", "10000", "upper limit of the prime search of one event"}
                .integer(3, 100000000),
            kTimeParam,
            kPinParam};
  }
  std::vector<Measurement> run_repeat(const Params& params, const Placement& where) override {
    const auto max_prime = (unsigned long long)param_int(params, "cpu-max-prime");
    const double seconds = param_double(params, "time");
    const Pinning pinning = parse_pinning(params);
    std::vector<Measurement> out;
    for (int n : parse_thread_ladder(params, online_cpus())) {
      std::atomic<bool> stop{false};
      std::vector<std::uint64_t> events(std::size_t(n), 0);
      std::atomic<unsigned long long> sink{0};
      const double elapsed = run_workers_for(seconds, n, pinning, where.cpu, stop, [&](int index) {
        std::uint64_t done = 0;
        unsigned long long primes = 0;
        do {
          primes = count_primes_below(max_prime);
          ++done;
        } while (!stop.load(std::memory_order_relaxed));
        events[std::size_t(index)] = done;
        // Publishing the result keeps the search from being optimised away.
        sink.fetch_add(primes, std::memory_order_relaxed);
      });
      std::uint64_t total = 0;
      for (auto e : events) total += e;
      out.push_back({result_class(n),
                     double(total) / elapsed});
    }
    return out;
  }

 private:
};

// ---------------------------------------------------------------------------
// mutex: each thread does exactly one event: mutex-locks times, pick a random
// mutex of mutex-num, spin mutex-loops empty iterations, then lock it, bump a
// shared counter, unlock. The result is the mean per-thread event time.

struct PaddedMutex {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  char pad[256];  // as sysbench's: neighbouring mutexes do not share cache lines
};

// The counters are 32-bit as sysbench's (unsigned int): on CPUs that fold
// immediate adds at rename (Intel Golden Cove and later) a 64-bit `add $1`
// chain runs about twice as fast as a 32-bit one, and the empty loop is
// nearly all of the event's time (docs/benchmarks/sysbench.md).
struct MutexEvent {
  std::uint32_t locks;
  std::uint32_t loops;
};

// A per-thread generator, so that drawing a mutex index takes no shared lock.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// The empty loop must survive the optimiser: a compiler barrier per
// iteration, and the bound read from the event each time, costs what
// sysbench's loop costs.
[[gnu::noinline]] void spin_empty_loops(const MutexEvent& event) {
  for (std::uint32_t i = 0; i < event.loops; ++i) asm volatile("" ::: "memory");
}

class SysbenchMutex : public SysbenchBase {
 public:
  SysbenchMutex() : SysbenchBase("sysbenchmutex-", "usec", Better::Lower) {}
  std::string name() const override { return "mmtests/sysbench-mutex"; }
  std::string description() const override {
    return "sysbench mutex: each of N threads takes random mutexes mutex-locks times with "
           "mutex-loops empty iterations between; mean time per thread";
  }
  std::vector<ParamSpec> params() const override {
    return {kThreadsParam,
            ParamSpec{"mutex-num", "4096", "4096", "number of mutexes in the array"}.integer(1, 1 << 20),
            ParamSpec{"mutex-locks", "50000", "5000", "lock/unlock pairs each thread does"}.integer(1, 1e9),
            ParamSpec{"mutex-loops", "10000", "10000", "empty loop iterations before each lock"}.integer(0, 1e9),
            kPinParam};
  }
  void prepare(const Params& params, const Placement& where) override {
    SysbenchBase::prepare(params, where);
    mutexes_ = std::make_unique<PaddedMutex[]>(std::size_t(param_int(params, "mutex-num")));
  }
  std::vector<Measurement> run_repeat(const Params& params, const Placement& where) override {
    const auto mutex_count = std::uint64_t(param_int(params, "mutex-num"));
    if (!mutexes_) mutexes_ = std::make_unique<PaddedMutex[]>(mutex_count);
    const MutexEvent event{std::uint32_t(param_int(params, "mutex-locks")),
                           std::uint32_t(param_int(params, "mutex-loops"))};
    const Pinning pinning = parse_pinning(params);
    std::vector<Measurement> out;
    for (int n : parse_thread_ladder(params, online_cpus())) {
      std::vector<double> thread_seconds(std::size_t(n), 0);
      run_workers(n, pinning, where.cpu, [&](int index) {
        SplitMix64 random{std::uint64_t(index + 1) * 0x2545f4914f6cdd1dull ^ ++seed_};
        const double start = timing::monotonic_seconds();
        for (std::uint32_t i = 0; i < event.locks; ++i) {
          PaddedMutex& m = mutexes_[random.next() % mutex_count];
          spin_empty_loops(event);
          pthread_mutex_lock(&m.mutex);
          shared_counter_.fetch_add(1, std::memory_order_relaxed);
          pthread_mutex_unlock(&m.mutex);
        }
        thread_seconds[std::size_t(index)] = timing::monotonic_seconds() - start;
      });
      double sum = 0;
      for (double s : thread_seconds) sum += s;
      const double mean_usec = sum / n * 1e6;
      if (!(mean_usec > 0)) throw RunError("sysbench-mutex measured no time");
      out.push_back({result_class(n), mean_usec});
    }
    return out;
  }
  void finish() override { mutexes_.reset(); }

 private:
  std::unique_ptr<PaddedMutex[]> mutexes_;
  // sysbench bumps a plain shared variable under whichever mutex it holds;
  // relaxed atomic increments cost the same and are not a data race.
  std::atomic<std::uint64_t> shared_counter_{0};
  std::atomic<std::uint64_t> seed_{0};
};

// ---------------------------------------------------------------------------
// thread: one event takes mutex number (events so far % thread-locks) and
// thread-yields times locks it, yields the CPU and unlocks it. Time-limited;
// the result is the 95th percentile of per-event latency.

class SysbenchThread : public SysbenchBase {
 public:
  SysbenchThread() : SysbenchBase("sysbenchthread-", "usec", Better::Lower) {}
  std::string name() const override { return "mmtests/sysbench-thread"; }
  std::string description() const override {
    return "sysbench threads: N threads repeat events of thread-yields lock/sched_yield/unlock "
           "on one of thread-locks mutexes; 95th percentile event latency";
  }
  std::vector<ParamSpec> params() const override {
    return {kThreadsParam,
            ParamSpec{"thread-yields", "1000", "1000", "lock/yield/unlock rounds per event"}.integer(1, 100000000),
            ParamSpec{"thread-locks", "8", "8", "number of mutexes events are spread over"}.integer(1, 1 << 16),
            kTimeParam,
            kPinParam};
  }
  std::vector<Measurement> run_repeat(const Params& params, const Placement& where) override {
    const auto yields = std::uint64_t(param_int(params, "thread-yields"));
    const auto lock_count = std::size_t(param_int(params, "thread-locks"));
    const double seconds = param_double(params, "time");
    const Pinning pinning = parse_pinning(params);
    std::vector<Measurement> out;
    for (int n : parse_thread_ladder(params, online_cpus())) {
      std::vector<pthread_mutex_t> locks(lock_count);
      for (auto& m : locks) pthread_mutex_init(&m, nullptr);
      std::atomic<std::uint64_t> events_started{0};
      std::vector<timing::Histogram> per_thread(static_cast<std::size_t>(n));
      std::atomic<bool> stop{false};
      try {
        run_workers_for(seconds, n, pinning, where.cpu, stop, [&](int index) {
          timing::Histogram& latencies = per_thread[std::size_t(index)];
          do {
            pthread_mutex_t& m =
                locks[events_started.fetch_add(1, std::memory_order_relaxed) % lock_count];
            const auto start = std::chrono::steady_clock::now();
            for (std::uint64_t i = 0; i < yields; ++i) {
              pthread_mutex_lock(&m);
              sched_yield();
              pthread_mutex_unlock(&m);
            }
            const auto end = std::chrono::steady_clock::now();
            latencies.record(std::uint64_t(
                std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()));
          } while (!stop.load(std::memory_order_relaxed));
        });
      } catch (...) {
        for (auto& m : locks) pthread_mutex_destroy(&m);
        throw;
      }
      for (auto& m : locks) pthread_mutex_destroy(&m);
      timing::Histogram all;
      for (const auto& h : per_thread) all.merge(h);
      out.push_back({result_class(n),
                     all.percentile(95) / 1000.0});
    }
    return out;
  }

 private:
};

KBENCH_REGISTER("mmtests/sysbench-cpu", [] { return std::make_unique<SysbenchCpu>(); });
KBENCH_REGISTER("mmtests/sysbench-mutex", [] { return std::make_unique<SysbenchMutex>(); });
KBENCH_REGISTER("mmtests/sysbench-thread", [] { return std::make_unique<SysbenchThread>(); });

}  // namespace
}  // namespace kbench::bench
