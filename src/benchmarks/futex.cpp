// perf/futex: the five `perf bench futex` benchmarks with perf's semantics.
//   hash           threads hammer FUTEX_WAIT on futexes whose value never
//                  matches (returns at once): hash-bucket lookup throughput
//   lock-pi        threads take and release one PI futex through the kernel
//   wake           time to wake N blocked waiters, `wakes` per FUTEX_WAKE
//   wake-parallel  waker threads each wake their share of the waiters at once
//   requeue        time to requeue N waiters from one futex to another
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>

#include "benchmarks/benchmark.h"
#include "benchmarks/sched_tasks.h"
#include "common/errors.h"
#include "timing/clock.h"

namespace kbench::bench {
namespace {

// std::atomic<uint32_t> has the layout of uint32_t; the kernel sees the word.
using Word = std::atomic<std::uint32_t>;
static_assert(sizeof(Word) == sizeof(std::uint32_t));

std::uint32_t* raw(Word& word) { return reinterpret_cast<std::uint32_t*>(&word); }

long futex_call(Word& word, int op, std::uint32_t val, std::uint32_t val2 = 0, Word* word2 = nullptr,
                std::uint32_t val3 = 0) {
  // For the requeue ops the fourth argument is a count, not a timeout.
  return syscall(SYS_futex, raw(word), op, val, reinterpret_cast<void*>(static_cast<uintptr_t>(val2)),
                 word2 ? raw(*word2) : nullptr, val3);
}

struct FutexOps {
  int flag = FUTEX_PRIVATE_FLAG;  // perf -S clears it (shared futexes)
  long wait(Word& w, std::uint32_t expected) const { return futex_call(w, FUTEX_WAIT | flag, expected); }
  long wake(Word& w, int count) const { return futex_call(w, FUTEX_WAKE | flag, static_cast<std::uint32_t>(count)); }
  long requeue(Word& from, Word& to, int wake_count, int requeue_count, std::uint32_t expected) const {
    return futex_call(from, FUTEX_CMP_REQUEUE | flag, static_cast<std::uint32_t>(wake_count),
                      static_cast<std::uint32_t>(requeue_count), &to, expected);
  }
  long lock_pi(Word& w) const { return futex_call(w, FUTEX_LOCK_PI | flag, 0); }
  long unlock_pi(Word& w) const { return futex_call(w, FUTEX_UNLOCK_PI | flag, 0); }

  // Waiters queued on `w` (value 0), counted without disturbing them: a
  // requeue onto the same futex moves nobody and returns how many it saw.
  long queued(Word& w) const { return requeue(w, w, 0, INT_MAX, 0); }
};

void pin_to(int cpu) {
  const cpu_set_t set = tasks::cpu_set_of({cpu});
  tasks::set_thread_affinity(set);
}

// How a woken waiter leaves. perf's wake and wake-parallel waiters call
// pthread_exit() (a forced unwind of the thread's stack), its requeue waiters
// return. It matters because a woken waiter on the waker's CPU usually
// preempts the waker and runs its whole exit before the waker reads the
// clock again: see docs/benchmarks/futex.md "Relation to perf".
enum class WaiterExit { PthreadExit, Return };

struct WaiterShared {
  const FutexOps* ops = nullptr;
  Word* word = nullptr;
  std::atomic<std::size_t>* finished = nullptr;
  WaiterExit exit = WaiterExit::Return;
};

// A plain pthread start routine (no C++ frames with destructors), so that
// pthread_exit() unwinds only what perf's waiter unwinds.
void* waiter_main(void* arg) {
  const auto* shared = static_cast<const WaiterShared*>(arg);
  long r;
  do {
    r = shared->ops->wait(*shared->word, 0);
  } while (r != 0 && errno == EINTR);
  shared->finished->fetch_add(1);
  if (shared->exit == WaiterExit::PthreadExit) pthread_exit(nullptr);
  return nullptr;
}

void* leave_by_pthread_exit(void*) { pthread_exit(nullptr); }

// The first pthread_exit() of a process pays once for setting up the
// unwinder (in the static agent libgcc sorts the binary's unwind tables on
// first use: milliseconds). perf has its unwinder loaded and ready before it
// times anything, so kbench pays this once here, outside every clock.
void warm_up_pthread_exit() {
  pthread_t thread;
  if (pthread_create(&thread, nullptr, leave_by_pthread_exit, nullptr) != 0) {
    tasks::throw_errno("perf/futex: creating the pthread_exit warm-up thread");
  }
  pthread_join(thread, nullptr);
}

// Blocked threads for wake / wake-parallel / requeue. Each waits once on
// `word` and exits when woken. As in perf, thread i is created already
// pinned to CPU i mod N (pthread_attr_setaffinity_np), so it never runs
// elsewhere. Destruction releases any still blocked and joins all, so no
// error path leaves a thread behind.
class Waiters {
 public:
  Waiters(const FutexOps& ops, Word& word, std::vector<Word*> extra_words, int count, const std::vector<int>& cpus,
          WaiterExit exit)
      : ops_(ops), word_(word), extra_(std::move(extra_words)) {
    shared_ = {&ops_, &word_, &finished_, exit};
    threads_.reserve(static_cast<std::size_t>(count));
    try {
      spawn(count, cpus);
    } catch (...) {
      release_all();  // the destructor does not run for a throwing constructor
      throw;
    }
  }

