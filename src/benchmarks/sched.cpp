// perf/sched: the three `perf bench sched` benchmarks of the seed report.
//   pipe            two tasks ping-pong one int over a pair of pipes
//   messaging       hackbench-style groups of senders and receivers
//   seccomp-notify  a child's syscall answered by the parent through
//                   SECCOMP_RET_USER_NOTIF
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <sstream>

#include "benchmarks/benchmark.h"
#include "benchmarks/messaging.h"
#include "benchmarks/sched_tasks.h"
#include "common/errors.h"
#include "timing/clock.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
// Linux 6.6 uapi; older headers lack it while newer kernels support it.
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

namespace kbench::bench {
namespace {

using tasks::Fd;

// Where the two tasks of pipe / seccomp-notify run.
struct PairPlacement {
  std::vector<int> first;   // the measuring task (the agent's thread)
  std::vector<int> second;  // the partner (child process or thread)
  std::string text;
};

PairPlacement place_pair(const std::string& mode, int requested_cpu, const std::string& what) {
  PairPlacement p;
  if (mode == "same") {
    const int cpu = tasks::home_cpu(requested_cpu);
    p.first = p.second = {cpu};
    p.text = what + ": both tasks on cpu" + std::to_string(cpu);
  } else if (mode == "spread") {
    const int cpu = tasks::home_cpu(requested_cpu);
    const int other = tasks::other_cpu(cpu);
    if (other < 0) throw SkipBenchmark("cpus=spread needs two online CPUs, this machine has one");
    p.first = {cpu};
    p.second = {other};
    p.text = what + ": measuring task on cpu" + std::to_string(cpu) + ", partner on cpu" +
             std::to_string(other);
  } else {  // "none": the only other value params() accepts
    p.first = p.second = tasks::online_cpus();
    p.text = what + ": both tasks unpinned over CPUs " + tasks::describe_cpus(p.first);
  }
  return p;
}

// ---------------------------------------------------------------- pipe

struct PipePartner {
  int in_fd, out_fd;
  long round_trips;
  cpu_set_t cpus;
  int result = 0;
};

int echo_ints(int in_fd, int out_fd, long round_trips) {
  int value = 0;
  for (long i = 0; i < round_trips; ++i) {
    if (!tasks::read_all(in_fd, &value, sizeof(value))) return 1;
    ++value;
    if (!tasks::write_all(out_fd, &value, sizeof(value))) return 1;
  }
  return 0;
}

void* pipe_partner_thread(void* arg) {
  auto* partner = static_cast<PipePartner*>(arg);
  if (!tasks::set_thread_affinity(partner->cpus)) {
    partner->result = 2;
    // Still serve the round trips: the measuring side is already waiting.
  }
  const int served = echo_ints(partner->in_fd, partner->out_fd, partner->round_trips);
  if (partner->result == 0) partner->result = served;
  return nullptr;
}

// Round trips per second. One extra round trip first lets the partner reach
// its read before the clock starts, so process/thread creation is not timed.
double run_pipe(long loops, bool threads, const PairPlacement& where) {
  Fd to_partner_read, to_partner_write, from_partner_read, from_partner_write;
  tasks::make_pipe(to_partner_read, to_partner_write, "pipe ping");
  tasks::make_pipe(from_partner_read, from_partner_write, "pipe pong");
  PipePartner partner{to_partner_read.get(), from_partner_write.get(), loops + 1,
                      tasks::cpu_set_of(where.second)};
  tasks::ScopedAffinity pin(where.first);
  tasks::Children children;
  pthread_t thread{};
  if (threads) {
    if (int error = pthread_create(&thread, nullptr, pipe_partner_thread, &partner)) {
      errno = error;
      tasks::throw_errno("perf/sched pipe: pthread_create");
    }
  } else {
    children.spawn([&] {
      const bool pinned = tasks::set_thread_affinity(partner.cpus);
      const int served = echo_ints(partner.in_fd, partner.out_fd, partner.round_trips);
      return served != 0 ? served : (pinned ? 0 : 2);
    });
    // The parent's copies would hide EOF from a dead partner.
    to_partner_read.reset();
    from_partner_write.reset();
  }

  int value = 0;
  bool ok = true;
  double start = 0;
  for (long i = 0; i <= loops && ok; ++i) {
    if (i == 1) start = timing::monotonic_seconds();
    ok = tasks::write_all(to_partner_write.get(), &value, sizeof(value)) &&
         tasks::read_all(from_partner_read.get(), &value, sizeof(value));
  }
  const double elapsed = timing::monotonic_seconds() - start;
  if (threads) {
    if (!ok) {
      // Unblock a partner stuck in read so that it can be joined.
      to_partner_write.reset();
    }
    pthread_join(thread, nullptr);
    if (!ok || partner.result != 0) throw RunError("perf/sched pipe: the partner thread failed");
  } else {
    to_partner_write.reset();
    if (children.wait_all() != 0 || !ok) throw RunError("perf/sched pipe: the partner process failed");
  }
  if (value != loops + 1) throw RunError("perf/sched pipe: the token came back wrong");
  return static_cast<double>(loops) / elapsed;
}

// ---------------------------------------------------------- seccomp-notify

// The intercepted syscall: getppid is never needed by the child once its
// parent-death check is done, and it has no side effects to emulate.
constexpr long kNotifiedSyscall = __NR_getppid;
constexpr long kAnswer = 0x5ecc0;

int install_notify_filter() {
  // A benchmark filter, not a sandbox: the syscall number alone decides.
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<__u32>(kNotifiedSyscall), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return static_cast<int>(
      syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program));
}

// Sends the listener fd (or, on failure, only the errno) to the parent.
bool send_listener(int socket_fd, int listener, int error) {
  char payload[sizeof(int)];
  std::memcpy(payload, &error, sizeof(error));
  iovec iov{payload, sizeof(payload)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  if (listener >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &listener, sizeof(int));
  }
  return sendmsg(socket_fd, &message, 0) == static_cast<ssize_t>(sizeof(payload));
}

// The listener fd, or -1 with `error` set to the child's errno.
int receive_listener(int socket_fd, int& error) {
  char payload[sizeof(int)];
  iovec iov{payload, sizeof(payload)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  ssize_t got;
  do {
    got = recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof(payload))) {
    error = got < 0 ? errno : EPIPE;
    return -1;
  }
  std::memcpy(&error, payload, sizeof(error));
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  if (!header || header->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  std::memcpy(&fd, CMSG_DATA(header), sizeof(int));
  return fd;
}

int notified_child(int socket_fd, long calls, const cpu_set_t& cpus) {
  const bool pinned = tasks::set_thread_affinity(cpus);
  const int listener = install_notify_filter();
  if (!send_listener(socket_fd, listener, listener < 0 ? errno : 0)) return 4;
  if (listener < 0) return 0;  // the parent turns the errno into a skip
  close(listener);
  char go;
  if (!tasks::read_all(socket_fd, &go, 1)) return 5;
  for (long i = 0; i < calls; ++i) {
    if (syscall(kNotifiedSyscall) != kAnswer) return 6;
  }
  return pinned ? 0 : 2;
}

// Notification round trips per second; throws SkipBenchmark when the kernel
// offers no user notification. The first round trip is not timed.
double run_seccomp_notify(long loops, bool sync_wakeup, const PairPlacement& where) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    tasks::throw_errno("perf/sched seccomp-notify: socketpair");
  }
  Fd parent_end(pair[0]), child_end(pair[1]);
  const cpu_set_t child_cpus = tasks::cpu_set_of(where.second);
  tasks::ScopedAffinity pin(where.first);
  tasks::Children children;
  children.spawn([&] { return notified_child(child_end.get(), loops + 1, child_cpus); });
  child_end.reset();

