// ctxsw/*: the cost of a context switch between two tasks on one CPU.
//
// Two tasks pinned to the same CPU pass a token back and forth; each pass
// blocks the sender and wakes the receiver, so one round trip is two context
// switches. A repeat reports the mean round-trip time / 2, in ns (CLOCK_MONOTONIC)
// and in ticks of the CPU's cycle counter (TSC on x86-64, cntvct_el0 on arm64,
// the unit of the seed on context switching), read around the same loop.
// The figure includes the IPC calls that cause the switches (two pipe
// read/write pairs or two futex wait/wake pairs per round trip): it is an upper
// bound of the switch itself, comparable between kernels, not a pure
// finish_task_switch() time.
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>

#include "benchmarks/ctxsw.h"

#include "benchmarks/benchmark.h"
#include "benchmarks/sched_tasks.h"
#include "common/errors.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"

namespace kbench::bench {
namespace {

using tasks::Fd;

// The token channel. Pipes: two pipes. Futex: one word in memory both tasks
// share (anonymous MAP_SHARED, so processes see it too) holding whose turn
// it is.
class Channel {
 public:
  Channel(Transport transport, TaskKind kind) : transport_(transport), kind_(kind) {
    if (transport == Transport::Pipe) {
      tasks::make_pipe(ping_read_, ping_write_, "ctxsw ping");
      tasks::make_pipe(pong_read_, pong_write_, "ctxsw pong");
    } else {
      void* memory = mmap(nullptr, sizeof(Word), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (memory == MAP_FAILED) tasks::throw_errno("ctxsw: mmap of the futex word");
      turn_ = new (memory) Word(0);
    }
  }
  ~Channel() {
    if (turn_) munmap(turn_, sizeof(Word));
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Measuring side: hand the token over and wait for it back.
  bool round_trip() {
    if (transport_ == Transport::Pipe) {
      char token = 't';
      return tasks::write_all(ping_write_.get(), &token, 1) && tasks::read_all(pong_read_.get(), &token, 1);
    }
    pass(kPartnerTurn);
    return wait_for(kMeasurerTurn);
  }

  // Partner side: wait for the token and hand it back, `count` times.
  int serve(long count) {
    for (long i = 0; i < count; ++i) {
      if (transport_ == Transport::Pipe) {
        char token;
        if (!tasks::read_all(ping_read_.get(), &token, 1) || !tasks::write_all(pong_write_.get(), &token, 1)) {
          return 1;
        }
      } else {
        if (!wait_for(kPartnerTurn)) return 1;
        pass(kMeasurerTurn);
      }
    }
    return 0;
  }

  // After fork: the parent drops the partner's ends so that EOF reaches it
  // if the partner dies.
  void close_partner_ends() {
    ping_read_.reset();
    pong_write_.reset();
  }
  // Wakes a partner stuck waiting, so a thread can be joined on error paths.
  void abandon() {
    ping_write_.reset();
    if (turn_) {
      turn_->store(kAbandoned);
      futex(FUTEX_WAKE, INT_MAX);
    }
  }

 private:
  using Word = std::atomic<std::uint32_t>;
  static constexpr std::uint32_t kMeasurerTurn = 0, kPartnerTurn = 1, kAbandoned = 2;

  long futex(int op, std::uint32_t value) {
    // Private futexes only work within one mm; processes need shared ones.
    const int flag = kind_ == TaskKind::Thread ? FUTEX_PRIVATE_FLAG : 0;
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(turn_), op | flag, value, nullptr, nullptr, 0);
  }
  void pass(std::uint32_t to) {
    turn_->store(to);
    futex(FUTEX_WAKE, 1);
  }
  bool wait_for(std::uint32_t mine) {
    for (;;) {
      const std::uint32_t now = turn_->load();
      if (now == mine) return true;
      if (now == kAbandoned) return false;
      if (futex(FUTEX_WAIT, now) != 0 && errno != EAGAIN && errno != EINTR) return false;
    }
  }

  Transport transport_;
  TaskKind kind_;
  Fd ping_read_, ping_write_, pong_read_, pong_write_;
  Word* turn_ = nullptr;
};

struct ThreadPartner {
  Channel* channel;
  long count;
  int cpu;
  int result = 0;
};

void* partner_thread(void* arg) {
  auto* p = static_cast<ThreadPartner*>(arg);
  const bool pinned = tasks::set_thread_affinity(tasks::cpu_set_of({p->cpu}));
  p->result = p->channel->serve(p->count);
  if (p->result == 0 && !pinned) p->result = 2;
  return nullptr;
}

}  // namespace

SwitchCost measure_context_switch(Transport transport, TaskKind kind, long round_trips, int cpu) {
  // A few untimed round trips let the partner get going first.
  constexpr long kWarmup = 100;
  Channel channel(transport, kind);
  tasks::ScopedAffinity pin({cpu});
  tasks::Children children;
  ThreadPartner partner{&channel, round_trips + kWarmup, cpu};
  pthread_t thread{};
  if (kind == TaskKind::Thread) {
    if (int error = pthread_create(&thread, nullptr, partner_thread, &partner)) {
      errno = error;
      tasks::throw_errno("ctxsw: pthread_create");
    }
  } else {
    children.spawn([&] {
      const bool pinned = tasks::set_thread_affinity(tasks::cpu_set_of({cpu}));
      const int served = channel.serve(partner.count);
      return served != 0 ? served : (pinned ? 0 : 2);
    });
    channel.close_partner_ends();
  }

  bool ok = true;
  for (long i = 0; i < kWarmup && ok; ++i) ok = channel.round_trip();
  const double start = timing::monotonic_seconds();
  const std::uint64_t start_ticks = timing::counter::begin();
  for (long i = 0; i < round_trips && ok; ++i) ok = channel.round_trip();
  const std::uint64_t end_ticks = timing::counter::end();
  const double elapsed = timing::monotonic_seconds() - start;

  if (!ok) channel.abandon();
  if (kind == TaskKind::Thread) {
    pthread_join(thread, nullptr);
    if (!ok || partner.result != 0) throw RunError("ctxsw: the partner thread failed");
  } else if (children.wait_all() != 0 || !ok) {
    throw RunError("ctxsw: the partner process failed");
  }
  const double switches = 2.0 * static_cast<double>(round_trips);
  return {elapsed * 1e9 / switches, static_cast<double>(end_ticks - start_ticks) / switches};
}

namespace {

class ContextSwitch : public Benchmark {
 public:
  ContextSwitch(std::string name, Transport transport, TaskKind kind)
      : name_(std::move(name)), transport_(transport), kind_(kind) {}

