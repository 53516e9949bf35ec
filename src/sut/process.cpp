#include "sut/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace kbench::sut {

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

namespace {

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw RunError(std::string("pipe: ") + std::strerror(errno));
}

struct Child {
  pid_t pid;
  int in;  // -1 unless a stdin pipe was asked for
  int out;
  int err;
};

enum class StdinMode { DevNull, HeldOpen, Pipe };

Child spawn(const std::vector<std::string>& args, StdinMode stdin_mode) {
  int out_pipe[2];
  int err_pipe[2];
  int in_pipe[2] = {-1, -1};
  make_pipe(out_pipe);
  make_pipe(err_pipe);
  if (stdin_mode != StdinMode::DevNull) make_pipe(in_pipe);
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (auto& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw RunError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    // A controller killed with -9 must not leave the remote session open.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    if (stdin_mode == StdinMode::DevNull) {
      const int null_fd = open("/dev/null", O_RDONLY);
      if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    } else if (stdin_mode == StdinMode::Pipe) {
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
        int status = 0;
        while (waitpid(command, &status, 0) < 0 && errno == EINTR) {
        }
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
      }
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(in_pipe[0], STDIN_FILENO);
    }
    execvp(argv[0], argv.data());
    const std::string msg = "kbench: cannot execute " + args[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  int in_fd = -1;
  if (stdin_mode != StdinMode::DevNull) {
    close(in_pipe[0]);
    if (stdin_mode == StdinMode::Pipe) {
      in_fd = in_pipe[1];
    } else {
      close(in_pipe[1]);
    }
  }
  return Child{pid, in_fd, out_pipe[0], err_pipe[0]};
}

}  // namespace

AgentProcess spawn_process_group(const std::vector<std::string>& argv, bool keep_stdin_open) {
  const Child child = spawn(argv, keep_stdin_open ? StdinMode::HeldOpen : StdinMode::DevNull);
  return AgentProcess{child.pid, child.out, child.err};
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout) {
  Child child = spawn(argv, StdinMode::Pipe);
  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t written = 0;
  fcntl(child.in, F_SETFL, O_NONBLOCK);
  if (input.empty()) {
    close(child.in);
    child.in = -1;
  }
  // Signals from a closed stdin must not kill the controller.
  struct sigaction ignore{}, previous{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  char buffer[16384];
  while (child.out >= 0 || child.err >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3] = {{child.out, POLLIN, 0}, {child.err, POLLIN, 0}, {child.in, POLLOUT, 0}};
    if (poll(fds, 3, static_cast<int>(std::min<long long>(left.count(), 1000))) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (child.in >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = write(child.in, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) written = input.size();
      if (written == input.size()) {
        close(child.in);
        child.in = -1;
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        close(fds[i].fd);
        (i == 0 ? child.out : child.err) = -1;
        continue;
      }
      (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
    }
  }
  sigaction(SIGPIPE, &previous, nullptr);
  kill(-child.pid, SIGKILL);
  for (int fd : {child.in, child.out, child.err}) {
    if (fd >= 0) close(fd);
  }
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!result.timed_out && WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  return result;
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

}  // namespace kbench::sut
