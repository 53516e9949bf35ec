// sockperf/echo-lat-{tcp,udp} and sockperf/packet-tp-{tcp,udp}: loopback
// message benchmarks in the manner of sockperf: a client thread of the agent
// and a server that is a forked child (default, like sockperf's separate
// server program) or another thread.
//   ping-pong   the client sends one message, the server echoes it, the client
//               waits for it; latency = round trip / 2, as sockperf reports it.
//   throughput  the client sends as fast as it can, the server only reads;
//               the rate is counted at the sender, as sockperf counts it.
// docs/benchmarks/sockperf.md describes the parameters and placement.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/benchmark.h"
#include "benchmarks/sched_tasks.h"
#include "common/errors.h"
#include "timing/affinity.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"
#include "timing/histogram.h"

namespace kbench::bench {
namespace {

enum class Protocol { Tcp, Udp };
enum class Mode { PingPong, Throughput };

// First byte of every message: the server stops at a quit message, so that a
// run ends at a message boundary and the next one starts on a clean socket.
constexpr char kDataMarker = 'D';
constexpr char kQuitMarker = 'Q';
// Largest UDP payload over IPv4.
constexpr std::uint64_t kMaxUdpPayload = 65507;
constexpr std::uint64_t kMaxTcpMessage = 1 << 20;
// How long the server waits in recv before looking at the stop flag, and how
// long the client waits for a reply before calling the run broken.
constexpr int kServerPollMs = 100;
constexpr int kClientTimeoutMs = 2000;

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

using tasks::Fd;

void set_timeout(int fd, int option, int milliseconds) {
  timeval tv{milliseconds / 1000, (milliseconds % 1000) * 1000};
  if (setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv) != 0) throw RunError(errno_text("setsockopt timeout"));
}

void set_int_option(int fd, int level, int option, int value, const char* what) {
  if (setsockopt(fd, level, option, &value, sizeof value) != 0) throw RunError(errno_text(what));
}

sockaddr_in loopback_any_port() {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the kernel picks a free ephemeral port
  return addr;
}

sockaddr_in bound_address(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) throw RunError(errno_text("getsockname"));
  return addr;
}

Fd make_socket(int type) {
  Fd fd(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) {
    if (errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT) throw SkipBenchmark(errno_text("IPv4 sockets unavailable"));
    throw RunError(errno_text("socket"));
  }
  return fd;
}

void bind_loopback(int fd) {
  sockaddr_in addr = loopback_any_port();
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno == EADDRNOTAVAIL) throw SkipBenchmark("no loopback interface (127.0.0.1 not available)");
    throw RunError(errno_text("bind 127.0.0.1"));
  }
}

// Sends all of `size` bytes; false when the peer is gone or the send timed out.
bool send_all(int fd, const char* data, std::size_t size, int flags) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, flags);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= std::size_t(n);
  }
  return true;
}

enum class RecvStatus { Ok, Timeout, Closed, Error };

// Receives exactly `size` bytes of a TCP stream.
RecvStatus recv_all(int fd, char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n > 0) {
      data += n;
      size -= std::size_t(n);
    } else if (n == 0) {
      return RecvStatus::Closed;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return RecvStatus::Timeout;
    } else {
      return RecvStatus::Error;
    }
  }
  return RecvStatus::Ok;
}

// ---------------------------------------------------------------------------
// Placement

enum class PlacementMode { Same, Cross, Free };

PlacementMode parse_placement(const Params& params) {
  const std::string& text = param_string(params, "placement");
  if (text == "same") return PlacementMode::Same;
  if (text == "cross") return PlacementMode::Cross;
  return PlacementMode::Free;  // the only other value params() accepts
}

struct ThreadCpus {
  int client = -1;  // -1: any CPU
  int server = -1;
};

