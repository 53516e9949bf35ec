#include "runner/agent_invocation.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "common/errors.h"
#include "runner/interrupt.h"
#include "sut/process.h"

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

void handle_line(const std::string& line, const RecordHandler& on_record, InvocationResult& result) {
  if (line.empty()) return;
  nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object() || !record.contains("type")) {
    result.bad_lines.push_back(line);
    return;
  }
  on_record(record);
}

}  // namespace

namespace {

using sut::ChunkHandler;

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
  auto keep_tail = [&](const char* data, std::size_t size) { append_tail(result.stderr_tail, data, size); };

  sut::PumpFds fds{agent.stdout_fd, agent.stderr_fd, -1, {}};
  const auto end = sut::pump_output(fds, sut::Clock::now() + timeout,
                                    {on_stdout, keep_tail, [] { return !interrupted(); }});
  if (end == sut::PumpEnd::Deadline) result.timed_out = true;
  if (end != sut::PumpEnd::Eof) {
    // SIGTERM first: the agent kills everything its benchmark started (its
    // cgroup, or every descendant it reaped), including tasks that left its
    // process group; the group kill below is the backstop.
    kill(agent.pid, SIGTERM);
    sut::pump_output(fds, sut::Clock::now() + kStopGrace, {{}, keep_tail, {}});
  }
  // The agent may have exited while children of its benchmark live on (or it
  // timed out): the group goes in any case.
  kill(-agent.pid, SIGKILL);
  track_agent(-1);  // before the reap, so a late signal never hits a reused pid
  for (int fd : {fds.stdout_fd, fds.stderr_fd}) {
    if (fd >= 0) close(fd);
  }

  int status = 0;
  while (waitpid(agent.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  trim_tail(result.stderr_tail);
  return result;
}

}  // namespace

InvocationResult invoke_agent(sut::Connection& connection, const std::vector<std::string>& args,
                              std::chrono::milliseconds timeout, const RecordHandler& on_record) {
  std::string pending;
  InvocationResult lines;  // collects bad lines while the agent runs
  InvocationResult result = run_agent(connection, args, timeout, [&](const char* data, std::size_t size) {
    pending.append(data, size);
    std::size_t start = 0;
    for (auto newline = pending.find('\n', start); newline != std::string::npos;
         newline = pending.find('\n', start)) {
      handle_line(pending.substr(start, newline - start), on_record, lines);
      start = newline + 1;
    }
    pending.erase(0, start);
  });
  handle_line(pending, on_record, lines);
  result.bad_lines = std::move(lines.bad_lines);
  return result;
}

InvocationResult capture_agent_output(sut::Connection& connection, const std::vector<std::string>& args,
                                      std::chrono::milliseconds timeout, std::string& output) {
  return run_agent(connection, args, timeout,
                   [&](const char* data, std::size_t size) { output.append(data, size); });
}

std::string describe_failure(const InvocationResult& result, std::chrono::milliseconds timeout) {
  if (result.timed_out) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
    return fmt::format("timed out after {}s", seconds);
  }
  if (result.signal != 0) return fmt::format("killed by signal {} ({})", result.signal, strsignal(result.signal));
  if (result.exit_status != 0) return fmt::format("agent exited with status {}", result.exit_status);
  if (!result.bad_lines.empty()) return "agent wrote a line that is not a JSON record: " + result.bad_lines.front();
  return "";
}

}  // namespace kbench::runner
