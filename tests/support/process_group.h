#pragma once
// The live processes of a killed or running agent, read from /proc: what the
// clean-up tests look for after SIGKILLing an agent's process group.
// Header-only, shared by the test binaries.
//
// Zombies count as ended: they have exited, and what remains of an orphan is
// PID 1's to reap, which on some machines' PID 1 (not always an init) comes
// seconds later.
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kbench::testing {

struct ProcessSeen {
  pid_t pid = 0;
  std::string stat;  // "PID (comm)", for a failure message
};

// The state letter of /proc/PID/stat, parent and group; false if `pid` is gone.
inline bool read_process_stat(pid_t pid, char& state, pid_t& parent, pid_t& group, std::string* head = nullptr) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  std::istringstream rest(stat.substr(close + 2));
  long ppid = 0, pgrp = 0;
  if (!(rest >> state >> ppid >> pgrp)) return false;
  parent = static_cast<pid_t>(ppid);
  group = static_cast<pid_t>(pgrp);
  if (head) *head = stat.substr(0, close + 1);
  return true;
}

inline bool is_live(pid_t pid) {
  char state = 0;
  pid_t parent = 0, group = 0;
  return read_process_stat(pid, state, parent, group) && state != 'Z';
}

// Live processes in the process group `leader` leads or whose parent is
// `leader`, the leader included.
inline std::vector<ProcessSeen> live_processes_of(pid_t leader) {
  std::vector<ProcessSeen> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    char state = 0;
    pid_t parent = 0, group = 0;
    std::string head;
    if (!read_process_stat(pid, state, parent, group, &head) || state == 'Z') continue;
    if (group == leader || parent == leader) found.push_back({pid, head});
  }
  return found;
}

}  // namespace kbench::testing
