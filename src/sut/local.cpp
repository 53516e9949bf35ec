#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/errors.h"
#include "sut/connection.h"
#include "sut/process.h"

namespace kbench::sut {

std::string find_agent_binary() {
  if (const char* env = std::getenv("KBENCH_AGENT"); env && *env) {
    if (access(env, X_OK) != 0) {
      throw InputError(std::string("KBENCH_AGENT=") + env + ": expected an executable kbench-agent");
    }
    return env;
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto candidate = self.parent_path() / "kbench-agent";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  throw RunError("kbench-agent not found next to kbench; set KBENCH_AGENT=/path/to/kbench-agent");
}

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
