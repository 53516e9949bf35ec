#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/errors.h"
#include "process/process.h"
#include "sut/connection.h"
#include "sut/method.h"

namespace kbench::sut {

namespace {

// The machine kbench runs on. Its shell runs the deployment's scripts with
// `sh -c` here, as an ssh SUT's run them there, so a local SUT installs and
// boots kernels through the same scripts (sut.boot, docs/deploy.md).
class LocalConnection final : public Connection, public RemoteShell {
 public:
  explicit LocalConnection(std::string agent_path) : agent_path_(std::move(agent_path)) {}

  std::string describe() const override { return "local"; }

  process::CommandResult run_script(const std::string& script, const std::vector<std::string>& args,
                                    const std::string& input, std::chrono::milliseconds timeout) override {
    std::vector<std::string> argv = {"sh", "-c", script, "kbench"};
    argv.insert(argv.end(), args.begin(), args.end());
    return process::run_command(argv, input, timeout);
  }

  // The agent runs from where it was built: nothing was copied to forget.
  void forget_agent() override {}

  std::string describe_target() const override { return "this machine"; }

  AgentProcess start_agent(const std::vector<std::string>& args) override {
    std::vector<std::string> argv = wrapper_;
    argv.push_back(agent_path_);
    argv.insert(argv.end(), args.begin(), args.end());
    // SIGTERM when kbench dies: the agent then kills its benchmark's tasks,
    // also those that left its process group, before it exits.
    return process::spawn(argv, {.death_signal = SIGTERM});
  }

 private:
  std::string agent_path_;
};

}  // namespace

std::unique_ptr<Connection> make_local_connection(std::string agent_path) {
  return std::make_unique<LocalConnection>(std::move(agent_path));
}

KBENCH_SUT_METHOD({
    .name = "local",
    .summary = "the machine kbench runs on",
    .params = {},
    .capabilities = {Capability::OnController, Capability::Deploy, Capability::Sysctls, Capability::Modules,
                     Capability::Wrapper},
    // Takes no parameters and has never refused any.
    .make = [](const Params&, const SwprofileKernel*) { return make_local_connection(find_agent_binary()); },
});

}  // namespace kbench::sut
