#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/errors.h"
#include "sut/connection.h"

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
    int out_pipe[2];
    int err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
      throw RunError(std::string("pipe: ") + std::strerror(errno));
    }
    std::vector<std::string> argv_storage;
    argv_storage.push_back(agent_path_);
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);

    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw RunError(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      setpgid(0, 0);
      // A controller killed with -9 must not leave benchmarks running.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      dup2(out_pipe[1], STDOUT_FILENO);
      dup2(err_pipe[1], STDERR_FILENO);
      execv(argv[0], argv.data());
      const char msg[] = "kbench: cannot execute kbench-agent\n";
      (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
      _exit(127);
    }
    setpgid(pid, pid);  // also from the parent, so the group exists before any kill
    close(out_pipe[1]);
    close(err_pipe[1]);
    return AgentProcess{pid, out_pipe[0], err_pipe[0]};
  }

 private:
  std::string agent_path_;
};

}  // namespace

std::unique_ptr<Connection> make_local_connection(std::string agent_path) {
  return std::make_unique<LocalConnection>(std::move(agent_path));
}

}  // namespace kbench::sut
