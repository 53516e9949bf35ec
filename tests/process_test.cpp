// The controller's process toolkit (process/process.h, process/git.h), with
// real processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "common/errors.h"
#include "process/git.h"
#include "process/process.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

using namespace kbench::process;
using kbench::RunError;
using kbench::testing::ScopedEnv;
using kbench::testing::TempDir;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

TEST(ProcessPump, ReadsStdoutAndStderrToEof) {
  Child child = spawn({"sh", "-c", "echo out; echo err >&2; echo more"});
  std::string out, err;
  PumpFds fds{child.stdout_fd, child.stderr_fd, -1, {}};
  const PumpEnd end = pump_output(fds, Clock::now() + seconds(60),
                                  {[&](const char* d, std::size_t n) { out.append(d, n); },
                                   [&](const char* d, std::size_t n) { err.append(d, n); }, {}});
  EXPECT_EQ(end, PumpEnd::Eof);
  EXPECT_EQ(out, "out\nmore\n");
  EXPECT_EQ(err, "err\n");
  EXPECT_EQ(fds.stdout_fd, -1);
  EXPECT_EQ(fds.stderr_fd, -1);
  EXPECT_EQ(WEXITSTATUS(wait_for_exit(child.pid)), 0);
}

TEST(ProcessPump, StopsWhenKeepGoingSaysSoAndLeavesTheFdsOpen) {
  Child child = spawn({"sh", "-c", "echo ready; exec sleep 600"});
  std::string out;
  PumpFds fds{child.stdout_fd, child.stderr_fd, -1, {}};
  const PumpEnd end = pump_output(fds, Clock::now() + seconds(600),
                                  {[&](const char* d, std::size_t n) { out.append(d, n); }, {},
                                   [&] { return out.find("ready") == std::string::npos; }});
  EXPECT_EQ(end, PumpEnd::Stopped);
  EXPECT_GE(fds.stdout_fd, 0);
  kill(-child.pid, SIGKILL);
  close(fds.stdout_fd);
  close(fds.stderr_fd);
  EXPECT_TRUE(WIFSIGNALED(wait_for_exit(child.pid)));
}

TEST(ProcessPump, EndsAtTheDeadline) {
  Child child = spawn({"sleep", "600"});
  PumpFds fds{child.stdout_fd, child.stderr_fd, -1, {}};
  EXPECT_EQ(pump_output(fds, Clock::now(), {}), PumpEnd::Deadline);
  kill(-child.pid, SIGKILL);
  close(fds.stdout_fd);
  close(fds.stderr_fd);
  wait_for_exit(child.pid);
}

TEST(ProcessPump, RunCommandFeedsStdinAndCollectsBothStreams) {
  const std::string input(200000, 'x');  // more than a pipe holds
  const CommandResult result = run_command({"sh", "-c", "wc -c; echo done >&2"}, input, seconds(60));
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.out, "200000\n");
  EXPECT_EQ(result.err, "done\n");
}

TEST(ProcessGroup, TheChildLeadsANewGroupOnBothSidesOfFork) {
  const pid_t pid = fork_process_group_leader(SIGKILL);
  if (pid == 0) _exit(getpgid(0) == getpid() ? 0 : 1);
  EXPECT_EQ(getpgid(pid), pid);  // set by the parent too, before any race
  EXPECT_EQ(WEXITSTATUS(wait_for_exit(pid)), 0);
}

TEST(ProcessWait, ExitCodeReadsTheWaitStatusAsAShellDoes) {
  const pid_t exited = fork();
  if (exited == 0) _exit(3);
  const int status = wait_for_exit(exited);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(exit_code(status), 3);

  const pid_t killed = fork();
  if (killed == 0) {
    pause();
    _exit(0);
  }
  kill(killed, SIGKILL);
  EXPECT_EQ(exit_code(wait_for_exit(killed)), 128 + SIGKILL);
}

TEST(ProcessWait, NoSuchChildIsAFailedWait) {
  EXPECT_EQ(wait_for_exit(getpid()), -1);
  EXPECT_EQ(exit_code(-1), -1);
}

extern "C" void on_alarm(int) {}

// kbench's interrupt handlers do not restart system calls: a signal while
// waiting must not end the wait.
TEST(ProcessWait, ASignalDoesNotEndTheWait) {
  struct sigaction action{}, previous{};
  action.sa_handler = on_alarm;
  sigemptyset(&action.sa_mask);
  sigaction(SIGALRM, &action, &previous);
  const pid_t child = fork();
  if (child == 0) {
    usleep(500000);
    _exit(4);
  }
  itimerval timer{};
  timer.it_value.tv_usec = 100000;
  setitimer(ITIMER_REAL, &timer, nullptr);
  EXPECT_EQ(exit_code(wait_for_exit(child)), 4);
  sigaction(SIGALRM, &previous, nullptr);
}