  // Until all are queued on `word` (RunError after 10 s), then `settle_ms`
  // more: perf sleeps 100 ms here, so its clock starts on an idle CPU with
  // cold caches, and the figures are only comparable with the same pause.
  void wait_until_queued(int settle_ms) {
    const double deadline = timing::monotonic_seconds() + 10;
    while (ops_.queued(word_) < static_cast<long>(threads_.size())) {
      if (timing::monotonic_seconds() > deadline) throw RunError("perf/futex: waiters did not block within 10 s");
      usleep(100);
    }
    if (settle_ms > 0) usleep(static_cast<useconds_t>(settle_ms) * 1000);
  }

  ~Waiters() { release_all(); }

 private:
  void spawn(int count, const std::vector<int>& cpus) {
    for (int i = 0; i < count; ++i) {
      const cpu_set_t set = tasks::cpu_set_of({cpus[static_cast<std::size_t>(i) % cpus.size()]});
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
      pthread_t thread;
      const int error = pthread_create(&thread, &attr, waiter_main, &shared_);
      pthread_attr_destroy(&attr);
      if (error != 0) {
        errno = error;
        tasks::throw_errno("perf/futex: creating waiter thread " + std::to_string(i + 1));
      }
      threads_.push_back(thread);
    }
  }

  void release_all() {
    // A non-zero value makes a late FUTEX_WAIT return at once.
    word_.store(1);
    for (Word* w : extra_) w->store(1);
    while (finished_.load() < threads_.size()) {
      ops_.wake(word_, INT_MAX);
      for (Word* w : extra_) ops_.wake(*w, INT_MAX);
      usleep(50);
    }
    for (pthread_t t : threads_) pthread_join(t, nullptr);
    threads_.clear();
  }

