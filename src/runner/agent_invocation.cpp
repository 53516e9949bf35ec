#include "runner/agent_invocation.h"

#include <poll.h>
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

using ChunkHandler = std::function<void(const char* data, std::size_t size)>;

// Runs the agent, hands every stdout chunk to `on_stdout`, enforces the
// timeout and reaps the agent's whole process group.
InvocationResult run_agent(sut::Connection& connection, const std::vector<std::string>& args,
                           std::chrono::milliseconds timeout, const ChunkHandler& on_stdout) {
  sut::AgentProcess agent = connection.start_agent(args);
  track_agent(agent.pid);
  InvocationResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;

  pollfd fds[2] = {{agent.stdout_fd, POLLIN, 0}, {agent.stderr_fd, POLLIN, 0}};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      if (i == 1) {
        append_tail(result.stderr_tail, buffer, static_cast<std::size_t>(n));
        continue;
      }
      on_stdout(buffer, static_cast<std::size_t>(n));
    }
  }
  // The agent may have exited while children of its benchmark live on (or it
  // timed out): the group goes in any case.
  kill(-agent.pid, SIGKILL);
  track_agent(-1);  // before the reap, so a late signal never hits a reused pid
  for (auto& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
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
