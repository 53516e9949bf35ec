#include "process/process.h"
#include "runner/agent_invocation.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "common/errors.h"
#include "runner/interrupt.h"

namespace kbench::runner {

namespace {

constexpr std::size_t kStderrTailBytes = 4096;

// Keeps only the last lines of the agent's stderr: enough to explain a crash.
void append_tail(std::string& tail, const char* data, std::size_t size) {
  tail.append(data, size);
  if (tail.size() > 2 * kStderrTailBytes) tail.erase(0, tail.size() - kStderrTailBytes);
}

void trim_tail(std::string& tail) {
  if (tail.size() > kStderrTailBytes) {
    tail.erase(0, tail.size() - kStderrTailBytes);
    const auto newline = tail.find('\n');
    if (newline != std::string::npos) tail.erase(0, newline + 1);
  }
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
}

// A short, printable excerpt of a line for a message: control characters and
// bytes that are not ASCII shown as \xNN, the length given when cut.
std::string excerpt(std::string_view line) {
  constexpr std::size_t kShown = 60;
  std::string out;
  for (const unsigned char c : line.substr(0, kShown)) {
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  if (line.size() > kShown) out += fmt::format("... ({} bytes)", line.size());
  return out;
}

}  // namespace

namespace {

using process::ChunkHandler;

// How long an agent told to stop (SIGTERM) may take to kill its benchmark's
// tasks and exit before its whole process group is killed.
constexpr std::chrono::seconds kStopGrace{10};

// Runs the agent, hands every stdout chunk to `on_stdout`, enforces the
// timeout and reaps the agent's whole process group.
InvocationResult run_agent(sut::Connection& connection, const std::vector<std::string>& args,
                           std::chrono::milliseconds timeout, const ChunkHandler& on_stdout) {
  sut::AgentProcess agent = connection.start_agent(args);
  track_agent(agent.pid);
  InvocationResult result;
  result.allowed = timeout + connection.start_allowance();
  auto keep_tail = [&](const char* data, std::size_t size) { append_tail(result.stderr_tail, data, size); };

  process::PumpFds fds{agent.stdout_fd, agent.stderr_fd, -1, {}};
  const auto end = process::pump_output(fds, process::Clock::now() + result.allowed,
                                    {on_stdout, keep_tail, [] { return !interrupted(); }});
  if (end == process::PumpEnd::Deadline) result.timed_out = true;
  if (end != process::PumpEnd::Eof) {
    // SIGTERM first: the agent kills everything its benchmark started (its
    // cgroup, or every descendant it reaped), including tasks that left its
    // process group; the group kill below is the backstop.
    kill(agent.pid, SIGTERM);
    process::pump_output(fds, process::Clock::now() + kStopGrace, {{}, keep_tail, {}});
  }
  // The agent may have exited while children of its benchmark live on (or it
  // timed out): the group goes in any case.
  kill(-agent.pid, SIGKILL);
  track_agent(-1);  // before the reap, so a late signal never hits a reused pid
  for (int fd : {fds.stdout_fd, fds.stderr_fd}) {
    if (fd >= 0) close(fd);
  }

  const int status = process::wait_for_exit(agent.pid);
  if (WIFEXITED(status)) {
    result.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  trim_tail(result.stderr_tail);
  return result;
}

}  // namespace

void RecordLineReader::feed(const char* data, std::size_t size) {
  std::string_view rest(data, size);
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    const std::string_view piece = rest.substr(0, newline);
    if (!discarding_) {
      if (pending_.size() + piece.size() > kMaxRecordLineBytes) {
        if (!fault_) fault_ = "agent wrote a line of more than 1 MiB";
        pending_.clear();
        pending_.shrink_to_fit();
        discarding_ = true;
      } else {
        pending_.append(piece);
      }
    }
    if (newline == std::string_view::npos) break;
    if (!discarding_) handle_line(pending_);
    pending_.clear();
    discarding_ = false;
    rest.remove_prefix(newline + 1);
  }
}

void RecordLineReader::finish() {
  if (!discarding_ && !pending_.empty()) handle_line(pending_);
  pending_.clear();
  discarding_ = false;
}

void RecordLineReader::handle_line(std::string_view line) {
  if (fault_ || line.empty()) return;
  nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object() || !record.contains("type")) {
    fault_ = "agent wrote a line that is not a JSON record: " + excerpt(line);
    return;
  }
  on_record_(record);
}

InvocationResult invoke_agent(sut::Connection& connection, const std::vector<std::string>& args,
                              std::chrono::milliseconds timeout, const RecordHandler& on_record) {
  RecordLineReader reader(on_record);
  InvocationResult result = run_agent(connection, args, timeout,
                                      [&](const char* data, std::size_t size) { reader.feed(data, size); });
  // A killed agent may have been cut off mid-line: that is the kill's doing,
  // not a fault of what it wrote.
  if (!result.timed_out && result.signal == 0) reader.finish();
  result.stream_fault = reader.fault();
  return result;
}

InvocationResult capture_agent_output(sut::Connection& connection, const std::vector<std::string>& args,
                                      std::chrono::milliseconds timeout, std::string& output) {
  return run_agent(connection, args, timeout,
                   [&](const char* data, std::size_t size) { output.append(data, size); });
}

std::string describe_failure(const InvocationResult& result) {
  if (result.timed_out) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(result.allowed).count();
    return fmt::format("timed out after {}s", seconds);
  }
  if (result.signal != 0) return fmt::format("killed by signal {} ({})", result.signal, strsignal(result.signal));
  if (result.exit_status != 0) return fmt::format("agent exited with status {}", result.exit_status);
  if (result.stream_fault) return *result.stream_fault;
  return "";
}

}  // namespace kbench::runner