TEST(ProcessWait, UntilADeadlineGivesUpOnAChildStillRunning) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  EXPECT_FALSE(wait_for_exit_until(child, Clock::now() + milliseconds(200)));
  kill(child, SIGKILL);
  const auto status = wait_for_exit_until(child, Clock::now() + seconds(60));
  ASSERT_TRUE(status);
  EXPECT_EQ(exit_code(*status), 128 + SIGKILL);
}

TEST(ProcessSpawn, LeadsAGroupOfItsOwnUnlessToldToStayInOurs) {
  const Child own = spawn({"sleep", "600"});
  EXPECT_EQ(getpgid(own.pid), own.pid);
  const Child ours = spawn({"sleep", "600"}, {.death_signal = 0});
  EXPECT_EQ(getpgid(ours.pid), getpgrp());
  for (const Child& child : {own, ours}) {
    kill(child.pid, SIGKILL);
    close(child.stdout_fd);
    close(child.stderr_fd);
    EXPECT_EQ(exit_code(wait_for_exit(child.pid)), 128 + SIGKILL);
  }
}

TEST(ProcessSpawn, WritesBothStreamsToTheGivenDescriptorWithTheEnvironment) {
  TempDir dir{"kbench-process"};
  const std::string log = (dir.path() / "log").string();
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  const Child child = spawn({"sh", "-c", "echo \"out $KBENCH_PROCESS_TEST\"; echo err >&2"},
                            {.environment = {{"KBENCH_PROCESS_TEST", "set"}}, .output_fd = fd, .death_signal = 0});
  close(fd);
  EXPECT_EQ(child.stdout_fd, -1);
  EXPECT_EQ(child.stderr_fd, -1);
  EXPECT_EQ(exit_code(wait_for_exit(child.pid)), 0);
  EXPECT_EQ(kbench::testing::read_file(log), "out set\nerr\n");
}

TEST(ProcessRun, HandsStdoutToTheHandlerAndKillsALateCommandInOurGroup) {
  std::string streamed;
  const CommandResult streaming =
      run({"sh", "-c", "echo out; echo err >&2"},
          {.death_signal = 0, .on_stdout = [&](const char* data, std::size_t size) { streamed.append(data, size); }});
  EXPECT_EQ(streaming.exit_status, 0);
  EXPECT_EQ(streamed, "out\n");
  EXPECT_EQ(streaming.out, "");
  EXPECT_EQ(streaming.err, "err\n");

  const CommandResult late = run({"sleep", "600"}, {.deadline = Clock::now() + milliseconds(100), .death_signal = 0});
  EXPECT_TRUE(late.timed_out);
  EXPECT_EQ(late.exit_status, -1);
  EXPECT_EQ(exit_code(late.wait_status), 128 + SIGKILL);
}

// GNU tar and coreutils close stdout and stderr on their way out: the end
// of the output must not be taken for the end of the command, whose exit
// status would then be lost to the group's kill.
TEST(ProcessRun, ACommandThatClosesItsOutputBeforeItEndsGivesItsExitStatus) {
  const CommandResult result =
      run_command({"sh", "-c", "echo out; exec >&- 2>&-; sleep 0.3; exit 3"}, "", seconds(60));
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.out, "out\n");
}

TEST(ProcessRun, AProgramThatCannotBeExecutedSaysSoAndExitsWith127) {
  const CommandResult result = run({"/nonexistent/kbench-test-program"}, {});
  EXPECT_EQ(result.exit_status, 127);
  EXPECT_EQ(result.err, "kbench: cannot execute /nonexistent/kbench-test-program: No such file or directory\n");
}

// A directory outside any repository: git looks no higher than its parent.
class ProcessGit : public ::testing::Test {
 protected:
  TempDir dir{"kbench-git"};
  ScopedEnv ceiling{"GIT_CEILING_DIRECTORIES", dir.path().parent_path().c_str()};
  std::string repo = dir.path().string();
};

TEST_F(ProcessGit, GitOutputOnANonRepositoryThrowsWhatGitSaid) {
  try {
    git_output(repo, {"rev-parse", "--show-toplevel"});
    FAIL() << "expected a RunError";
  } catch (const RunError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("git rev-parse --show-toplevel in " + repo + " failed: fatal: not a git repository", 0), 0u)
        << message;
  }
  EXPECT_EQ(try_git_output(repo, {"rev-parse", "--show-toplevel"}), std::nullopt);
  EXPECT_NE(run_git(repo, {"rev-parse", "--show-toplevel"}).exit_status, 0);
}

TEST_F(ProcessGit, GivesStdoutWithoutItsNewlineAndPathsUnquoted) {
  ASSERT_EQ(std::system(("git init -q '" + repo + "' && echo x >'" + repo + "/caf\u00e9.c' && git -C '" + repo +
                         "' add -A").c_str()),
            0);
  EXPECT_EQ(git_output(repo, {"ls-files"}), "caf\u00e9.c");
  EXPECT_EQ(try_git_output(repo, {"ls-files"}), "caf\u00e9.c");
}

}  // namespace
