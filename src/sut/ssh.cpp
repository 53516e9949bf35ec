// The agent on a remote machine through the OpenSSH client. ssh is used as
// the user runs it (~/.ssh/config applies), with BatchMode so that it never
// prompts and with host key checking left on.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "assets/sut/ssh_install.sh.h"
#include "assets/sut/ssh_run.sh.h"
#include "common/errors.h"
#include "process/process.h"
#include "sut/connection.h"
#include "sut/method.h"
#include "sysinfo/sha256.h"

namespace kbench::sut {

namespace {

// `sh -c kRemoteRunScript kbench-agent [WRAPPER...] AGENT ARGS...`: the agent
// stops when the ssh session ends (assets/sut/ssh_run.sh).
constexpr const char* kRemoteRunScript = assets::sut::ssh_run_sh;

// stdin: the agent; prints "dir DIR" and the SUT's sha256sum line
// (assets/sut/ssh_install.sh).
constexpr const char* kRemoteInstallScript = assets::sut::ssh_install_sh;

constexpr auto kInstallTimeout = std::chrono::minutes(5);
constexpr auto kCleanupTimeout = std::chrono::seconds(30);

struct SshParams {
  std::string host;
  std::string user;
  std::string port;
  std::string keyfile;
  std::string known_hosts;
  std::string strict_host_key_checking;  // empty: ssh's own default / ~/.ssh/config
  std::string connect_timeout = "15";
};

constexpr const char* kSshMethod = "ssh";

const std::vector<ParamSpec>& ssh_param_specs() {
  static const std::vector<ParamSpec> specs = {
      ParamSpec{"host", "", "", "required: anything ssh accepts, including a Host alias of ~/.ssh/config"},
      ParamSpec{"user", "", "", "ssh -l; left out, ~/.ssh/config and ssh's defaults apply"},
      ParamSpec{"port", "", "", "ssh -p, a port number"}.integer(1, 65535),
      ParamSpec{"keyfile", "", "", "ssh -i, with IdentitiesOnly=yes"},
      ParamSpec{"known_hosts", "", "", "ssh's UserKnownHostsFile"},
      ParamSpec{"strict_host_key_checking", "", "", "ssh's StrictHostKeyChecking; left out, ssh's own setting"}
          .choice({"yes", "accept-new", "ask"}),
      ParamSpec{"connect_timeout", "15", "15", "ssh's ConnectTimeout, seconds"}.integer(1, 3600),
  };
  return specs;
}

// What the plan refuses before anything connects: ssh would read a host
// beginning with '-' as an option.
std::optional<ParamProblem> check_ssh_params(const Params& params) {
  const auto host = params.find("host");
  const auto blank = [](const std::string& text) {
    return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); });
  };
  const auto control = [](const std::string& text) {
    return std::any_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
  };
  if (host == params.end() || blank(host->second)) return ParamProblem{"host", "the SUT's host name for ssh"};
  if (host->second.front() == '-' || control(host->second)) {
    return ParamProblem{"host", "a host name, got '" + host->second + "'"};
  }
  return std::nullopt;
}

SshParams parse_ssh_params(const std::map<std::string, std::string>& params) {
  SshParams parsed;
  for (const auto& [key, value] : params) {
    if (key == "host") {
      parsed.host = value;
    } else if (key == "user") {
      parsed.user = value;
    } else if (key == "port") {
      parsed.port = value;
    } else if (key == "keyfile") {
      parsed.keyfile = value;
    } else if (key == "known_hosts") {
      parsed.known_hosts = value;
    } else if (key == "strict_host_key_checking") {
      parsed.strict_host_key_checking = value;
    } else if (key == "connect_timeout") {
      parsed.connect_timeout = value;
    }
  }
  return parsed;
}

// Why an ssh command failed, with the end of what it said.
std::string ssh_failure(const process::CommandResult& result) {
  std::string reason = result.timed_out ? "timed out" : fmt::format("ssh exited with status {}", result.exit_status);
  if (result.exit_status == 255) reason += " (connection failed)";
  const std::string tail = process::last_lines(result.err, 5);
  return tail.empty() ? reason : reason + ": " + tail;
}

