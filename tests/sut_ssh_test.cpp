// The ssh connection against a real OpenSSH server on loopback, started by
// scripts/start-test-sshd.sh with keys generated for the test.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "common/errors.h"
#include "process/process.h"
#include "runner/agent_invocation.h"
#include "sut/connection.h"
#include "support/test_paths.h"

namespace kbench::sut {
namespace {

namespace fs = std::filesystem;
using process::CommandResult;
using process::run_command;
using process::shell_join;
using process::shell_quote;
using std::chrono::seconds;

std::string agent_path() { return std::string(KBENCH_BINARY_DIR) + "/kbench-agent"; }

// Runs `sh -c 'printf "[%s]" "$@"' sh <quoted words>`: what a shell makes of them.
std::string through_shell(const std::vector<std::string>& words) {
  const std::string command = "printf '[%s]' " + shell_join(words);
  const CommandResult result = run_command({"sh", "-c", command}, "", seconds(10));
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return result.out;
}

TEST(ShellQuote, EveryCharacterSurvivesTheShell) {
  const std::vector<std::string> words = {"plain", "with space", "it's", "a;b", "$HOME", "\"q\"", "`id`",
                                          "back\\slash", "new\nline", "", "'", "*", "-n"};
  std::string expected;
  for (const auto& word : words) expected += "[" + word + "]";
  EXPECT_EQ(through_shell(words), expected);
}

TEST(ShellQuote, EscapesSingleQuotes) { EXPECT_EQ(shell_quote("it's"), "'it'\\''s'"); }

class SshdFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(fs::temp_directory_path() / ("kbench-sshd-" + std::to_string(getpid())));
    const std::string script = std::string(KBENCH_TEST_DATA_DIR) + "/../../scripts/start-test-sshd.sh";
    const CommandResult started = run_command({"bash", script, *dir_}, "", seconds(60));
    if (started.exit_status == 77) {
      skip_reason_ = new std::string("skipped: " + started.err);
      return;
    }
    ASSERT_EQ(started.exit_status, 0) << started.err;
    std::ifstream env(*dir_ + "/env");
    env_ = new std::map<std::string, std::string>();
    for (std::string line; std::getline(env, line);) {
      const auto eq = line.find('=');
      if (eq != std::string::npos) (*env_)[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }

  static void TearDownTestSuite() {
    if (env_ && env_->count("SSHD_PID")) kill(std::stoi(env_->at("SSHD_PID")), SIGTERM);
    std::error_code ignored;  // sshd may still be removing its pid file
    if (dir_) fs::remove_all(*dir_, ignored);
    // A next run of the suite (--gtest_repeat) starts its own server.
    delete env_;
    delete skip_reason_;
    delete dir_;
    env_ = nullptr;
    skip_reason_ = nullptr;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (skip_reason_) GTEST_SKIP() << *skip_reason_;
    ASSERT_NE(env_, nullptr);
  }

  static std::map<std::string, std::string> params() {
    return {{"host", "127.0.0.1"},
            {"port", env_->at("SSHD_PORT")},
            {"user", env_->at("SSH_USER")},
            {"keyfile", env_->at("SSH_KEY")},
            {"known_hosts", env_->at("SSH_KNOWN_HOSTS")}};
  }

  // Runs a command on the "remote" side (the same machine) and returns stdout.
  static std::string local_sh(const std::string& command) {
    return run_command({"sh", "-c", command}, "", seconds(10)).out;
  }

  static std::string* dir_;
  static std::string* skip_reason_;
  static std::map<std::string, std::string>* env_;
};

std::string* SshdFixture::dir_ = nullptr;
std::string* SshdFixture::skip_reason_ = nullptr;
std::map<std::string, std::string>* SshdFixture::env_ = nullptr;

TEST_F(SshdFixture, FingerprintAndBenchmarkStreamBack) {
  auto connection = make_ssh_connection(params(), agent_path());
  EXPECT_EQ(connection->describe(), "ssh " + env_->at("SSH_USER") + "@127.0.0.1:" + env_->at("SSHD_PORT"));

  std::vector<nlohmann::json> records;
  auto result = runner::invoke_agent(*connection, {"fingerprint"}, seconds(60),
                                     [&](const nlohmann::json& record) { records.push_back(record); });
  ASSERT_EQ(result.exit_status, 0) << result.stderr_tail;
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["type"], "fingerprint");
  EXPECT_TRUE(records[0]["data"].contains("kernel_release"));

