#pragma once
// The controller's processes: shell quoting, forking the leader of a new
// process group, and one pump that reads a child's stdout and stderr to EOF
// or a deadline. Below sut/ and build/, so that both start their commands
// the same way; the agent has its own (it links none of the controller's
// libraries).
#include <sys/types.h>

#include <csignal>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kbench::process {

// One POSIX shell word that the shell turns back into exactly `text`:
// single-quoted, with each ' written as '\''.
std::string shell_quote(const std::string& text);

// Every argument quoted and joined with spaces.
std::string shell_join(const std::vector<std::string>& words);

using Clock = std::chrono::steady_clock;
using ChunkHandler = std::function<void(const char* data, std::size_t size)>;

// fork(), with the child made the leader of a new process group that gets
// `death_signal` when this process dies (so a controller killed with -9 leaves
// nothing running). The parent sets the group too, so the group exists when
// fork returns on either side. Throws RunError when fork fails.
pid_t fork_process_group_leader(int death_signal);

// Waits for the child `pid` to end, again whenever a signal interrupts the
// wait (kbench's interrupt handlers do not restart system calls). Returns
// its wait status, or -1 when there is no such child to wait for.
int wait_for_exit(pid_t pid);

// wait_for_exit, giving up at `deadline`: nullopt when `pid` still runs.
std::optional<int> wait_for_exit_until(pid_t pid, Clock::time_point deadline);

// A wait status as a shell's $? gives it: the exit code, or 128 + N when
// signal N ended the child; -1 for a failed wait.
int exit_code(int wait_status);

// What pump_output reads and, optionally, writes.
struct PumpFds {
  int stdout_fd = -1;  // closed and set to -1 at EOF
  int stderr_fd = -1;
  int stdin_fd = -1;      // optional: `input` is written here, then it is closed
  std::string_view input;
};

struct PumpHandlers {
  ChunkHandler on_stdout;  // may be empty: the data is dropped
  ChunkHandler on_stderr;
  // Called once per iteration (at least every half second); false stops the pump.
  std::function<bool()> keep_going;
};

enum class PumpEnd { Eof, Deadline, Stopped };

// Reads stdout and stderr until both reach EOF, `deadline` passes or
// keep_going says stop. Descriptors still open on return stay open.
PumpEnd pump_output(PumpFds& fds, Clock::time_point deadline, const PumpHandlers& handlers);

// A started child and this process's ends of its pipes (-1 where there is none).
struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// Starts argv[0] (searched in PATH) as the leader of a new process group with
// stdout/stderr on pipes. With keep_stdin_open the child's stdin is a pipe
// that never reaches EOF while the child lives (ssh then keeps the remote
// session's stdin open, so the remote side notices only a dropped connection).
// Otherwise stdin is /dev/null. The group gets `death_signal` when this
// process dies: SIGTERM lets an agent contain its benchmark's tasks first.
Child spawn_process_group(const std::vector<std::string>& argv, bool keep_stdin_open,
                          int death_signal = SIGKILL);

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

}  // namespace kbench::process
