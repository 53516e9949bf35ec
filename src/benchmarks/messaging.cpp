#include "benchmarks/messaging.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include "benchmarks/sched_tasks.h"
#include "common/errors.h"
#include "timing/clock.h"

namespace kbench::bench {
namespace {

using tasks::Fd;

// Readiness is one byte per task on `ready`; the release is one byte on
// `wake` that every task polls for and nobody reads, so one write releases all.
struct StartLine {
  Fd ready_read, ready_write, wake_read, wake_write;
};

bool announce_and_wait(const StartLine& line) {
  const char byte = 'r';
  if (!tasks::write_all(line.ready_write.get(), &byte, 1)) return false;
  pollfd wake{line.wake_read.get(), POLLIN, 0};
  while (poll(&wake, 1, -1) < 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

int send_messages(const int* out_fds, int count, int loops, const char* message, int bytes) {
  for (int loop = 0; loop < loops; ++loop) {
    for (int i = 0; i < count; ++i) {
      if (!tasks::write_all(out_fds[i], message, static_cast<std::size_t>(bytes))) return 1;
    }
  }
  return 0;
}

int receive_messages(int in_fd, long messages, char* buffer, int bytes) {
  for (long i = 0; i < messages; ++i) {
    if (!tasks::read_all(in_fd, buffer, static_cast<std::size_t>(bytes))) return 1;
  }
  return 0;
}

// channel[0] is the receiver's end, channel[1] the senders'.
void open_channel(bool pipes, Fd& receiver_end, Fd& sender_end) {
  int fds[2];
  if (pipes) {
    if (pipe2(fds, O_CLOEXEC) != 0) tasks::throw_errno("messaging: pipe");
  } else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    tasks::throw_errno("messaging: socketpair");
  }
  receiver_end = Fd(fds[0]);
  sender_end = Fd(fds[1]);
}

// Waits for `count` ready bytes; a task that failed before announcing itself
// would otherwise hang the agent, so this gives up after a generous timeout.
void wait_until_ready(const StartLine& line, long count) {
  char buffer[512];
  while (count > 0) {
    pollfd ready{line.ready_read.get(), POLLIN, 0};
    const int polled = poll(&ready, 1, 120000);
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) throw RunError("messaging: tasks did not start within 120 s");
    const ssize_t n = read(line.ready_read.get(), buffer,
                           static_cast<std::size_t>(std::min<long>(count, sizeof(buffer))));
    if (n <= 0) tasks::throw_errno("messaging: reading start-up notices");
    count -= n;
  }
}

void release(const StartLine& line) {
  const char byte = 'g';
  if (!tasks::write_all(line.wake_write.get(), &byte, 1)) tasks::throw_errno("messaging: release");
}

double run_processes(const MessagingSpec& spec, const StartLine& line, const cpu_set_t* cpus) {
  const ForkBallast ballast(spec.ballast_anon_bytes, spec.ballast_mappings);
  std::vector<char> message(static_cast<std::size_t>(spec.message_bytes), 'm');
  std::vector<char> buffer(static_cast<std::size_t>(spec.message_bytes));
  const long per_receiver = static_cast<long>(spec.fds) * spec.loops;
  tasks::Children children;
  for (int group = 0; group < spec.groups; ++group) {
    std::vector<Fd> receiver_ends(spec.fds), sender_ends(spec.fds);
    std::vector<int> out_fds(spec.fds);
    for (int r = 0; r < spec.fds; ++r) {
      open_channel(spec.pipes, receiver_ends[r], sender_ends[r]);
      out_fds[r] = sender_ends[r].get();
    }
    for (int r = 0; r < spec.fds; ++r) {
      const int in_fd = receiver_ends[r].get();
      children.spawn([&] {
        // Announce even when pinning failed, or the parent waits for nothing.
        const bool pinned = !cpus || tasks::set_thread_affinity(*cpus);
        if (!announce_and_wait(line)) return 3;
        if (!pinned) return 2;
        return receive_messages(in_fd, per_receiver, buffer.data(), spec.message_bytes);
      });
    }
    for (int s = 0; s < spec.fds; ++s) {
      children.spawn([&] {
        // Announce even when pinning failed, or the parent waits for nothing.
        const bool pinned = !cpus || tasks::set_thread_affinity(*cpus);
        if (!announce_and_wait(line)) return 3;
        if (!pinned) return 2;
        return send_messages(out_fds.data(), spec.fds, spec.loops, message.data(),
                             spec.message_bytes);
      });
    }
    // The group's channels now live in its tasks only.
  }
  wait_until_ready(line, static_cast<long>(children.size()));
  const double start = timing::monotonic_seconds();
  release(line);
  const int failed = children.wait_all();
  const double elapsed = timing::monotonic_seconds() - start;
  if (failed > 0) {
    throw RunError("messaging: " + std::to_string(failed) + " sender/receiver processes failed");
  }
  return elapsed;
}

struct ThreadTask {
  const StartLine* line = nullptr;
  const std::atomic<bool>* abort = nullptr;
  bool sender = false;
  int in_fd = -1;
  const int* out_fds = nullptr;
  int fds = 0;
  int loops = 0;
  long messages = 0;
  const char* message = nullptr;
  int bytes = 0;
  std::vector<char> buffer;
  int result = 0;
};

void* thread_task_main(void* arg) {
  auto* task = static_cast<ThreadTask*>(arg);
  if (!announce_and_wait(*task->line)) {
    task->result = 3;
  } else if (task->abort->load()) {
    task->result = 0;
  } else if (task->sender) {
    task->result = send_messages(task->out_fds, task->fds, task->loops, task->message, task->bytes);
  } else {
    task->result = receive_messages(task->in_fd, task->messages, task->buffer.data(), task->bytes);
  }
  return nullptr;
}

double run_threads(const MessagingSpec& spec, const StartLine& line, const cpu_set_t* cpus) {
  std::vector<char> message(static_cast<std::size_t>(spec.message_bytes), 'm');
  const std::size_t channels = static_cast<std::size_t>(spec.groups) * spec.fds;
  std::vector<Fd> receiver_ends(channels), sender_ends(channels);
  std::vector<int> out_fds(channels);
  for (std::size_t c = 0; c < channels; ++c) {
    open_channel(spec.pipes, receiver_ends[c], sender_ends[c]);
    out_fds[c] = sender_ends[c].get();
  }
  std::atomic<bool> abort{false};
  std::vector<std::unique_ptr<ThreadTask>> tasks_list;
  std::vector<pthread_t> threads;
  for (int group = 0; group < spec.groups; ++group) {
    for (int i = 0; i < 2 * spec.fds; ++i) {
      auto task = std::make_unique<ThreadTask>();
      task->line = &line;
      task->abort = &abort;
      task->sender = i >= spec.fds;
      task->fds = spec.fds;
      task->loops = spec.loops;
      task->bytes = spec.message_bytes;
      const std::size_t base = static_cast<std::size_t>(group) * spec.fds;
      if (task->sender) {
        task->out_fds = out_fds.data() + base;
        task->message = message.data();
      } else {
        task->in_fd = receiver_ends[base + i].get();
        task->messages = static_cast<long>(spec.fds) * spec.loops;
        task->buffer.resize(static_cast<std::size_t>(spec.message_bytes));
      }
      tasks_list.push_back(std::move(task));
    }
  }

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // Hundreds of tasks: a small stack keeps thread mode's memory footprint low.
  pthread_attr_setstacksize(&attr, 256 * 1024);
  if (cpus) pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
  int create_error = 0;
  for (auto& task : tasks_list) {
    pthread_t thread;
    create_error = pthread_create(&thread, &attr, thread_task_main, task.get());
    if (create_error != 0) break;
    threads.push_back(thread);
  }
  pthread_attr_destroy(&attr);

  double elapsed = 0;
  if (create_error == 0) {
    try {
      wait_until_ready(line, static_cast<long>(threads.size()));
    } catch (...) {
      create_error = -1;
    }
  }
  if (create_error != 0) abort.store(true);
  const double start = timing::monotonic_seconds();
  release(line);
  for (pthread_t thread : threads) pthread_join(thread, nullptr);
  elapsed = timing::monotonic_seconds() - start;
  if (create_error > 0) {
    throw RunError(std::string("messaging: creating thread ") + std::to_string(threads.size() + 1) +
                   " of " + std::to_string(tasks_list.size()) + ": " + std::strerror(create_error));
  }
  if (create_error < 0) throw RunError("messaging: threads did not start");
  int failed = 0;
  for (const auto& task : tasks_list) failed += task->result != 0;
  if (failed > 0) {
    throw RunError("messaging: " + std::to_string(failed) + " sender/receiver threads failed");
  }
  return elapsed;
}

}  // namespace

ForkBallast::ForkBallast(long anon_bytes, int mappings) {
  try {
    if (anon_bytes > 0) map(static_cast<std::size_t>(anon_bytes), false);
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    for (int i = 0; i < mappings; ++i) map(2 * page, true);
  } catch (...) {
    release();  // the destructor does not run for a throwing constructor
    throw;
  }
}

ForkBallast::~ForkBallast() { release(); }

void ForkBallast::release() {
  for (const auto& [address, bytes] : regions_) munmap(address, bytes);
  regions_.clear();
}

void ForkBallast::map(std::size_t bytes, bool split) {
  void* address = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) tasks::throw_errno("messaging: mapping the fork ballast");
  regions_.emplace_back(address, bytes);
  // Written, so every page is present and shared copy-on-write after fork().
  std::memset(address, 1, split ? bytes / 2 : bytes);
  // Another protection on the second page keeps neighbouring regions from
  // being merged into one mapping.
  if (split && mprotect(static_cast<char*>(address) + bytes / 2, bytes / 2, PROT_READ) != 0) {
    tasks::throw_errno("messaging: mprotect of the fork ballast");
  }
}

