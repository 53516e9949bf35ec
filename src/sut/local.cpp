#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/errors.h"
#include "sut/connection.h"
#include "sut/process.h"

namespace kbench::sut {

namespace {

class LocalConnection final : public Connection {
 public:
  explicit LocalConnection(std::string agent_path) : agent_path_(std::move(agent_path)) {}

  std::string describe() const override { return "local"; }

  AgentProcess start_agent(const std::vector<std::string>& args) override {
    std::vector<std::string> argv;
    argv.push_back(agent_path_);
    argv.insert(argv.end(), args.begin(), args.end());
    // SIGTERM when kbench dies: the agent then kills its benchmark's tasks,
    // also those that left its process group, before it exits.
    return spawn_process_group(argv, /*keep_stdin_open=*/false, SIGTERM);
  }

 private:
  std::string agent_path_;
};

}  // namespace

std::unique_ptr<Connection> make_local_connection(std::string agent_path) {
  return std::make_unique<LocalConnection>(std::move(agent_path));
}

}  // namespace kbench::sut