std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RunError("cannot read the agent " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class SshConnection final : public Connection, public RemoteShell {
 public:
  SshConnection(SshParams params, std::string agent_path)
      : params_(std::move(params)), default_agent_(std::move(agent_path)) {}

  ~SshConnection() override {
    if (remote_dir_.empty()) return;
    // Best effort: a dead SUT cannot be cleaned, and a destructor must not throw.
    try {
      process::run_command(ssh_command("rm -rf -- " + process::shell_quote(remote_dir_)), "", kCleanupTimeout);
    } catch (...) {
    }
  }

  process::CommandResult run_script(const std::string& script, const std::vector<std::string>& args,
                                    const std::string& input, std::chrono::milliseconds timeout) override {
    std::vector<std::string> words = {"sh", "-c", script, "kbench"};
    words.insert(words.end(), args.begin(), args.end());
    return process::run_command(ssh_command(process::shell_join(words)), input, timeout);
  }

  void forget_agent() override { remote_dir_.clear(); }

  std::string describe_target() const override { return describe(); }

  std::string describe() const override {
    std::string target = params_.user.empty() ? params_.host : params_.user + "@" + params_.host;
    if (!params_.port.empty()) target += ":" + params_.port;
    return "ssh " + target;
  }

  AgentProcess start_agent(const std::vector<std::string>& args) override {
    install_agent();
    std::vector<std::string> words = {"sh", "-c", kRemoteRunScript, "kbench-agent"};
    words.insert(words.end(), wrapper_.begin(), wrapper_.end());
    words.push_back(remote_dir_ + "/kbench-agent");
    words.insert(words.end(), args.begin(), args.end());
    return process::spawn(ssh_command(process::shell_join(words)), {.stdin_from = process::Stdin::HeldOpen});
  }

  const std::string& remote_dir() const { return remote_dir_; }

 private:
  std::vector<std::string> ssh_command(const std::string& remote_command) const {
    std::vector<std::string> argv = {"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=" + params_.connect_timeout,
                                     // A dead link is noticed within a minute rather than never.
                                     "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4",
                                     "-o", "LogLevel=ERROR"};
    if (!params_.port.empty()) argv.insert(argv.end(), {"-p", params_.port});
    if (!params_.user.empty()) argv.insert(argv.end(), {"-l", params_.user});
    if (!params_.keyfile.empty()) argv.insert(argv.end(), {"-i", params_.keyfile, "-o", "IdentitiesOnly=yes"});
    if (!params_.known_hosts.empty()) argv.insert(argv.end(), {"-o", "UserKnownHostsFile=" + params_.known_hosts});
    if (!params_.strict_host_key_checking.empty()) {
      argv.insert(argv.end(), {"-o", "StrictHostKeyChecking=" + params_.strict_host_key_checking});
    }
    argv.insert(argv.end(), {"--", params_.host, remote_command});
    return argv;
  }

  // The SUT's architecture, asked once: the agent must be built for it.
  const std::string& agent_path() {
    if (!agent_path_.empty()) return agent_path_;
    const process::CommandResult result = process::run_command(ssh_command("uname -m"), "", kCleanupTimeout);
    std::string machine = result.out.substr(0, result.out.find('\n'));
    if (result.timed_out || result.exit_status != 0 || machine.empty()) {
      throw RunError("asking " + describe() + " for its architecture (uname -m) failed: " + ssh_failure(result));
    }
    agent_path_ = agent_for_machine(machine, default_agent_);
    return agent_path_;
  }

  void install_agent() {
    if (!remote_dir_.empty()) return;
    const std::string agent = read_binary(agent_path());
    const std::string local_sha = sysinfo::sha256_hex(agent);
    const process::CommandResult result = process::run_command(
        ssh_command(process::shell_join({"sh", "-c", kRemoteInstallScript})), agent, kInstallTimeout);
    std::string dir;
    std::string remote_sha;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("dir ", 0) == 0) {
        dir = line.substr(4);
      } else if (remote_sha.empty() && line.size() >= 64) {
        remote_sha = line.substr(0, 64);
      }
    }
    if (result.timed_out || result.exit_status != 0 || dir.empty()) {
      throw RunError("copying kbench-agent to " + describe() + " failed: " + ssh_failure(result));
    }
    if (remote_sha != local_sha) {
      remote_dir_ = dir;  // the destructor removes the bad copy
      throw RunError("kbench-agent copied to " + describe() + ":" + dir + " has sha256 " +
                     (remote_sha.empty() ? "(none)" : remote_sha) + ", expected " + local_sha);
    }
    remote_dir_ = dir;
  }

  SshParams params_;
  std::string default_agent_;
  std::string agent_path_;  // chosen for the SUT's architecture at the first start
  std::string remote_dir_;  // on the SUT; empty until the agent is copied
};

}  // namespace

std::unique_ptr<Connection> make_ssh_connection(const std::map<std::string, std::string>& params,
                                                std::string agent_path) {
  MethodRegistry::instance().get(kSshMethod).require_valid(params);
  return std::make_unique<SshConnection>(parse_ssh_params(params), std::move(agent_path));
}

KBENCH_SUT_METHOD({
    .name = kSshMethod,
    .summary = "a machine reached with the OpenSSH client (docs/remote.md)",
    .params = ssh_param_specs(),
    .capabilities = {Capability::Deploy, Capability::Sysctls, Capability::Modules, Capability::Wrapper},
    .make = [](const Params& params,
               const SwprofileKernel*) { return make_ssh_connection(params, find_agent_binary()); },
    .check_params = check_ssh_params,
});

std::string ssh_remote_dir(const Connection& connection) {
  const auto* ssh = dynamic_cast<const SshConnection*>(&connection);
  return ssh ? ssh->remote_dir() : std::string();
}

}  // namespace kbench::sut