  int error = 0;
  Fd listener(receive_listener(parent_end.get(), error));
  if (listener.get() < 0) {
    children.kill_all();
    throw SkipBenchmark(std::string("seccomp user notification unavailable: "
                                    "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): ") +
                        std::strerror(error));
  }
  if (sync_wakeup && ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS,
                           SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) != 0) {
    const int why = errno;
    children.kill_all();
    throw SkipBenchmark(std::string("seccomp_sync=1: SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP "
                                    "unsupported (Linux 6.6+): ") +
                        std::strerror(why));
  }
  const char go = 'g';
  if (!tasks::write_all(parent_end.get(), &go, 1)) tasks::throw_errno("perf/sched seccomp-notify: start");

  double start = 0;
  for (long i = 0; i <= loops; ++i) {
    seccomp_notif request;
    std::memset(&request, 0, sizeof(request));  // the kernel insists on a zeroed request
    if (ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_RECV, &request) != 0) {
      if (errno == EINTR) {
        --i;
        continue;
      }
      tasks::throw_errno("perf/sched seccomp-notify: SECCOMP_IOCTL_NOTIF_RECV");
    }
    seccomp_notif_resp response;
    std::memset(&response, 0, sizeof(response));
    response.id = request.id;
    response.val = kAnswer;
    if (ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_SEND, &response) != 0) {
      tasks::throw_errno("perf/sched seccomp-notify: SECCOMP_IOCTL_NOTIF_SEND");
    }
    if (i == 0) start = timing::monotonic_seconds();
  }
  const double elapsed = timing::monotonic_seconds() - start;
  if (children.wait_all() != 0) throw RunError("perf/sched seccomp-notify: the notified child failed");
  return static_cast<double>(loops) / elapsed;
}

