#pragma once
// The controller's processes: starting commands (in a process group of
// their own or in kbench's), one pump that reads a child's stdout and stderr
// to EOF or a deadline, waiting for them, and shell quoting. Below sut/ and
// build/, so that both start their commands the same way (git.h: git); the
// agent has its own (it links none of the controller's libraries).
#include <sys/types.h>

#include <csignal>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

// Where a started child's stdin comes from.
enum class Stdin {
  DevNull,
  // A pipe that never reaches EOF while the child lives (ssh then keeps the
  // remote session's stdin open, so the remote side notices only a dropped
  // connection). Only for a child that leads a group of its own.
  HeldOpen,
  Pipe,  // a pipe this process writes: Child::stdin_fd
};

using Environment = std::vector<std::pair<std::string, std::string>>;

// Callers name only the fields they set; the {} initialisers keep GCC's
// -Wmissing-field-initializers quiet about the others.
struct SpawnOptions {
  Stdin stdin_from = Stdin::DevNull;
  Environment environment{};  // set in the child, over this process's own
  // When set, the child's stdout and stderr both go to this descriptor (a
  // log); otherwise each is a pipe this process reads.
  int output_fd = -1;
  // The child leads a new process group that gets this signal when this
  // process dies: SIGTERM lets an agent contain its benchmark's tasks first.
  // 0: it stays in this process's group, where a terminal's Ctrl-C reaches it
  // as it reaches kbench (make then deletes the targets it was writing, git
  // its lock files, where a kill by the death signal would leave them).
  int death_signal = SIGKILL;
};

// A started child and this process's ends of its pipes (-1 where there is none).
struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int stdin_fd = -1;
};

// Writes all of `bytes` to `fd`, again after EINTR; stops without a word
// when the reader is gone (a relay's reader may go first).
void write_all(int fd, std::string_view bytes);

// Forks a relay: a process-group leader, killed with SIGKILL when this
// process dies, that runs `body` with the write ends of its stdout and
// stderr pipes and exits with what it returns; an exception's text goes to
// its stderr as "<prefix>: <what>". The Child reads its stdout and stderr.
// Throws RunError when a pipe or the fork fails.
Child fork_relay(const std::function<int(int out_fd, int err_fd)>& body, std::string_view prefix);

// Starts argv[0], searched in PATH. Throws RunError when a pipe or the fork
// fails; a program that cannot be executed says why on its stderr and exits
// with 127.
Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

struct CommandResult {
  int exit_status = -1;  // -1 when killed by a signal or timed out
  bool timed_out = false;
  std::string out;
  std::string err;
  int wait_status = -1;  // as wait_for_exit gave it: exit_code() reads it
};

struct RunOptions {
  std::string_view input{};  // written to the command's stdin, which is then closed
  Clock::time_point deadline = Clock::time_point::max();  // when the command is killed
  Environment environment{};   // as in SpawnOptions
  int death_signal = SIGKILL;  // as in SpawnOptions
  ChunkHandler on_stdout{};    // when set, stdout goes here instead of into CommandResult::out
};

// Runs a command to its end or its deadline, then kills it: with everything
// it left in its process group when it leads one, else only when it is late.
CommandResult run(const std::vector<std::string>& argv, const RunOptions& options);

// Runs a short command to completion, feeding `input` on its stdin, and
// kills it after `timeout`.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout);

// The last `max_lines` lines of `text`.
std::string last_lines(const std::string& text, std::size_t max_lines);

}  // namespace kbench::process