  const FutexOps& ops_;
  Word& word_;
  std::vector<Word*> extra_;
  std::vector<pthread_t> threads_;
  std::atomic<std::size_t> finished_{0};
  WaiterShared shared_;
};

// Joins on scope exit after raising `stop`: for the timed loops.
struct Crew {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  ~Crew() {
    stop.store(true);
    for (auto& t : threads) t.join();
  }
};

// Mean per-thread operations per second, as perf's "Averaged N operations/sec".
double mean_rate(const std::vector<std::uint64_t>& ops, double seconds) {
  double sum = 0;
  for (auto n : ops) sum += static_cast<double>(n) / seconds;
  return sum / static_cast<double>(ops.size());
}

struct alignas(64) Counter {
  std::uint64_t ops = 0;
};

// Runs `threads` threads, pinned round-robin over `cpus` and released
// together, for `seconds` of wall clock; thread i runs `loop(i, stop)`, which
// returns its operation count once `stop` is raised. The result is their
// mean_rate over the interval measured.
template <typename Loop>
double run_timed(int threads, double seconds, const std::vector<int>& cpus, Loop loop) {
  std::vector<Counter> counts(static_cast<std::size_t>(threads));
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  double start = 0, end = 0;
  {
    Crew crew;
    for (int i = 0; i < threads; ++i) {
      crew.threads.emplace_back([&, i] {
        pin_to(cpus[static_cast<std::size_t>(i) % cpus.size()]);
        ready.fetch_add(1);
        while (!go.load() && !crew.stop.load()) std::this_thread::yield();
        counts[static_cast<std::size_t>(i)].ops = loop(i, crew.stop);
      });
    }
    while (ready.load() < threads) std::this_thread::yield();
    start = timing::monotonic_seconds();
    go.store(true);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    crew.stop.store(true);
    end = timing::monotonic_seconds();
  }
  std::vector<std::uint64_t> ops_per_thread;
  for (const auto& c : counts) ops_per_thread.push_back(c.ops);
  return mean_rate(ops_per_thread, end - start);
}

double run_hash(const FutexOps& ops, int threads, int futexes, double seconds, const std::vector<int>& cpus) {
  std::vector<std::vector<Word>> words(static_cast<std::size_t>(threads));
  for (auto& w : words) w = std::vector<Word>(static_cast<std::size_t>(futexes));
  std::atomic<int> unexpected{0};
  const double rate = run_timed(threads, seconds, cpus, [&](int i, const std::atomic<bool>& stop) {
    auto& mine = words[static_cast<std::size_t>(i)];
    std::uint64_t n = 0;
    // do-while: a thread the scheduler kept off its CPU for the whole
    // interval still makes one call, so the rate is never a bare 0.
    do {
      for (auto& w : mine) {
        // The value is 0, never 1234: the call hashes, finds a mismatch, returns EAGAIN.
        if (ops.wait(w, 1234) == 0 || errno != EAGAIN) unexpected.fetch_add(1);
        ++n;
        if (stop.load(std::memory_order_relaxed)) break;
      }
    } while (!stop.load(std::memory_order_relaxed));
    return n;
  });
  if (unexpected.load() > 0) throw RunError("perf/futex hash: FUTEX_WAIT did not fail with EAGAIN");
  return rate;
}

double run_lock_pi(const FutexOps& ops, int threads, double seconds, const std::vector<int>& cpus) {
  Word lock{0};
  std::atomic<int> failures{0};
  const double rate = run_timed(threads, seconds, cpus, [&](int, const std::atomic<bool>& stop) {
    std::uint64_t n = 0;
    do {  // at least one round, as in run_hash
      // Straight to the kernel, no user-space fast path, as perf does.
      if (ops.lock_pi(lock) != 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        failures.fetch_add(1);
        break;
      }
      usleep(1);  // hold the lock across a sleep, as perf does
      if (ops.unlock_pi(lock) != 0) {
        failures.fetch_add(1);
        break;
      }
      ++n;
    } while (!stop.load(std::memory_order_relaxed));
    return n;
  });
  if (failures.load() > 0) tasks::throw_errno("perf/futex lock-pi: FUTEX_LOCK_PI/UNLOCK_PI");
  return rate;
}

// Milliseconds to wake every waiter, `wakes` per call (perf futex wake).
double run_wake(const FutexOps& ops, int threads, int wakes, const std::vector<int>& cpus, int settle_ms,
                WaiterExit exit) {
  Word word{0};
  Waiters waiters(ops, word, {}, threads, cpus, exit);
  waiters.wait_until_queued(settle_ms);
  long woken = 0;
  const double start = timing::monotonic_seconds();
  while (woken < threads) {
    const long r = ops.wake(word, wakes);
    if (r < 0) tasks::throw_errno("perf/futex wake: FUTEX_WAKE");
    woken += r;
  }
  return (timing::monotonic_seconds() - start) * 1e3;
}

// Mean milliseconds one waker thread spends in its FUTEX_WAKE, all wakers
// starting together (perf futex wake-parallel). Returns the number of waiters
// the wakers missed in `missed` (they are then woken untimed).
double run_wake_parallel(const FutexOps& ops, int blocked, int wakers, const std::vector<int>& cpus,
                         int settle_ms, WaiterExit exit, long& missed) {
  Word word{0};
  Waiters waiters(ops, word, {}, blocked, cpus, exit);
  waiters.wait_until_queued(settle_ms);
  const int share = blocked / wakers;
  std::vector<double> took(static_cast<std::size_t>(wakers));
  std::vector<long> woke(static_cast<std::size_t>(wakers));
  std::barrier start_line(wakers);
  const cpu_set_t anywhere = tasks::cpu_set_of(cpus);
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < wakers; ++i) {
      threads.emplace_back([&, i] {
        // perf lets the scheduler place the wakers.
        tasks::set_thread_affinity(anywhere);
        start_line.arrive_and_wait();
        const double t0 = timing::monotonic_seconds();
        woke[static_cast<std::size_t>(i)] = ops.wake(word, share);
        took[static_cast<std::size_t>(i)] = timing::monotonic_seconds() - t0;
      });
    }
    for (auto& t : threads) t.join();
  }
  long total = 0;
  for (long n : woke) {
    if (n < 0) throw RunError("perf/futex wake-parallel: FUTEX_WAKE failed");
    total += n;
  }
  missed = blocked - total;
  double sum = 0;
  for (double t : took) sum += t;
  return sum / wakers * 1e3;
}

