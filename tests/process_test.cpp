// The controller's process toolkit (process/process.h), with real processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "process/process.h"

using namespace kbench::process;
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

}  // namespace
