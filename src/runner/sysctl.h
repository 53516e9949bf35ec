#pragma once
// Sysctls a swprofile applies, and the promise to put them back: the original
// values are journalled to a file before anything is written, so even a
// controller killed with -9 has them restored by the next kbench invocation.
#include <map>
#include <ostream>
#include <string>

namespace kbench::runner {

// "net.ipv4.ip_default_ttl" -> "/proc/sys/net/ipv4/ip_default_ttl".
std::string sysctl_path(const std::string& key);

// Throws InputError naming the first key that does not exist or cannot be written.
void validate_sysctls(const std::map<std::string, std::string>& settings);

// Where kbench keeps what must outlive its process: $KBENCH_STATE_DIR, else
// $XDG_STATE_HOME/kbench, else ~/.local/state/kbench.
std::string kbench_state_dir();

// sysctl-restore.json in kbench_state_dir().
std::string sysctl_journal_path();

// Restores what an interrupted run left behind; returns how many settings.
int restore_journalled_sysctls(std::ostream& log);

class SysctlGuard {
 public:
  SysctlGuard() = default;
  SysctlGuard(const SysctlGuard&) = delete;
  SysctlGuard& operator=(const SysctlGuard&) = delete;
  ~SysctlGuard();

  // Reads and journals the current values, then writes the new ones.
  void apply(const std::map<std::string, std::string>& settings);
  // Writes the journalled values back and removes the journal.
  void restore();

 private:
  std::map<std::string, std::string> original_;
};

}  // namespace kbench::runner