// Milliseconds to requeue every waiter from one futex to another, `requeues`
// per call and none woken (perf futex requeue). The waiters are woken after
// the clock stopped, so how they leave does not enter the figure; they
// return, as perf's requeue waiters do.
double run_requeue(const FutexOps& ops, int threads, int requeues, const std::vector<int>& cpus, int settle_ms) {
  Word from{0}, to{0};
  Waiters waiters(ops, from, {&to}, threads, cpus, WaiterExit::Return);
  waiters.wait_until_queued(settle_ms);
  long moved = 0;
  const double start = timing::monotonic_seconds();
  while (moved < threads) {
    const long r = ops.requeue(from, to, 0, requeues, 0);
    if (r < 0) tasks::throw_errno("perf/futex requeue: FUTEX_CMP_REQUEUE");
    moved += r;
  }
  const double ms = (timing::monotonic_seconds() - start) * 1e3;
  long woken = 0;
  while (woken < threads) woken += std::max(0L, ops.wake(to, INT_MAX));
  return ms;
}

// ---------------------------------------------------------------- benchmark

const std::vector<std::string> kFutexTests = {"hash", "lock-pi", "wake", "wake-parallel", "requeue"};

// The tests asked for (validated against kFutexTests), in kFutexTests' order.
std::vector<std::string> parse_futex_tests(const Params& params) {
  const auto wanted = param_list(params, "tests");
  std::vector<std::string> ordered;
  for (const auto& name : kFutexTests) {
    if (std::find(wanted.begin(), wanted.end(), name) != wanted.end()) ordered.push_back(name);
  }
  return ordered;
}

