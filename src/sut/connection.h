#pragma once
// How the controller starts a kbench-agent on a system under test. Every
// connection yields the same thing: a process whose stdout carries JSON Lines.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "process/process.h"

namespace kbench::sut {

// A started agent: the leader of its own process group, its stdout JSON
// Lines, its stderr diagnostics (kept as a tail for failure reports).
using AgentProcess = process::Child;

class Connection {
 public:
  virtual ~Connection() = default;
  virtual std::string describe() const = 0;
  // Starts `kbench-agent <args...>` in a new process group, so that a timeout
  // can kill the agent together with every task its benchmark started.
  virtual AgentProcess start_agent(const std::vector<std::string>& args) = 0;
  // Words every later agent runs under (a swprofile's `wrapper`, e.g.
  // `taskset -c 1` or a sandbox): `wrapper... kbench-agent args...`. Empty:
  // the agent alone. Connections that cannot run one refuse it in start_agent.
  void set_wrapper(std::vector<std::string> words) { wrapper_ = std::move(words); }
  // A name for the agent runs that follow, the same in every execution of a
  // plan's session (its store, plan and session), and whether this
  // execution resumes an interrupted one. A connection whose runs outlive
  // kbench (a LAVA job goes on when kbench is killed) follows, when
  // resuming, a run of that name and the same arguments still going instead
  // of starting another. Empty: every run is new.
  void set_run_label(std::string label, bool resuming) {
    run_label_ = std::move(label);
    resuming_ = resuming;
  }
  // How the line begins with which this connection ends an agent's stderr to
  // say where the run was (lava: "kbench: lava: job ", its job and URL), or
  // "" for a connection that says nothing of the kind. The runner keeps that
  // line with the benchmark's outcome.
  virtual std::string run_account_prefix() const { return ""; }
  // How long a run may take on this connection before the agent itself
  // starts: a VM's boot, a LAVA job's wait in the queue and its boot. The
  // runner adds it to each agent run's own timeout.
  virtual std::chrono::seconds start_allowance() const { return std::chrono::seconds{0}; }

 protected:
  std::vector<std::string> wrapper_;
  std::string run_label_;
  bool resuming_ = false;
};

// The agent binary next to the running kbench, or $KBENCH_AGENT.
// Throws RunError when it cannot be found.
std::string find_agent_binary();

// uname -m spelled the kernel's way: arm64 -> aarch64, amd64 -> x86_64.
std::string normalized_machine(const std::string& machine);
// The agent for a SUT whose `uname -m` is `sut_machine`: `default_agent` when
// it is built for that machine, else $KBENCH_AGENT_<MACHINE> (e.g.
// KBENCH_AGENT_AARCH64), else kbench-agent-<machine> next to the default
// agent or to kbench. Throws RunError naming every place looked at.
std::string agent_for_machine(const std::string& sut_machine, const std::string& default_agent);

std::unique_ptr<Connection> make_local_connection(std::string agent_path);

// Commands on the SUT itself beside the agent: what installing and booting
// kernels needs. ssh and local SUTs have one.
class RemoteShell {
 public:
  virtual ~RemoteShell() = default;
  // Runs `sh -c SCRIPT kbench ARGS...` on the SUT with `input` on its stdin.
  virtual process::CommandResult run_script(const std::string& script, const std::vector<std::string>& args,
                                   const std::string& input, std::chrono::milliseconds timeout) = 0;
  // The SUT booted again: the agent copied before went with its /tmp, so
  // the next start copies it anew.
  virtual void forget_agent() = 0;
  virtual std::string describe_target() const = 0;
};
// The connection's shell on the SUT (ssh; local: this machine's), or
// nullptr (qemu: each boot is a VM of its own).
inline RemoteShell* remote_shell(Connection& connection) { return dynamic_cast<RemoteShell*>(&connection); }

// OpenSSH client; params: host (required), user, port, keyfile, known_hosts,
// strict_host_key_checking, connect_timeout (docs/remote.md). Throws
// InputError naming a bad parameter.
std::unique_ptr<Connection> make_ssh_connection(const std::map<std::string, std::string>& params,
                                                std::string agent_path);
// Where an ssh connection put the agent on the SUT ("" before the first
// start_agent, or for other connections); for tests and diagnostics.
std::string ssh_remote_dir(const Connection& connection);

// What a qemu connection boots: the swprofile's kernel, cmdline and initrd.
struct QemuBoot {
  std::string kernel;
  std::vector<std::string> cmdline;
  std::string initrd;  // optional; the agent's archive is appended to it
  std::string modules;  // optional; a tarball of lib/modules/RELEASE/ appended after it
  std::string dtb;      // optional; the flattened device tree instead of the one QEMU makes for the board
};

// One VM boot per start_agent; params: memory, cpus, accel (auto|kvm|tcg),
// cpu, qemu, busybox, boot_timeout, kvm_probe_timeout (docs/remote.md).
std::unique_ptr<Connection> make_qemu_connection(const std::map<std::string, std::string>& params, QemuBoot boot,
                                                 std::string agent_path);
// The accelerator a qemu connection uses ("" before its first start_agent).
std::string qemu_accel(const Connection& connection);

}  // namespace kbench::sut