ThreadCpus choose_cpus(PlacementMode mode, int agent_cpu) {
  if (mode == PlacementMode::Free) return {};
  const std::vector<int> online = timing::online_cpus();
  int base = agent_cpu;
  if (base < 0) {
    // Not pinned by the agent: the first CPU the agent may use.
    const std::vector<int> allowed = timing::current_affinity();
    base = allowed.empty() ? online.front() : allowed.front();
  }
  if (mode == PlacementMode::Same) return {base, base};
  auto it = std::find(online.begin(), online.end(), base);
  if (online.size() < 2 || it == online.end()) {
    throw SkipBenchmark("placement=cross needs a second online CPU besides cpu" + std::to_string(base));
  }
  ++it;
  if (it == online.end()) it = online.begin();
  return {base, *it};
}

// Each thread places itself; the agent's own thread keeps its affinity.
void place_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= 0) {
    CPU_SET(cpu, &set);
  } else {
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &set);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw RunError(errno_text("sched_setaffinity to cpu" + std::to_string(cpu)));
  }
}

std::string describe(const ThreadCpus& cpus) {
  if (cpus.client < 0) return "client and server unpinned (scheduler's choice)";
  return "client cpu" + std::to_string(cpus.client) + ", server cpu" + std::to_string(cpus.server);
}

// ---------------------------------------------------------------------------
// Server process or thread

enum class ServerKind { Process, Thread };

ServerKind parse_server_kind(const Params& params) {
  const std::string& text = param_string(params, "server");
  if (text == "process") return ServerKind::Process;
  return ServerKind::Thread;  // the only other value params() accepts
}

// Lives in a MAP_SHARED page so that a forked server sees the stop flag and
// the client sees what the server counted; lock-free atomics work across
// processes.
struct SharedState {
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> server_messages{0};
  char error[256] = {};
};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free);

// ---------------------------------------------------------------------------
// Parameters

std::uint64_t max_message(Protocol protocol) { return protocol == Protocol::Udp ? kMaxUdpPayload : kMaxTcpMessage; }

// Values were checked against params() (sizes within 2B..max_message).
std::vector<std::uint64_t> parse_sizes(const Params& params, Protocol) {
  std::vector<std::uint64_t> sizes;
  for (const auto& item : param_list(params, "msg-sizes")) {
    const std::uint64_t size = parse_size(item, "--param msg-sizes");
    if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) sizes.push_back(size);
  }
  return sizes;
}

double parse_seconds(const Params& params) { return param_double(params, "time"); }