// --------------------------------------------------------------- benchmark

const std::vector<std::string> kSchedTests = {"pipe", "messaging", "seccomp-notify"};

// Values were checked against params(); these only convert them.
std::vector<std::string> parse_sched_tests(const Params& params) {
  const auto tests = param_list(params, "tests");
  // Always in the catalogue's order, whatever the order given.
  std::vector<std::string> ordered;
  for (const auto& name : kSchedTests) {
    if (std::find(tests.begin(), tests.end(), name) != tests.end()) ordered.push_back(name);
  }
  return ordered;
}

MessagingSpec messaging_spec(const Params& params) {
  MessagingSpec spec;
  spec.groups = int_param(params, "groups");
  spec.loops = int_param(params, "messaging_loops");
  spec.fds = int_param(params, "fds");
  spec.message_bytes = int_param(params, "message_bytes");
  spec.threads = param_string(params, "messaging_tasks") == "thread";
  spec.pipes = param_string(params, "messaging_ipc") == "pipes";
  spec.cpus = tasks::online_cpus();
  if (param_string(params, "messaging_ballast") == "perf") {
    spec.ballast_anon_bytes = kPerfBallastAnonBytes;
    spec.ballast_mappings = kPerfBallastMappings;
  }
  validate_messaging(spec, "perf/sched messaging");
  return spec;
}

// perf's command line in the name, so that a table says what ran; options at
// perf's defaults are left out, as in the seed's "messaging -l 10000".
std::string messaging_class_name(const MessagingSpec& spec) {
  std::string name = "messaging";
  if (spec.pipes) name += " -p";
  if (spec.threads) name += " -t";
  if (spec.groups != 10) name += " -g " + std::to_string(spec.groups);
  if (spec.fds != 20) name += " -f " + std::to_string(spec.fds);
  name += " -l " + std::to_string(spec.loops);
  // Without the ballast process mode is a different (~25% shorter)
  // measurement than perf's, so it must not carry perf's name alone.
  if (!spec.threads && spec.ballast_anon_bytes == 0 && spec.ballast_mappings == 0) name += " (small forker)";
  return name;
}