  records.clear();
  result = runner::invoke_agent(
      *connection,
      {"run", "--benchmark", "syscall/getppid", "--param", "calls=20000", "--warmups", "0", "--repeats", "2"},
      seconds(120), [&](const nlohmann::json& record) { records.push_back(record); });
  ASSERT_EQ(result.exit_status, 0) << result.stderr_tail;
  int samples = 0;
  std::set<int> repeats_ended;
  for (const auto& record : records) {
    if (record["type"] == "sample") {
      ++samples;
      EXPECT_GT(record["value"].get<double>(), 0.0);
    }
    if (record["type"] == "repeat_end") repeats_ended.insert(record["repeat"].get<int>());
  }
  EXPECT_GT(samples, 0);
  EXPECT_EQ(repeats_ended, (std::set<int>{0, 1}));
}

TEST_F(SshdFixture, WeirdArgumentsReachTheAgentUnchanged) {
  auto connection = make_ssh_connection(params(), agent_path());
  const std::string name = "no such; $x \"y\" 'z' `id` \\ * & |";
  const auto result =
      runner::invoke_agent(*connection, {"run", "--benchmark", name}, seconds(60), [](const nlohmann::json&) {});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_NE(result.stderr_tail.find("unknown benchmark '" + name + "'"), std::string::npos) << result.stderr_tail;
}

TEST_F(SshdFixture, TheAgentRunsUnderTheWrapperWithItsArgumentsUnchanged) {
  auto connection = make_ssh_connection(params(), agent_path());
  // The wrapper names the command it was given on stderr, then runs it.
  connection->set_wrapper({"sh", "-c", "echo \"wrapped: ${1##*/} $2 $3\" >&2; exec \"$@\"", "wrap"});
  const std::string name = "no such; $x 'z'";
  auto result =
      runner::invoke_agent(*connection, {"run", "--benchmark", name}, seconds(60), [](const nlohmann::json&) {});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_NE(result.stderr_tail.find("wrapped: kbench-agent run --benchmark"), std::string::npos) << result.stderr_tail;
  EXPECT_NE(result.stderr_tail.find("unknown benchmark '" + name + "'"), std::string::npos) << result.stderr_tail;

  connection->set_wrapper({});
  result = runner::invoke_agent(*connection, {"run", "--benchmark", name}, seconds(60), [](const nlohmann::json&) {});
  EXPECT_EQ(result.stderr_tail.find("wrapped:"), std::string::npos) << result.stderr_tail;
}

TEST_F(SshdFixture, AgentIsVerifiedInAPrivateDirectoryAndRemovedAfterwards) {
  std::string remote_dir;
  {
    auto connection = make_ssh_connection(params(), agent_path());
    const auto result = runner::invoke_agent(*connection, {"fingerprint"}, seconds(60), [](const nlohmann::json&) {});
    ASSERT_EQ(result.exit_status, 0) << result.stderr_tail;
    remote_dir = ssh_remote_dir(*connection);
    ASSERT_FALSE(remote_dir.empty());
    ASSERT_TRUE(fs::exists(remote_dir + "/kbench-agent"));
    EXPECT_EQ(fs::status(remote_dir).permissions() & fs::perms::all, fs::perms::owner_all);
    // Same bytes as the local agent (the connection also checked sha256 remotely).
    EXPECT_EQ(local_sh("cmp " + shell_quote(remote_dir + "/kbench-agent") + " " + shell_quote(agent_path()) +
                       " && echo same"),
              "same\n");
  }
  EXPECT_FALSE(fs::exists(remote_dir));
}

TEST_F(SshdFixture, UnknownHostKeyIsRefused) {
  auto bad = params();
  const std::string empty_known_hosts = *dir_ + "/empty_known_hosts";
  std::ofstream(empty_known_hosts).close();
  bad["known_hosts"] = empty_known_hosts;
  bad["strict_host_key_checking"] = "yes";
  auto connection = make_ssh_connection(bad, agent_path());
  try {
    connection->start_agent({"fingerprint"});
    FAIL() << "a host key not in known_hosts was accepted";
  } catch (const RunError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("status 255"), std::string::npos) << message;
    EXPECT_NE(message.find("Host key verification failed"), std::string::npos) << message;
  }
}

TEST_F(SshdFixture, LostConnectionFailsTheInvocationAndStopsTheRemoteAgent) {
  auto connection = make_ssh_connection(params(), agent_path());
  // Install first, so that the only sshd session children are the run's.
  ASSERT_EQ(runner::invoke_agent(*connection, {"fingerprint"}, seconds(60), [](const nlohmann::json&) {}).exit_status,
            0);
  const std::string remote_dir = ssh_remote_dir(*connection);
  const std::string sshd_pid = env_->at("SSHD_PID");
  // Anchored, and with [k] so that neither the local ssh, the remote sh nor
  // the shell running pgrep (whose command lines contain the path) match.
  const std::string agent_pattern = shell_quote("^" + remote_dir + "/[k]bench-agent run");

  // Cuts the connection from the server side once the benchmark is running:
  // the per-connection sshd processes are the listener's children.
  bool seen_running = false;
  std::thread cutter([&] {
    for (int i = 0; i < 100 && !seen_running; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      seen_running = !local_sh("pgrep -f " + agent_pattern).empty();
    }
    local_sh("pkill -KILL -P " + sshd_pid);
  });
  int samples = 0;
  const auto result = runner::invoke_agent(
      *connection,
      {"run", "--benchmark", "syscall/getppid", "--param", "calls=2000000000", "--warmups", "0", "--repeats", "1"},
      seconds(120), [&](const nlohmann::json& record) { samples += record["type"] == "sample"; });
  cutter.join();
  EXPECT_TRUE(seen_running) << "the remote agent was never seen running";
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_status, 255) << result.stderr_tail;
  EXPECT_NE(runner::describe_failure(result), "");

  // The remote agent must not run on after its connection is gone.
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = local_sh("pgrep -f " + agent_pattern).empty();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(gone) << "the remote agent survived its connection";
}

TEST(SshParams, BadParametersNameTheKey) {
  EXPECT_THROW(make_ssh_connection({{"port", "22"}}, "/bin/true"), InputError);
  EXPECT_THROW(make_ssh_connection({{"host", "h"}, {"port", "ssh"}}, "/bin/true"), InputError);
  try {
    make_ssh_connection({{"host", "h"}, {"hots", "x"}}, "/bin/true");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("sut.connection.params.hots"), std::string::npos);
  }
}

}  // namespace
}  // namespace kbench::sut