  std::string name() const override { return name_; }
  std::string description() const override {
    return std::string("context switch between two ") + (kind_ == TaskKind::Thread ? "threads" : "processes") +
           " on one CPU passing a token over " + (transport_ == Transport::Pipe ? "pipes" : "a futex") +
           ": round trip / 2, in ns and cycle-counter ticks";
  }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec{"loops", "100000", "20000", "round trips (2 switches each) per repeat"}.integer(1, 1e9)};
  }
  std::vector<ResultClass> result_classes(const Params&) const override {
    return {{"switch", "ns", Better::Lower}, {"switch", "ticks", Better::Lower}};
  }
  void prepare(const Params& params, const Placement& where) override {
    loops_ = param_int(params, "loops");
    cpu_ = tasks::home_cpu(where.cpu);
    const auto online = tasks::online_cpus();
    if (std::find(online.begin(), online.end(), cpu_) == online.end()) {
      throw InputError(name_ + ": cpu " + std::to_string(cpu_) + " is not online (online: " +
                       tasks::describe_cpus(online) + ")");
    }
  }
  std::vector<Measurement> run_repeat(const Params& params, const Placement&) override {
    const SwitchCost cost = measure_context_switch(transport_, kind_, loops_, cpu_);
    const auto classes = result_classes(params);
    return {{classes[0], cost.ns}, {classes[1], cost.ticks}};
  }
  std::map<std::string, std::string> notes() const override {
    return {{"placement", "both tasks on cpu" + std::to_string(cpu_)},
            {"counter", std::string(timing::counter::kName) + " ticks, read around the whole loop"}};
  }

 private:
  std::string name_;
  Transport transport_;
  TaskKind kind_;
  long loops_ = 0;
  int cpu_ = 0;
};

KBENCH_REGISTER("ctxsw/pipe-threads",
                [] { return std::make_unique<ContextSwitch>("ctxsw/pipe-threads", Transport::Pipe, TaskKind::Thread); });
KBENCH_REGISTER("ctxsw/pipe-processes", [] {
  return std::make_unique<ContextSwitch>("ctxsw/pipe-processes", Transport::Pipe, TaskKind::Process);
});
KBENCH_REGISTER("ctxsw/futex-threads", [] {
  return std::make_unique<ContextSwitch>("ctxsw/futex-threads", Transport::Futex, TaskKind::Thread);
});
KBENCH_REGISTER("ctxsw/futex-processes", [] {
  return std::make_unique<ContextSwitch>("ctxsw/futex-processes", Transport::Futex, TaskKind::Process);
});

}  // namespace
}  // namespace kbench::bench