class PerfSched : public Benchmark {
 public:
  std::string name() const override { return "perf/sched"; }
  std::string description() const override {
    return "perf bench sched: pipe ping-pong round trips, hackbench-style messaging time, "
           "seccomp user-notification round trips";
  }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec{"tests", "pipe,messaging,seccomp-notify", "pipe,messaging,seccomp-notify",
                  "comma list of the tests to run"}
            .choice(kSchedTests)
            .list_of(),
        ParamSpec{"loops", "1000000", "20000", "pipe: round trips per repeat (perf -l)"}.integer(1, 1e9),
        ParamSpec{"pipe_tasks", "process", "process", "pipe: partner is a forked 'process' or a 'thread' (perf -T)"}
            .choice({"process", "thread"}),
        ParamSpec{"cpus", "same", "same",
                  "pipe and seccomp-notify: 'same' (both tasks on the agent's --cpu, else its first "
                  "allowed CPU), 'spread' (partner on another CPU) or 'none' (unpinned)"}
            .choice({"same", "spread", "none"}),
        ParamSpec{"groups", "10", "2", "messaging: groups of senders and receivers (perf -g)"}.integer(1, 100000),
        ParamSpec{"fds", "20", "20", "messaging: senders and receivers per group (perf -f)"}.integer(1, 1000),
        ParamSpec{"messaging_loops", "100", "100", "messaging: messages each sender sends each receiver (perf -l)"}
            .integer(1, 100000000),
        ParamSpec{"message_bytes", "100", "100", "messaging: bytes per message"}.integer(1, 1 << 20),
        ParamSpec{"messaging_tasks", "process", "process", "messaging: 'process' or 'thread' (perf -t)"}
            .choice({"process", "thread"}),
        ParamSpec{"messaging_ipc", "sockets", "sockets", "messaging: 'sockets' (socketpairs) or 'pipes' (perf -p)"}
            .choice({"sockets", "pipes"}),
        ParamSpec{"messaging_ballast", "perf", "perf",
                  "messaging, processes: 'perf' forks the tasks carrying the footprint of a task forked from "
                  "perf (3 MiB written anonymous memory, 160 extra mappings), as perf's own tasks do; 'none' "
                  "forks them from the small agent (~25% faster; the name gets ' (small forker)')"}
            .choice({"perf", "none"}),
        ParamSpec{"seccomp_loops", "300000", "20000", "seccomp-notify: notified syscalls per repeat (perf -l)"}
            .integer(1, 1e9),
        ParamSpec{"seccomp_sync", "0", "0",
                  "seccomp-notify: 1 sets SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (perf --sync-mode)"}
            .boolean(),
    };
  }

  std::vector<ResultClass> result_classes(const Params& params) const override {
    std::vector<ResultClass> classes;
    for (const auto& test : parse_sched_tests(params)) {
      if (test == "pipe") classes.push_back({"pipe", "ops/sec", Better::Higher});
      if (test == "messaging") classes.push_back({messaging_class_name(messaging_spec(params)), "sec", Better::Lower});
      if (test == "seccomp-notify") classes.push_back({"seccomp-notify", "ops/sec", Better::Higher});
    }
    return classes;
  }

  void prepare(const Params& params, const Placement& where) override {
    tests_ = parse_sched_tests(params);
    loops_ = param_int(params, "loops");
    pipe_threads_ = param_string(params, "pipe_tasks") == "thread";
    seccomp_loops_ = param_int(params, "seccomp_loops");
    seccomp_sync_ = param_string(params, "seccomp_sync") == "1";
    spec_ = messaging_spec(params);
    pair_ = place_pair(param_string(params, "cpus"), where.cpu, "pipe/seccomp-notify");
    if (has("messaging")) ensure_messaging_fd_budget(spec_);
    // A one-call trial: skip before the warmups rather than fail a repeat.
    if (has("seccomp-notify")) run_seccomp_notify(1, seccomp_sync_, pair_);
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement&) override {
    std::vector<Measurement> out;
    for (const auto& rc : result_classes(params)) {
      double value = 0;
      if (rc.name == "pipe") {
        value = run_pipe(loops_, pipe_threads_, pair_);
      } else if (rc.name == "seccomp-notify") {
        value = run_seccomp_notify(seccomp_loops_, seccomp_sync_, pair_);
      } else {
        value = run_messaging(spec_);
      }
      out.push_back({rc, value});
    }
    return out;
  }

  std::map<std::string, std::string> notes() const override {
    std::map<std::string, std::string> n;
    std::string placement;
    if (has("pipe") || has("seccomp-notify")) {
      placement = pair_.text + " (pipe partner: " + (pipe_threads_ ? "thread" : "process") + ")";
    }
    if (has("messaging")) {
      if (!placement.empty()) placement += "; ";
      placement += "messaging: " + std::to_string(spec_.groups * spec_.fds * 2) + " " +
                   describe_messaging(spec_) + " tasks unpinned over CPUs " +
                   tasks::describe_cpus(spec_.cpus);
    }
    if (!placement.empty()) n["placement"] = placement;
    if (has("messaging") && !spec_.threads) {
      n["messaging ballast"] =
          spec_.ballast_anon_bytes > 0 || spec_.ballast_mappings > 0
              ? "tasks forked carrying " + std::to_string(spec_.ballast_anon_bytes >> 10) +
                    " KiB of written anonymous memory and " + std::to_string(spec_.ballast_mappings) +
                    " extra mappings, the footprint of a task forked from perf"
              : "tasks forked from the agent with no ballast (small forker)";
    }
    return n;
  }

 private:
  bool has(const std::string& test) const {
    return std::find(tests_.begin(), tests_.end(), test) != tests_.end();
  }

  std::vector<std::string> tests_;
  long loops_ = 0;
  bool pipe_threads_ = false;
  long seccomp_loops_ = 0;
  bool seccomp_sync_ = false;
  MessagingSpec spec_;
  PairPlacement pair_;
};

KBENCH_REGISTER("perf/sched", [] { return std::make_unique<PerfSched>(); });

}  // namespace
}  // namespace kbench::bench
