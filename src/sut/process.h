#pragma once
// Process helpers shared by the remote connections: shell quoting and
// starting a command as the leader of its own process group.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "sut/connection.h"

namespace kbench::sut {

// One POSIX shell word that the shell turns back into exactly `text`:
// single-quoted, with each ' written as '\''.
std::string shell_quote(const std::string& text);

// Every argument quoted and joined with spaces.
std::string shell_join(const std::vector<std::string>& words);

// Starts argv[0] (searched in PATH) as the leader of a new process group with
// stdout/stderr on pipes. With keep_stdin_open the child's stdin is a pipe
// that never reaches EOF while the child lives (ssh then keeps the remote
// session's stdin open, so the remote side notices only a dropped connection).
// Otherwise stdin is /dev/null.
AgentProcess spawn_process_group(const std::vector<std::string>& argv, bool keep_stdin_open);

struct CommandResult {
  int exit_status = -1;  // -1 when killed by a signal or timed out
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs a short command to completion, feeding `input` on its stdin, and
// kills it after `timeout`.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout);

// The last `max_lines` lines of `text`.
std::string last_lines(const std::string& text, std::size_t max_lines);

}  // namespace kbench::sut
