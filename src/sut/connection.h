#pragma once
// How the controller starts a kbench-agent on a system under test. Every
// connection yields the same thing: a process whose stdout carries JSON Lines.
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace kbench::sut {

struct AgentProcess {
  pid_t pid = -1;      // leader of its own process group
  int stdout_fd = -1;  // JSON Lines
  int stderr_fd = -1;  // diagnostics, kept as a tail for failure reports
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual std::string describe() const = 0;
  // Starts `kbench-agent <args...>` in a new process group, so that a timeout
  // can kill the agent together with every task its benchmark started.
  virtual AgentProcess start_agent(const std::vector<std::string>& args) = 0;
};

// The agent binary next to the running kbench, or $KBENCH_AGENT.
// Throws RunError when it cannot be found.
std::string find_agent_binary();

std::unique_ptr<Connection> make_local_connection(std::string agent_path);

}  // namespace kbench::sut
