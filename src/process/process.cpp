#include "process/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace kbench::process {

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += "'";
  return quoted;
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string joined;
  for (const auto& word : words) {
    if (!joined.empty()) joined += ' ';
    joined += shell_quote(word);
  }
  return joined;
}

pid_t fork_process_group_leader(int death_signal) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw RunError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, death_signal);
    // The parent may have died before the death signal was armed.
    if (getppid() != parent) _exit(127);
    return 0;
  }
  setpgid(pid, pid);
  return pid;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

std::optional<int> wait_for_exit_until(pid_t pid, Clock::time_point deadline) {
  // From 1 ms up to 100 ms: a child that is ending is reaped at once, one
  // that runs on costs few wake-ups.
  useconds_t pause = 1000;
  for (;;) {
    int status = 0;
    const pid_t waited = waitpid(pid, &status, WNOHANG);
    if (waited == pid) return status;
    if (waited < 0 && errno != EINTR) return -1;
    if (Clock::now() >= deadline) return std::nullopt;
    usleep(pause);
    pause = std::min<useconds_t>(pause * 2, 100000);
  }
}

int exit_code(int wait_status) {
  if (wait_status < 0) return -1;
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  return 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
}

PumpEnd pump_output(PumpFds& fds, Clock::time_point deadline, const PumpHandlers& handlers) {
  std::size_t written = 0;
  if (fds.stdin_fd >= 0) {
    if (fds.input.empty()) {
      close(fds.stdin_fd);
      fds.stdin_fd = -1;
    } else {
      fcntl(fds.stdin_fd, F_SETFL, O_NONBLOCK);
    }
  }
  // A child that closes its stdin early must not kill this process.
  struct sigaction ignore{}, previous{};
  ignore.sa_handler = SIG_IGN;
  if (fds.stdin_fd >= 0) sigaction(SIGPIPE, &ignore, &previous);
  const bool restore_sigpipe = fds.stdin_fd >= 0;

  PumpEnd end = PumpEnd::Eof;
  char buffer[65536];
  while (fds.stdout_fd >= 0 || fds.stderr_fd >= 0) {
    if (handlers.keep_going && !handlers.keep_going()) {
      end = PumpEnd::Stopped;
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      end = PumpEnd::Deadline;
      break;
    }
    pollfd polled[3] = {{fds.stdout_fd, POLLIN, 0}, {fds.stderr_fd, POLLIN, 0}, {fds.stdin_fd, POLLOUT, 0}};
    if (poll(polled, 3, static_cast<int>(std::min<long long>(left.count(), 500))) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds.stdin_fd >= 0 && (polled[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = write(fds.stdin_fd, fds.input.data() + written, fds.input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = fds.input.size();
      if (written == fds.input.size()) {
        close(fds.stdin_fd);
        fds.stdin_fd = -1;
      }
    }
    for (int i = 0; i < 2; ++i) {
      int& fd = i == 0 ? fds.stdout_fd : fds.stderr_fd;
      if (fd < 0 || !(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n <= 0) {
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        close(fd);
        fd = -1;
        continue;
      }
      const ChunkHandler& handler = i == 0 ? handlers.on_stdout : handlers.on_stderr;
      if (handler) handler(buffer, static_cast<std::size_t>(n));
    }
  }
  if (restore_sigpipe) sigaction(SIGPIPE, &previous, nullptr);
  return end;
}

namespace {

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw RunError(std::string("pipe: ") + std::strerror(errno));
}

}  // namespace

Child spawn(const std::vector<std::string>& args, const SpawnOptions& options) {
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  int in_pipe[2] = {-1, -1};
  if (options.output_fd < 0) {
    make_pipe(out_pipe);
    make_pipe(err_pipe);
  }
  if (options.stdin_from != Stdin::DevNull) make_pipe(in_pipe);
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (auto& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const pid_t pid = options.death_signal != 0 ? fork_process_group_leader(options.death_signal) : fork();
  if (pid < 0) throw RunError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(options.output_fd >= 0 ? options.output_fd : out_pipe[1], STDOUT_FILENO);
    dup2(options.output_fd >= 0 ? options.output_fd : err_pipe[1], STDERR_FILENO);
    if (options.stdin_from == Stdin::DevNull) {
      const int null_fd = open("/dev/null", O_RDONLY);
      if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    } else if (options.stdin_from == Stdin::Pipe) {
      dup2(in_pipe[0], STDIN_FILENO);
    } else {
      // The write end of stdin must outlive the command's own fd clean-up
      // (ssh closes every fd above 2 at start), so this process keeps it,
      // runs the command as its child in the same group and passes on its
      // exit status: stdin reaches EOF only when this group dies.
      const pid_t command = fork();
      if (command < 0) _exit(127);
      if (command > 0) {
        close(STDOUT_FILENO);
        close(STDERR_FILENO);
        _exit(exit_code(wait_for_exit(command)));
      }
      prctl(PR_SET_PDEATHSIG, options.death_signal);
      dup2(in_pipe[0], STDIN_FILENO);
    }
    for (const auto& [name, value] : options.environment) setenv(name.c_str(), value.c_str(), 1);
    execvp(argv[0], argv.data());
    const std::string msg = "kbench: cannot execute " + args[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  Child child{pid, out_pipe[0], err_pipe[0], -1};
  for (int fd : {out_pipe[1], err_pipe[1], in_pipe[0]}) {
    if (fd >= 0) close(fd);
  }
  if (options.stdin_from == Stdin::Pipe) {
    child.stdin_fd = in_pipe[1];
  } else if (in_pipe[1] >= 0) {
    close(in_pipe[1]);
  }
  return child;
}

CommandResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  const Child child = spawn(argv, {Stdin::Pipe, options.environment, -1, options.death_signal});
  CommandResult result;
  PumpFds fds{child.stdout_fd, child.stderr_fd, child.stdin_fd, options.input};
  const ChunkHandler keep_stdout = [&](const char* data, std::size_t size) { result.out.append(data, size); };
  const PumpEnd end = pump_output(fds, options.deadline,
                                  {options.on_stdout ? options.on_stdout : keep_stdout,
                                   [&](const char* data, std::size_t size) { result.err.append(data, size); },
                                   {}});
  result.timed_out = end == PumpEnd::Deadline;
  // The end of its output is not the end of the command: GNU tools close
  // stdout and stderr on their way out, so the command is waited for (up to
  // the deadline) before what it left in its group is killed, or its exit
  // would race the kill.
  std::optional<int> ended;
  if (!result.timed_out) ended = wait_for_exit_until(child.pid, options.deadline);
  if (!ended) result.timed_out = true;
  if (options.death_signal != 0) {
    kill(-child.pid, SIGKILL);
  } else if (!ended) {
    kill(child.pid, SIGKILL);
  }
  for (int fd : {fds.stdin_fd, fds.stdout_fd, fds.stderr_fd}) {
    if (fd >= 0) close(fd);
  }
  result.wait_status = ended ? *ended : wait_for_exit(child.pid);
  if (!result.timed_out && WIFEXITED(result.wait_status)) result.exit_status = WEXITSTATUS(result.wait_status);
  return result;
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout) {
  return run(argv, {.input = input, .deadline = Clock::now() + timeout});
}

std::string last_lines(const std::string& text, std::size_t max_lines) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  std::size_t start = end;
  std::size_t lines = 0;
  while (start > 0) {
    if (text[start - 1] == '\n' && ++lines == max_lines) break;
    --start;
  }
  return text.substr(start, end - start);
}

void write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

Child fork_relay(const std::function<int(int out_fd, int err_fd)>& body, std::string_view prefix) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw RunError(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    throw RunError(std::string("pipe: ") + std::strerror(error));
  }
  const pid_t pid = fork_process_group_leader(SIGKILL);
  if (pid == 0) {
    signal(SIGPIPE, SIG_IGN);
    close(out_pipe[0]);
    close(err_pipe[0]);
    int status = 1;
    try {
      status = body(out_pipe[1], err_pipe[1]);
    } catch (const std::exception& error) {
      write_all(err_pipe[1], std::string(prefix) + ": " + error.what() + "\n");
    }
    _exit(status);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  return Child{pid, out_pipe[0], err_pipe[0]};
}

}  // namespace kbench::process