class PerfFutex : public Benchmark {
 public:
  std::string name() const override { return "perf/futex"; }
  std::string description() const override {
    return "perf bench futex: hash and lock-pi throughput per thread, wake / wake-parallel / requeue "
           "latency of all waiters";
  }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec{"tests", "hash,lock-pi,wake,wake-parallel,requeue", "hash,lock-pi,wake,wake-parallel,requeue",
                  "comma list of the tests to run"}
            .choice(kFutexTests)
            .list_of(),
        ParamSpec{"threads", "0", "0",
                  "threads (hash, lock-pi) and blocked waiters (wake*, requeue); 0: one per online CPU (perf -t)"}
            .integer(0, 100000),
        ParamSpec{"hash_seconds", "10", "0.5", "hash: run time in seconds (perf -r)"}.number(0.01, 3600),
        ParamSpec{"futexes", "1024", "1024", "hash: futexes per thread (perf -f)"}.integer(1, 1 << 24),
        ParamSpec{"lockpi_seconds", "10", "0.5", "lock-pi: run time in seconds (perf -r)"}.number(0.01, 3600),
        ParamSpec{"rounds", "10", "3", "wake, wake-parallel, requeue: rounds averaged per repeat (perf repeats 10)"}
            .integer(1, 100000),
        ParamSpec{"wakes", "1", "1", "wake: waiters woken per FUTEX_WAKE (perf -w)"}.integer(1, INT_MAX),
        ParamSpec{"wakers", "0", "0",
                  "wake-parallel: waker threads, must divide the waiters; 0: as many as waiters (perf -w)"}
            .integer(0, 100000),
        ParamSpec{"requeues", "1", "1", "requeue: waiters requeued per FUTEX_CMP_REQUEUE (perf -q)"}.integer(1, INT_MAX),
        ParamSpec{"settle_ms", "100", "20",
                  "wake, wake-parallel, requeue: pause in ms between all waiters queued and the clock start "
                  "(perf: 100); 0 measures with warm caches"}
            .integer(0, 10000),
        ParamSpec{"shared", "0", "0", "1: process-shared futexes instead of FUTEX_PRIVATE_FLAG (perf -S)"}.boolean(),
        ParamSpec{"waiter_exit", "pthread_exit", "pthread_exit",
                  "wake, wake-parallel: how a woken waiter leaves: pthread_exit (perf) or return; the waiter on "
                  "the waker's CPU usually runs its exit inside the timed window"}
            .choice({"pthread_exit", "return"}),
    };
  }

  std::vector<ResultClass> result_classes(const Params& params) const override {
    std::vector<ResultClass> classes;
    for (const auto& test : parse_futex_tests(params)) {
      if (test == "hash" || test == "lock-pi") {
        classes.push_back({test, "ops/sec", Better::Higher});
      } else {
        classes.push_back({test, "ms", Better::Lower});
      }
    }
    return classes;
  }

  void prepare(const Params& params, const Placement&) override {
    tests_ = parse_futex_tests(params);
    cpus_ = tasks::online_cpus();
    threads_ = int_param(params, "threads");
    if (threads_ == 0) threads_ = static_cast<int>(cpus_.size());
    hash_seconds_ = param_double(params, "hash_seconds");
    lockpi_seconds_ = param_double(params, "lockpi_seconds");
    futexes_ = int_param(params, "futexes");
    rounds_ = int_param(params, "rounds");
    wakes_ = int_param(params, "wakes");
    requeues_ = int_param(params, "requeues");
    settle_ms_ = int_param(params, "settle_ms");
    waiter_exit_ = param_string(params, "waiter_exit") == "return" ? WaiterExit::Return : WaiterExit::PthreadExit;
    wakers_ = int_param(params, "wakers");
    if (wakers_ == 0) wakers_ = threads_;
    if (wakers_ > threads_ || threads_ % wakers_ != 0) {
      throw InputError("perf/futex: wakers=" + std::to_string(wakers_) + " must divide the " +
                       std::to_string(threads_) + " waiters");
    }
    const auto shared = int_param(params, "shared");
    ops_.flag = shared ? 0 : FUTEX_PRIVATE_FLAG;
    missed_ = 0;
    if (has("lock-pi")) {
      // PI futexes need futex_cmpxchg support in the kernel; probe once.
      Word probe{0};
      if (ops_.lock_pi(probe) != 0) {
        throw SkipBenchmark(std::string("lock-pi: FUTEX_LOCK_PI unavailable: ") + std::strerror(errno) +
                            " (run the rest with --param tests=hash,wake,wake-parallel,requeue)");
      }
      ops_.unlock_pi(probe);
    }
    if (has("wake") || has("wake-parallel") || has("requeue")) {
      // The waiter count relies on FUTEX_CMP_REQUEUE onto the same futex.
      Word probe{0};
      if (ops_.queued(probe) != 0) tasks::throw_errno("perf/futex: counting waiters with FUTEX_CMP_REQUEUE");
    }
    if ((has("wake") || has("wake-parallel")) && waiter_exit_ == WaiterExit::PthreadExit) warm_up_pthread_exit();
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement&) override {
    // The measuring thread is not pinned (perf leaves it to the scheduler),
    // whatever the agent's own pinning is; restored afterwards.
    tasks::ScopedAffinity unpinned(cpus_);
    std::vector<Measurement> out;
    for (const auto& rc : result_classes(params)) {
      double value = 0;
      if (rc.name == "hash") {
        value = run_hash(ops_, threads_, futexes_, hash_seconds_, cpus_);
      } else if (rc.name == "lock-pi") {
        value = run_lock_pi(ops_, threads_, lockpi_seconds_, cpus_);
      } else {
        double sum = 0;
        for (int round = 0; round < rounds_; ++round) {
          if (rc.name == "wake") {
            sum += run_wake(ops_, threads_, wakes_, cpus_, settle_ms_, waiter_exit_);
          } else if (rc.name == "wake-parallel") {
            long missed = 0;
            sum += run_wake_parallel(ops_, threads_, wakers_, cpus_, settle_ms_, waiter_exit_, missed);
            missed_ += missed;
          } else {
            sum += run_requeue(ops_, threads_, requeues_, cpus_, settle_ms_);
          }
        }
        value = sum / rounds_;
      }
      out.push_back({rc, value});
    }
    return out;
  }

  std::map<std::string, std::string> notes() const override {
    std::map<std::string, std::string> n;
    n["placement"] = std::to_string(threads_) + " worker/waiter threads pinned round-robin over CPUs " +
                     tasks::describe_cpus(cpus_) +
                     "; the measuring thread and wake-parallel's wakers unpinned over the same CPUs";
    n["waiter exit"] = std::string("woken wake/wake-parallel waiters leave by ") +
                       (waiter_exit_ == WaiterExit::PthreadExit ? "pthread_exit() (as perf)" : "returning") +
                       "; requeue waiters return (as perf)";
    if (missed_ > 0) {
      n["wake-parallel"] = std::to_string(missed_) +
                           " waiters were not found by their waker (woken afterwards, untimed)";
    }
    return n;
  }

 private:
  bool has(const std::string& test) const {
    return std::find(tests_.begin(), tests_.end(), test) != tests_.end();
  }

  std::vector<std::string> tests_;
  std::vector<int> cpus_;
  FutexOps ops_;
  int threads_ = 0, futexes_ = 0, rounds_ = 0, wakes_ = 0, requeues_ = 0, wakers_ = 0, settle_ms_ = 0;
  double hash_seconds_ = 0, lockpi_seconds_ = 0;
  long missed_ = 0;
  WaiterExit waiter_exit_ = WaiterExit::PthreadExit;
};

KBENCH_REGISTER("perf/futex", [] { return std::make_unique<PerfFutex>(); });

}  // namespace
}  // namespace kbench::bench
