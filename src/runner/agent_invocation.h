#pragma once
// One run of a kbench-agent command: feeds each JSON Lines record to a
// callback as it arrives, enforces a timeout, and keeps the stderr tail.
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sut/connection.h"

namespace kbench::runner {

struct InvocationResult {
  int exit_status = -1;   // exit code, or -1 when killed by a signal
  int signal = 0;         // the signal that ended it, 0 when it exited
  bool timed_out = false;
  // The time the run was given: its own timeout and the connection's
  // start allowance.
  std::chrono::milliseconds allowed{0};
  std::string stderr_tail;  // the last lines the agent wrote to stderr
  // The first stdout line that was not a record, described in one short line
  // (never the line itself: it may be megabytes). No record after it was
  // handed on: the stream is trusted up to its first fault.
  std::optional<std::string> stream_fault;
};

using RecordHandler = std::function<void(const nlohmann::json& record)>;

// No record comes near this; a longer line is discarded while it is read,
// never held whole, and is a fault of the stream.
inline constexpr std::size_t kMaxRecordLineBytes = std::size_t{1} << 20;

// Cuts the agent's stdout into lines and hands each JSON object with a
// "type" on, until the first line that is none (see stream_fault).
class RecordLineReader {
 public:
  explicit RecordLineReader(RecordHandler on_record) : on_record_(std::move(on_record)) {}
  void feed(const char* data, std::size_t size);
  // The output ended: a last line without a newline is handled too.
  void finish();
  const std::optional<std::string>& fault() const { return fault_; }

 private:
  void handle_line(std::string_view line);

  RecordHandler on_record_;
  std::string pending_;      // the line being read, at most kMaxRecordLineBytes
  bool discarding_ = false;  // inside an over-long line: dropped up to its newline
  std::optional<std::string> fault_;
};

// Runs the agent with `args`; calls `on_record` for every record line.
// On timeout the agent's whole process group is killed with SIGKILL.
InvocationResult invoke_agent(sut::Connection& connection, const std::vector<std::string>& args,
                              std::chrono::milliseconds timeout, const RecordHandler& on_record);

// Runs the agent and returns its whole stdout (for `list`, one JSON document).
InvocationResult capture_agent_output(sut::Connection& connection, const std::vector<std::string>& args,
                                      std::chrono::milliseconds timeout, std::string& output);

// Human-readable reason for a failed invocation, e.g. "timed out after 10m0s".
std::string describe_failure(const InvocationResult& result);

}  // namespace kbench::runner
