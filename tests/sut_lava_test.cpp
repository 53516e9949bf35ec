// The lava connection without a server: the job it submits for a
// swprofile, the frames it takes from a job log, its parameters.
// tests/e2e/lava.sh runs jobs on a real LAVA server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/errors.h"
#include "plan/plan.h"
#include "sut/initramfs.h"
#include "sut/lava.h"
#include "sut/method.h"
#include "support/test_paths.h"

namespace kbench::sut {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string frame(const std::string& tag, const std::string& payload) {
  return tag + " " + crc32_hex(payload) + " " + payload;
}

// A console line as LAVA's log holds it: ShellLogger puts a backslash before
// each '"', then the entry is dumped as a YAML double-quoted scalar.
std::string log_entry(const std::string& level, const std::string& console) {
  std::string shell;
  for (const char c : console) shell += c == '"' ? std::string("\\\"") : std::string(1, c);
  std::string quoted;
  for (const char c : shell) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return "- {\"dt\": \"2026-12-05T11:20:01.123456\", \"lvl\": \"" + level + "\", \"msg\": \"" + quoted + "\"}\n";
}

TEST(LavaJob, DeploysTheKernelAndInitramfsAndBootsWithTheCmdline) {
  lava::JobSpec spec;
  spec.job_name = "kbench B run syscall/getpid";
  spec.device_type = "qemu";
  spec.tags = {"fast", "x86"};
  spec.kernel_url = "file:///var/cache/kbench-test/vmlinuz-6.12";
  spec.initramfs_url = "file:///tmp/kbench-lava.X/initramfs-1.cpio";
  spec.cmdline = {"mitigations=off", "nosmt"};
  spec.extra_options = {"-cpu max"};
  spec.job_timeout = std::chrono::seconds(900);
  spec.deploy_timeout = std::chrono::seconds(120);
  const std::string yaml = lava::job_yaml(spec);
  EXPECT_THAT(yaml, StartsWith("device_type: qemu\njob_name: 'kbench B run syscall/getpid'\n"));
  EXPECT_THAT(yaml, HasSubstr("tags:\n- 'fast'\n- 'x86'\n"));
  EXPECT_THAT(yaml, HasSubstr("  job: {seconds: 900}\n  action: {seconds: 780}\n"));
  EXPECT_THAT(yaml, HasSubstr("    to: tmpfs\n    timeout: {seconds: 120}\n"));
  EXPECT_THAT(yaml, HasSubstr("        image_arg: '-kernel {kernel} -append \"console=ttyS0,115200 rdinit=/init "
                              "mitigations=off nosmt\"'\n        url: 'file:///var/cache/kbench-test/vmlinuz-6.12'\n"));
  EXPECT_THAT(yaml, HasSubstr("        image_arg: '-initrd {initrd}'\n        url: "
                              "'file:///tmp/kbench-lava.X/initramfs-1.cpio'\n"));
  EXPECT_THAT(yaml, HasSubstr("    method: qemu\n    media: tmpfs\n    timeout: {seconds: 780}\n"
                              "    prompts: ['kbench-lava-done# ']\n"));
  EXPECT_THAT(yaml, HasSubstr("context:\n  arch: amd64\n  extra_options: ['-cpu max']\nactions:\n"));
}

TEST(LavaJob, NoTagsNoTagsKey) {
  lava::JobSpec spec;
  spec.device_type = "qemu";
  spec.job_name = "it's";
  const std::string yaml = lava::job_yaml(spec);
  EXPECT_THAT(yaml, ::testing::Not(HasSubstr("tags:")));
  EXPECT_THAT(yaml, ::testing::Not(HasSubstr("extra_options")));
  EXPECT_THAT(yaml, HasSubstr("job_name: 'it''s'\n"));
}

TEST(LavaLog, TakesTheVerifiedFramesAmongKernelNoiseAndLavasLines) {
  const std::string fingerprint = R"({"type":"fingerprint","data":{"kernel":"6.12","note":"a \"quoted\" \\ word"}})";
  std::string corrupted = frame("KBO1", R"({"type":"sample","value":1})");
  corrupted.back() = '2';
  const std::string log = "- {\"dt\": \"2026-12-05T11:20:00\", \"lvl\": \"info\", \"msg\": \"start: 1 tmpfs-deploy\"}\n" +
                          log_entry("target", "[    0.000000] Linux version 6.12.118+deb12-amd64") +
                          log_entry("target", frame("KBS1", "init 6.12.118+deb12-amd64")) +
                          log_entry("target", "[    1.5] random: crng init done " + frame("KBO1", fingerprint)) +
                          log_entry("target", "[    2.0] KB is not a frame") + log_entry("target", corrupted) +
                          log_entry("target", frame("KBE1", "warning: tab\there")) +
                          "- {\"dt\": \"2026-12-05T11:20:02\", \"lvl\": \"results\", \"msg\": {\"case\": \"x\"}}\n" +
                          log_entry("target", frame("KBX1", "0")) + log_entry("target", "kbench-lava-done# ") +
                          log_entry("exception", "Connection closed") +
                          log_entry("error", "wait for prompt timed out");
  const lava::LogContents contents = lava::read_job_log(log);
  ASSERT_EQ(contents.frames.size(), 5u);
  EXPECT_EQ(contents.frames[0].tag, "KBS1");
  EXPECT_TRUE(contents.frames[0].valid);
  EXPECT_EQ(contents.frames[1].tag, "KBO1");
  EXPECT_EQ(contents.frames[1].payload, fingerprint);
  EXPECT_TRUE(contents.frames[1].valid);
  EXPECT_EQ(contents.frames[2].tag, "KBO1");
  EXPECT_FALSE(contents.frames[2].valid);
  EXPECT_EQ(contents.frames[3].payload, "warning: tab\there");
  EXPECT_TRUE(contents.frames[3].valid);
  EXPECT_EQ(contents.frames[4].tag, "KBX1");
  EXPECT_EQ(contents.frames[4].payload, "0");
  EXPECT_THAT(contents.errors, ::testing::ElementsAre("Connection closed", "wait for prompt timed out"));
  EXPECT_EQ(contents.last_console_line, "kbench-lava-done# ");
  EXPECT_EQ(contents.lines, 12u);
}