std::string seconds_label(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

// Warm-up before each measured interval: caches, socket buffers and the
// scheduler settle (sockperf also sends warm-up messages first).
double warmup_seconds(double measured) { return std::min(0.1 * measured, 0.2); }

// ---------------------------------------------------------------------------
// The benchmark

class SockBench : public Benchmark {
 public:
  SockBench(Protocol protocol, Mode mode) : protocol_(protocol), mode_(mode) {}
  // finish() is the contract; this covers an owner that forgets it.
  ~SockBench() override { close_all(); }

  std::string name() const override {
    const std::string proto = protocol_ == Protocol::Tcp ? "tcp" : "udp";
    return mode_ == Mode::PingPong ? "sockperf/echo-lat-" + proto : "sockperf/packet-tp-" + proto;
  }
  std::string description() const override {
    const std::string proto = protocol_ == Protocol::Tcp ? "TCP" : "UDP";
    if (mode_ == Mode::PingPong) {
      return proto + " loopback ping-pong between client and server: one-way latency (round trip / 2), mean and p99";
    }
    return proto + " loopback one-way stream from client to server: messages and Mbps sent per second";
  }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec{"msg-sizes", "64B,256B,1024B,1472B", "64B,1472B", "message sizes, comma-separated (e.g. 64B,1KB)"}
            .size(2, double(max_message(protocol_)))
            .list_of(),
        ParamSpec{"time", "1", "0.5", "measured seconds per message size (after a warm-up of min(10%, 0.2 s))"}
            .number(0.001, 3600),
        ParamSpec{"placement", "same", "same",
                  "'same': client and server both on the agent's --cpu (default: cross-CPU wake-ups "
                  "dominate on VMs); 'cross': server on the next online CPU; 'free': unpinned"}
            .choice({"same", "cross", "free"}),
        ParamSpec{"server", "process", "process",
                  "'process': the server is a forked child process, as sockperf's server is a separate "
                  "program; 'thread': a thread of the agent (no address-space switch)"}
            .choice({"process", "thread"}),
    };
  }
  std::vector<ResultClass> result_classes(const Params& params) const override {
    const std::string t = seconds_label(parse_seconds(params));
    std::vector<ResultClass> out;
    for (std::uint64_t size : parse_sizes(params, protocol_)) {
      const std::string prefix = std::string(mode_ == Mode::PingPong ? "ping-pong" : "throughput") +
                                 " m:" + std::to_string(size) + "B t:" + t + "s, ";
      if (mode_ == Mode::PingPong) {
        out.push_back({prefix + "avg_latency", "usec", Better::Lower});
        out.push_back({prefix + "latency_p99", "usec", Better::Lower});
      } else {
        out.push_back({prefix + "msg_rate", "msg/sec", Better::Higher});
        out.push_back({prefix + "throughput_mbps", "Mbps", Better::Higher});
      }
    }
    return out;
  }

  void prepare(const Params& params, const Placement& where) override {
    parse_sizes(params, protocol_);
    parse_seconds(params);
    cpus_ = choose_cpus(parse_placement(params), where.cpu);
    notes_["placement"] = describe(cpus_) + (parse_server_kind(params) == ServerKind::Process
                                                  ? "; server in a forked child process"
                                                  : "; server a thread of the agent");
    if (mode_ == Mode::PingPong) timing::calibration();
    try {
      connect_pair();
      void* page = mmap(nullptr, sizeof(SharedState), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (page == MAP_FAILED) throw RunError(errno_text("mmap of the client/server shared page"));
      shared_ = new (page) SharedState;
    } catch (...) {
      close_all();
      throw;
    }
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement& where) override {
    const auto sizes = parse_sizes(params, protocol_);
    const double seconds = parse_seconds(params);
    const ThreadCpus cpus = choose_cpus(parse_placement(params), where.cpu);
    const ServerKind kind = parse_server_kind(params);
    if (client_.get() < 0 || !shared_) throw RunError(name() + ": run_repeat without prepare (no sockets)");
    const auto classes = result_classes(params);
    std::vector<Measurement> out;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const auto [first, second] = run_size(sizes[i], seconds, cpus, kind);
      out.push_back({classes[2 * i], first});
      out.push_back({classes[2 * i + 1], second});
    }
    return out;
  }

  void finish() override { close_all(); }
  std::map<std::string, std::string> notes() const override { return notes_; }

 private:
  void close_all() {
    client_.reset();
    server_.reset();
    if (shared_) {
      shared_->~SharedState();
      munmap(shared_, sizeof(SharedState));
      shared_ = nullptr;
    }
  }

  void connect_pair() {
    close_all();
    if (protocol_ == Protocol::Tcp) {
      Fd listener = make_socket(SOCK_STREAM);
      bind_loopback(listener.get());
      if (::listen(listener.get(), 1) != 0) throw RunError(errno_text("listen"));
      const sockaddr_in server_addr = bound_address(listener.get());
      client_ = make_socket(SOCK_STREAM);
      if (::connect(client_.get(), reinterpret_cast<const sockaddr*>(&server_addr), sizeof server_addr) != 0) {
        throw RunError(errno_text("connect to 127.0.0.1:" + std::to_string(ntohs(server_addr.sin_port))));
      }
      server_ = Fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (server_.get() < 0) throw RunError(errno_text("accept"));
      // sockperf disables Nagle for latency runs and keeps it for throughput.
      const int nodelay = mode_ == Mode::PingPong ? 1 : 0;
      set_int_option(client_.get(), IPPROTO_TCP, TCP_NODELAY, nodelay, "TCP_NODELAY");
      set_int_option(server_.get(), IPPROTO_TCP, TCP_NODELAY, nodelay, "TCP_NODELAY");
    } else {
      server_ = make_socket(SOCK_DGRAM);
      bind_loopback(server_.get());
      client_ = make_socket(SOCK_DGRAM);
      bind_loopback(client_.get());
      server_addr_ = bound_address(server_.get());
    }
    set_timeout(server_.get(), SO_RCVTIMEO, kServerPollMs);
    set_timeout(client_.get(), SO_RCVTIMEO, kClientTimeoutMs);
    set_timeout(client_.get(), SO_SNDTIMEO, kClientTimeoutMs);
  }

  // Discards anything a previous, interrupted run left in the server socket.
  void drain_server() {
    std::vector<char> scratch(65536);
    while (::recv(server_.get(), scratch.data(), scratch.size(), MSG_DONTWAIT) > 0) {
    }
  }

  bool client_send(const char* data, std::size_t size) {
    if (protocol_ == Protocol::Tcp) return send_all(client_.get(), data, size, MSG_NOSIGNAL);
    for (;;) {
      const ssize_t n = ::sendto(client_.get(), data, size, 0, reinterpret_cast<const sockaddr*>(&server_addr_),
                                 sizeof server_addr_);
      if (n == ssize_t(size)) return true;
      if (n < 0 && errno == EINTR) continue;
      // Loopback rarely refuses a datagram; when the kernel is out of
      // buffers it says so and the message is simply not counted.
      if (n < 0 && errno == ENOBUFS) return true;
      return false;
    }
  }

  // Returns {avg_latency usec, p99 usec} or {msg/sec, Mbps}.
  std::pair<double, double> run_size(std::uint64_t size, double seconds, const ThreadCpus& cpus,
                                     ServerKind kind) {
    drain_server();
    shared_->stop.store(false);
    shared_->server_messages.store(0);
    shared_->error[0] = '\0';
    std::exception_ptr server_error, client_error;
    std::pair<double, double> result{0, 0};

    auto serve = [&] {
      place_self(cpus.server);
      const std::uint64_t n =
          mode_ == Mode::PingPong ? serve_echo(size, shared_->stop) : serve_sink(size, shared_->stop);
      shared_->server_messages.store(n);
    };
    std::thread server_thread;
    pid_t server_pid = -1;
    if (kind == ServerKind::Thread) {
      server_thread = std::thread([&] {
        try {
          serve();
        } catch (...) {
          server_error = std::current_exception();
        }
      });
    } else {
      server_pid = fork_server(serve);
    }
    std::thread client([&] {
      try {
        place_self(cpus.client);
        result = mode_ == Mode::PingPong ? ping_pong(size, seconds) : stream(size, seconds);
      } catch (...) {
        client_error = std::current_exception();
      }
      // Whatever happened, the server must not wait for more.
      shared_->stop.store(true);
      send_quit(size);
    });
    client.join();
    if (server_thread.joinable()) server_thread.join();
    if (server_pid > 0) {
      int status = 0;
      while (waitpid(server_pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        const std::string why = shared_->error[0] ? std::string(shared_->error) : "exit status " + std::to_string(status);
        server_error = std::make_exception_ptr(RunError("server process: " + why));
      }
    }
    if (client_error) std::rethrow_exception(client_error);
    if (server_error) std::rethrow_exception(server_error);
    if (mode_ == Mode::Throughput && protocol_ == Protocol::Udp && sent_messages_ > 0) {
      notes_["udp_delivered_percent m:" + std::to_string(size) + "B"] =
          std::to_string(100.0 * double(shared_->server_messages.load()) / double(sent_messages_));
    }
    if (!(result.first > 0) || !(result.second > 0) || !std::isfinite(result.first) ||
        !std::isfinite(result.second)) {
      throw RunError(name() + " m:" + std::to_string(size) + "B measured nothing");
    }
    return result;
  }

  // The server as a child process, like sockperf's separate server: the
  // same-CPU ping-pong then pays for an address-space switch, as it does
  // between two programs. The child dies with the agent (PDEATHSIG, also when
  // the controller SIGKILLs the agent's process group, which it stays in) and
  // reports failure through the shared page and its exit status.
  template <typename Serve>
  pid_t fork_server(Serve& serve) {
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw RunError(errno_text("fork for the server process"));
    if (pid > 0) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(2);
    // The client's socket stays the parent's business.
    client_.reset();
    try {
      serve();
      _exit(0);
    } catch (const std::exception& e) {
      std::snprintf(shared_->error, sizeof shared_->error, "%s", e.what());
    } catch (...) {
      std::snprintf(shared_->error, sizeof shared_->error, "unknown error");
    }
    _exit(3);
  }

  void send_quit(std::uint64_t size) {
    std::vector<char> quit(size, 0);
    quit[0] = kQuitMarker;
    client_send(quit.data(), quit.size());
  }

  // The echo side of ping-pong: reply to each data message until a quit
  // message (or the stop flag, should the quit message never come).
  std::uint64_t serve_echo(std::uint64_t size, const std::atomic<bool>& stop) {
    std::vector<char> buffer(size);
    std::uint64_t messages = 0;
    const int fd = server_.get();
    for (;;) {
      if (protocol_ == Protocol::Tcp) {
        const RecvStatus status = recv_all(fd, buffer.data(), size);
        if (status == RecvStatus::Timeout) {
          if (stop.load()) return messages;
          continue;
        }
        if (status != RecvStatus::Ok) throw RunError("ping-pong server: connection lost");
        if (buffer[0] == kQuitMarker) return messages;
        if (!send_all(fd, buffer.data(), size, MSG_NOSIGNAL)) throw RunError(errno_text("ping-pong server send"));
      } else {
        sockaddr_in from{};
        socklen_t from_len = sizeof from;
        const ssize_t n = ::recvfrom(fd, buffer.data(), size, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n < 0) {
          if (errno == EINTR) continue;
          if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (stop.load()) return messages;
            continue;
          }
          throw RunError(errno_text("ping-pong server recvfrom"));
        }
        if (n > 0 && buffer[0] == kQuitMarker) return messages;
        if (::sendto(fd, buffer.data(), std::size_t(n), 0, reinterpret_cast<sockaddr*>(&from), from_len) != n) {
          throw RunError(errno_text("ping-pong server sendto"));
        }
      }
      ++messages;
    }
  }

  // The receiving side of a throughput run: read and discard, counting whole
  // messages, until the quit message.
  std::uint64_t serve_sink(std::uint64_t size, const std::atomic<bool>& stop) {
    const int fd = server_.get();
    std::vector<char> buffer(protocol_ == Protocol::Tcp ? std::max<std::uint64_t>(65536, size) : size);
    std::uint64_t messages = 0;
    std::uint64_t offset_in_message = 0;  // TCP: position in the current message
    for (;;) {
      const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          if (stop.load()) return messages;
          continue;
        }
        throw RunError(errno_text("throughput server recv"));
      }
      if (n == 0) {
        if (protocol_ == Protocol::Tcp) throw RunError("throughput server: connection closed");
        continue;
      }
      if (protocol_ == Protocol::Udp) {
        if (buffer[0] == kQuitMarker) return messages;
        ++messages;
        continue;
      }
      // A stream: look at the first byte of each message starting in this chunk.
      std::uint64_t position = 0;
      while (position < std::uint64_t(n)) {
        if (offset_in_message == 0) {
          if (buffer[position] == kQuitMarker) return messages;
          ++messages;
        }
        const std::uint64_t step = std::min<std::uint64_t>(size - offset_in_message, std::uint64_t(n) - position);
        position += step;
        offset_in_message = (offset_in_message + step) % size;
      }
    }
  }

  std::pair<double, double> ping_pong(std::uint64_t size, double seconds) {
    std::vector<char> message(size, 'x');
    std::vector<char> reply(size);
    message[0] = kDataMarker;
    timing::Histogram round_trips;  // in counter ticks
    const timing::Calibration& cal = timing::calibration();
    const auto ticks_for = [&](double s) { return std::uint64_t(s * cal.ticks_per_second); };
    const std::uint64_t start = timing::counter::begin();
    const std::uint64_t measure_from = start + ticks_for(warmup_seconds(seconds));
    const std::uint64_t measure_until = measure_from + ticks_for(seconds);
    std::uint64_t previous = start;
    for (;;) {
      if (!client_send(message.data(), size)) throw RunError(errno_text("ping-pong client send"));
      receive_reply(reply.data(), size);
      // One counter read per message: the end of one round trip is the start
      // of the next, so the loop's own cost (a few ns) is in every sample once.
      const std::uint64_t now = timing::counter::end();
      if (previous >= measure_from) round_trips.record(now - previous);
      previous = now;
      // On a busy machine one round trip can outlast the whole window: the
      // window is a minimum, and it ends only once it holds a round trip.
      if (now >= measure_until && round_trips.count() > 0) break;
    }
    const double to_usec_one_way = 1e6 / cal.ticks_per_second / 2;
    return {round_trips.mean() * to_usec_one_way, round_trips.percentile(99) * to_usec_one_way};
  }

  void receive_reply(char* data, std::size_t size) {
    if (protocol_ == Protocol::Tcp) {
      switch (recv_all(client_.get(), data, size)) {
        case RecvStatus::Ok:
          return;
        case RecvStatus::Timeout:
          throw RunError("ping-pong: no reply within " + std::to_string(kClientTimeoutMs) + " ms");
        default:
          throw RunError(errno_text("ping-pong client recv"));
      }
    }
    for (;;) {
      const ssize_t n = ::recv(client_.get(), data, size, 0);
      if (n == ssize_t(size)) return;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        throw RunError("ping-pong: no UDP reply within " + std::to_string(kClientTimeoutMs) + " ms");
      }
      throw RunError(errno_text("ping-pong client recv"));
    }
  }

  std::pair<double, double> stream(std::uint64_t size, double seconds) {
    std::vector<char> message(size, 'x');
    message[0] = kDataMarker;
    const double warm_until = timing::monotonic_seconds() + warmup_seconds(seconds);
    // Reading the clock every message would cost a few percent at 64B.
    constexpr std::uint64_t kBatch = 16;
    while (timing::monotonic_seconds() < warm_until) {
      for (std::uint64_t i = 0; i < kBatch; ++i) {
        if (!client_send(message.data(), size)) throw RunError(errno_text("throughput client send"));
      }
    }
    std::uint64_t sent = 0;
    const double start = timing::monotonic_seconds();
    const double until = start + seconds;
    double now = start;
    while (now < until) {
      for (std::uint64_t i = 0; i < kBatch; ++i) {
        if (!client_send(message.data(), size)) throw RunError(errno_text("throughput client send"));
      }
      sent += kBatch;
      now = timing::monotonic_seconds();
    }
    sent_messages_ = sent;
    const double rate = double(sent) / (now - start);
    // sockperf's "Mbps" is 2^20 bits per second; kept for comparable numbers.
    const double mbps = rate * double(size) * 8 / (1024.0 * 1024.0);
    return {rate, mbps};
  }

  Protocol protocol_;
  Mode mode_;
  ThreadCpus cpus_;
  Fd client_, server_;
  sockaddr_in server_addr_{};
  std::uint64_t sent_messages_ = 0;
  SharedState* shared_ = nullptr;  // MAP_SHARED: seen by a forked server too
  std::map<std::string, std::string> notes_;
};

KBENCH_REGISTER("sockperf/echo-lat-tcp", [] { return std::make_unique<SockBench>(Protocol::Tcp, Mode::PingPong); });
KBENCH_REGISTER("sockperf/echo-lat-udp", [] { return std::make_unique<SockBench>(Protocol::Udp, Mode::PingPong); });
KBENCH_REGISTER("sockperf/packet-tp-tcp",
                [] { return std::make_unique<SockBench>(Protocol::Tcp, Mode::Throughput); });
KBENCH_REGISTER("sockperf/packet-tp-udp",
                [] { return std::make_unique<SockBench>(Protocol::Udp, Mode::Throughput); });

}  // namespace
}  // namespace kbench::bench