void validate_messaging(const MessagingSpec& spec, const std::string& what) {
  auto check = [&](long value, long low, long high, const char* name) {
    if (value < low || value > high) {
      throw InputError(what + ": " + name + "=" + std::to_string(value) + " is out of range (expected " +
                       std::to_string(low) + ".." + std::to_string(high) + ")");
    }
  };
  check(spec.groups, 1, 100000, "groups");
  check(spec.fds, 1, 1000, "fds");
  check(spec.loops, 1, 100000000, "loops");
  check(spec.message_bytes, 1, 1 << 20, "message size");
  check(spec.ballast_anon_bytes, 0, 1L << 34, "ballast bytes");
  check(spec.ballast_mappings, 0, 100000, "ballast mappings");
}

void ensure_messaging_fd_budget(const MessagingSpec& spec) {
  if (!spec.threads) return;
  // Every channel has two ends, plus the start line and what the agent holds.
  const rlim_t needed = static_cast<rlim_t>(spec.groups) * spec.fds * 2 + 64;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) tasks::throw_errno("getrlimit(RLIMIT_NOFILE)");
  if (limit.rlim_cur >= needed) return;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
    throw SkipBenchmark("thread mode with " + std::to_string(spec.groups) + " groups needs " +
                        std::to_string(needed) + " file descriptors, RLIMIT_NOFILE hard limit is " +
                        std::to_string(limit.rlim_max));
  }
  limit.rlim_cur = needed;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) tasks::throw_errno("setrlimit(RLIMIT_NOFILE)");
}

double run_messaging(const MessagingSpec& spec) {
  ensure_messaging_fd_budget(spec);
  StartLine line;
  tasks::make_pipe(line.ready_read, line.ready_write, "messaging start-up");
  tasks::make_pipe(line.wake_read, line.wake_write, "messaging release");
  cpu_set_t set = tasks::cpu_set_of(spec.cpus);
  const cpu_set_t* cpus = spec.cpus.empty() ? nullptr : &set;
  return spec.threads ? run_threads(spec, line, cpus) : run_processes(spec, line, cpus);
}

std::string describe_messaging(const MessagingSpec& spec) {
  return std::string(spec.threads ? "thread" : "process") + "/" + (spec.pipes ? "pipes" : "sockets");
}

}  // namespace kbench::bench