TEST(LavaLog, UnquotesYamlEscapes) {
  EXPECT_EQ(lava::yaml_unquote(R"(a\"b\\c\x41\u00e9\t)"), "a\"b\\cA\xc3\xa9\t");
}

class LavaParams : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("KBENCH_AGENT", (std::string(KBENCH_BINARY_DIR) + "/kbench-agent").c_str(), 1);
    dir_ = std::filesystem::temp_directory_path() / ("kbench-lava-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    token_ = (dir_ / "token").string();
    std::ofstream(token_) << "abc123\n";
    kernel_ = (dir_ / "vmlinuz-test").string();
    std::ofstream(kernel_) << "not a kernel";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string make_error(Params params, std::vector<std::string> cmdline = {}) {
    const SwprofileKernel swprofile{"A", kernel_, "", "", std::move(cmdline), ""};
    return error_of([&] { make_connection("lava", params, &swprofile); });
  }
  Params good() const {
    return {{"url", "http://127.0.0.1:9/"}, {"token_file", token_}, {"device_type", "qemu"}};
  }

  std::filesystem::path dir_;
  std::string token_;
  std::string kernel_;
};

TEST_F(LavaParams, GoodOnesMakeAConnectionWithoutContactingTheServer) {
  const SwprofileKernel swprofile{"A", kernel_, "", "", {"mitigations=off"}, ""};
  auto connection = make_connection("lava", good(), &swprofile);
  EXPECT_EQ(connection->describe(), "lava http://127.0.0.1:9/ (device type qemu, cmdline: mitigations=off)");
}

TEST_F(LavaParams, BadOnesAreOneLine) {
  Params params = good();
  params.erase("device_type");
  EXPECT_EQ(make_error(params),
            "sut.connection.params.device_type: expected a value (url, token_file and device_type are required)");
  params = good();
  params["url"] = "ftp://x/";
  EXPECT_EQ(make_error(params), "sut.connection.params.url: expected an http:// or https:// URL, got 'ftp://x/'");
  params = good();
  params["token_file"] = (dir_ / "missing").string();
  EXPECT_EQ(make_error(params), "sut.connection.params.token_file " + (dir_ / "missing").string() +
                                    ": expected a readable file holding a token");
  params = good();
  params["job_timeout"] = "10";
  EXPECT_EQ(make_error(params),
            "sut.connection.params.job_timeout: expected an integer from 120 to 1000000000, got '10'");
  params = good();
  params["priority"] = "urgent";
  EXPECT_EQ(make_error(params), "sut.connection.params.priority: expected one of high, medium, low, got 'urgent'");
  EXPECT_EQ(make_error(good(), {"dyndbg=\"file x +p\""}),
            "swprofiles[A].cmdline 'dyndbg=\"file x +p\"': expected no quotes, braces, backslashes or blanks with "
            "the lava connection");
  for (const std::string& error : {make_error(params), make_error(good(), {"a b"})}) {
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST_F(LavaParams, ThePlanRefusesThemWithItsLine) {
  EXPECT_EQ(error_of([] {
              plan::parse_plan("sut: {connection: {method: lava, params: {url: x, token_file: t, device_type: q}}}\n"
                               "benchmarks: [a/b]\n",
                               "p.yaml");
            }),
            "p.yaml:1: sut.connection.params.url: expected an http:// or https:// URL, got 'x'");
}

}  // namespace
}  // namespace kbench::sut
