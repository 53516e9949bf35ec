#pragma once
// One run of a kbench-agent command: feeds each JSON Lines record to a
// callback as it arrives, enforces a timeout, and keeps the stderr tail.
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sut/connection.h"

namespace kbench::runner {

struct InvocationResult {
  int exit_status = -1;   // exit code, or -1 when killed by a signal
  int signal = 0;         // the signal that ended it, 0 when it exited
  bool timed_out = false;
  std::string stderr_tail;             // the last lines the agent wrote to stderr
  std::vector<std::string> bad_lines;  // stdout lines that were not JSON objects
};

using RecordHandler = std::function<void(const nlohmann::json& record)>;

// Runs the agent with `args`; calls `on_record` for every JSON object line.
// On timeout the agent's whole process group is killed with SIGKILL.
InvocationResult invoke_agent(sut::Connection& connection, const std::vector<std::string>& args,
                              std::chrono::milliseconds timeout, const RecordHandler& on_record);

// Runs the agent and returns its whole stdout (for `list`, one JSON document).
InvocationResult capture_agent_output(sut::Connection& connection, const std::vector<std::string>& args,
                                      std::chrono::milliseconds timeout, std::string& output);

// Human-readable reason for a failed invocation, e.g. "timed out after 10m0s".
std::string describe_failure(const InvocationResult& result, std::chrono::milliseconds timeout);

}  // namespace kbench::runner
