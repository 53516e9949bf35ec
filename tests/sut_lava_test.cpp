// The lava connection without a LAVA server: the job it submits for a
// swprofile, the frames it takes from a job log, its parameters, its relay
// against a stand-in for the REST API.
// tests/e2e/lava.sh runs jobs on a real LAVA server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "plan/plan.h"
#include "process/process.h"
#include "support/error_text.h"
#include "support/scoped_env.h"
#include "sut/initramfs.h"
#include "sut/lava.h"
#include "sut/method.h"
#include "sut/uboot_image.h"
#include "support/test_paths.h"

namespace kbench::sut {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using kbench::testing::error_of;
using ::testing::StartsWith;

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

// The /init is joined from assets/sut/init_*.sh; its last shell's prompt is
// what the job waits for.
TEST(LavaInit, RunsTheAgentOnTheConsoleAndEndsInAShellWithTheJobsPrompt) {
  const std::string init = lava_init();
  EXPECT_TRUE(init.starts_with("#!/bin/busybox sh\n"));
  EXPECT_EQ(init.find("#!", 1), std::string::npos);
  const auto channel = init.find("results=/dev/console\n");
  const auto first_frame = init.find("| frame KBS1 >&3\n");
  const auto prompt = init.find(std::string("export PS1='") + lava::kDonePrompt + "'\n");
  ASSERT_NE(channel, std::string::npos);
  ASSERT_NE(first_frame, std::string::npos);
  ASSERT_NE(prompt, std::string::npos);
  EXPECT_LT(channel, first_frame);
  EXPECT_LT(first_frame, prompt);
  EXPECT_EQ(init.find("\nsleep 0.2\npoweroff -f\n"), std::string::npos);
  EXPECT_TRUE(init.ends_with("exec setsid cttyhack sh\n"));
}

// The swprofile's device tree is an image of the deployment like the
// kernel's, which QEMU gets as -dtb; without one, no dtb key at all.
TEST(LavaJob, DeploysTheDeviceTreeAsAnImageOfItsOwn) {
  lava::JobSpec spec;
  spec.device_type = "qemu";
  spec.job_name = "kbench A fingerprint";
  spec.arch = "aarch64";
  spec.kernel_url = "file:///boot/Image";
  spec.initramfs_url = "file:///tmp/kbench-lava.X/initramfs-1.cpio";
  spec.dtb_url = "http://controller:8000/secret/device-tree.dtb";
  const std::string yaml = lava::job_yaml(spec);
  EXPECT_THAT(yaml, HasSubstr("    images:\n"
                              "      kernel:\n"
                              "        image_arg: '-kernel {kernel} -append \"console=ttyAMA0 rdinit=/init\"'\n"
                              "        url: 'file:///boot/Image'\n"
                              "      initrd:\n"
                              "        image_arg: '-initrd {initrd}'\n"
                              "        url: 'file:///tmp/kbench-lava.X/initramfs-1.cpio'\n"
                              "      dtb:\n"
                              "        image_arg: '-dtb {dtb}'\n"
                              "        url: 'http://controller:8000/secret/device-tree.dtb'\n"
                              "- boot:\n"));
  EXPECT_THAT(yaml, HasSubstr("context:\n  arch: arm64\n"));
  spec.dtb_url.clear();
  EXPECT_THAT(lava::job_yaml(spec), ::testing::Not(HasSubstr("dtb")));
}

// A board that boots by U-Boot: the kernel and the initramfs (with U-Boot's
// header, passed through as it is) go to LAVA's TFTP directory, the device
// type's ramdisk commands boot them, and the swprofile's words reach the
// kernel through the context LAVA renders those commands with.
TEST(LavaJob, ABoardThatBootsByUBootFetchesTheKernelAndInitramfsByTftp) {
  lava::JobSpec spec;
  spec.boot = lava::BootMethod::UBoot;
  spec.device_type = "kbench-uboot-qemu";
  spec.job_name = "kbench B run syscall/getppid";
  spec.arch = "aarch64";
  spec.kernel_url = "http://controller:8000/secret/vmlinuz";
  spec.initramfs_url = "http://controller:8000/secret/initramfs-1.uimage";
  spec.cmdline = {"arm64.nopauth", "kpti=1"};
  spec.extra_options = {"-cpu max"};
  spec.job_timeout = std::chrono::seconds(900);
  spec.deploy_timeout = std::chrono::seconds(120);
  std::string yaml = lava::job_yaml(spec);
  EXPECT_THAT(yaml, StartsWith("device_type: kbench-uboot-qemu\n"));
  EXPECT_THAT(yaml, HasSubstr("  job: {seconds: 900}\n  action: {seconds: 780}\n"));
  EXPECT_THAT(yaml, HasSubstr("context:\n  extra_kernel_args: 'rdinit=/init arm64.nopauth kpti=1'\nactions:\n"
                              "- deploy:\n"
                              "    to: tftp\n"
                              "    timeout: {seconds: 120}\n"
                              "    kernel:\n"
                              "      url: 'http://controller:8000/secret/vmlinuz'\n"
                              "      type: image\n"
                              "    ramdisk:\n"
                              "      url: 'http://controller:8000/secret/initramfs-1.uimage'\n"
                              "      header: u-boot\n"
                              "      install_modules: false\n"
                              "      install_overlay: false\n"
                              "- boot:\n"
                              "    method: u-boot\n"
                              "    commands: ramdisk\n"
                              "    timeout: {seconds: 780}\n"
                              "    prompts: ['kbench-lava-done# ']\n"));
  // QEMU's options and console are the QEMU device types' business.
  EXPECT_THAT(yaml, Not(HasSubstr("extra_options")));
  EXPECT_THAT(yaml, Not(HasSubstr("console=")));
  EXPECT_THAT(yaml, Not(HasSubstr("dtb")));
  spec.dtb_url = "http://controller:8000/secret/device-tree.dtb";
  spec.kernel_type = "zimage";
  yaml = lava::job_yaml(spec);
  EXPECT_THAT(yaml, HasSubstr("      type: zimage\n"));
  EXPECT_THAT(yaml, HasSubstr("      install_overlay: false\n"
                              "    dtb:\n      url: 'http://controller:8000/secret/device-tree.dtb'\n- boot:\n"));
}

// Reference headers made by U-Boot's own tool, mkimage 2023.01 (Debian
// u-boot-tools): printf 'kbench initramfs test\n' >data; SOURCE_DATE_EPOCH=0
// mkimage -A arm64|x86_64 -O linux -T ramdisk -C none -n 'kbench initramfs'
// -d data out; xxd -p -c 64 out.
TEST(UBootImage, HeaderIsMkimagesByteForByte) {
  const std::string data = "kbench initramfs test\n";
  auto hex_header = [](const std::string& image) {
    std::string hex;
    for (std::size_t i = 0; i < 64; ++i) hex += fmt::format("{:02x}", static_cast<unsigned char>(image[i]));
    return hex;
  };
  const std::string arm64 = uboot_ramdisk_image(data, "aarch64", "kbench initramfs");
  EXPECT_EQ(hex_header(arm64),
            "27051956304fbcf60000000000000016000000000000000040829c77051603006b62656e636820696e697472616d6673"
            "00000000000000000000000000000000");
  EXPECT_EQ(arm64.substr(64), data);
  EXPECT_EQ(hex_header(uboot_ramdisk_image(data, "x86_64", "kbench initramfs")),
            "2705195636dd67800000000000000016000000000000000040829c77051803006b62656e636820696e697472616d6673"
            "00000000000000000000000000000000");
  // A longer name is cut to the header's 32 bytes, which U-Boot does not
  // need to end in a NUL.
  const std::string long_name(40, 'n');
  EXPECT_EQ(uboot_ramdisk_image(data, "aarch64", long_name).substr(32, 32), std::string(32, 'n'));
  EXPECT_EQ(error_of([&] { uboot_ramdisk_image(data, "riscv64", "x"); }),
            "U-Boot image architecture 'riscv64': expected x86_64 or aarch64");
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

// A stand-in for LAVA's REST API: one job, its state and its log as a test
// sets them.
// A job's log in which the agent started, wrote its fingerprint and exited 0.
std::string fingerprint_log() {
  return log_entry("target", frame("KBS1", "init 6.12")) +
         log_entry("target", frame("KBO1", R"({"type":"fingerprint","data":{"kernel":"6.12"}})")) +
         log_entry("target", frame("KBX1", "0"));
}

class FakeLava {
 public:
  FakeLava() {
    server_.Post("/api/v0.2/jobs/", [this](const httplib::Request& request, httplib::Response& response) {
      authorization_ = request.get_header_value("Authorization");
      definition_ = nlohmann::json::parse(request.body).value("definition", "");
      ++submits_;
      response.status = 201;
      response.set_content(R"({"message": "job(s) successfully submitted", "job_ids": [7]})", "application/json");
    });
    server_.Get("/api/v0.2/jobs/", [this](const httplib::Request& request, httplib::Response& response) {
      ++lookups_;
      looked_for_ = request.get_param_value("description__startswith");
      looked_in_order_ = request.get_param_value("ordering");
      response.set_content(going_, "application/json");
    });
    server_.Get("/api/v0.2/jobs/7/", [this](const httplib::Request&, httplib::Response& response) {
      nlohmann::json job = job_;
      if (queued_polls_ > 0) {
        --queued_polls_;
        job["state"] = "Submitted";
        job["health"] = "Unknown";
      } else if (running_polls_ > 0) {
        --running_polls_;
        job["state"] = "Running";
      }
      response.set_content(job.dump(), "application/json");
    });
    server_.Get("/api/v0.2/jobs/7/logs/", [this](const httplib::Request& request, httplib::Response& response) {
      std::string text = submits_ == 1 && !first_log_.empty() ? first_log_ : log_;
      if (!growing_log_.empty()) {
        text = growing_log_.front();
        if (growing_log_.size() > 1) growing_log_.erase(growing_log_.begin());
      }
      // As LAVA: the lines from `start` on, 404 when there is none.
      const std::size_t start = request.has_param("start") ? std::stoul(request.get_param_value("start")) : 0;
      log_starts_.push_back(start);
      std::size_t at = 0;
      for (std::size_t line = 0; line < start && at != std::string::npos; ++line) {
        at = text.find('\n', at);
        if (at != std::string::npos) ++at;
      }
      if (at == std::string::npos || at >= text.size()) {
        response.status = 404;
        return;
      }
      response.set_content(text.substr(at), "application/yaml");
    });
    server_.Get("/api/v0.2/jobs/7/cancel/", [this](const httplib::Request&, httplib::Response&) { ++cancels_; });
    server_.Get("/api/v0.2/devices/", [this](const httplib::Request& request, httplib::Response& response) {
      devices_query_ = request.get_param_value("device_type");
      ++device_listings_;
      response.set_content(devices_, "application/json");
    });
    server_.Get("/api/v0.2/workers/", [this](const httplib::Request&, httplib::Response& response) {
      response.set_content(workers_, "application/json");
    });
    server_.Get("/api/v0.2/devicetypes/", [this](const httplib::Request& request, httplib::Response& response) {
      authorization_ = request.get_header_value("Authorization");
      if (authorization_ != "Token abc123") {
        response.status = 401;
        response.set_content(R"({"detail":"Invalid token."})", "application/json");
        return;
      }
      const std::string name = request.get_param_value("name");
      const bool known = name.empty() || name == "qemu";
      response.set_content(known ? R"({"count": 1, "results": [{"name": "qemu"}]})" : R"({"count": 0, "results": []})",
                           "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("FakeLava: cannot bind a port on 127.0.0.1");
    thread_ = std::thread([this] {
      server_.listen_after_bind();
      listen_returned_ = true;
    });
    // stop() before the server runs does nothing, and the destructor's join
    // would then wait for a server nobody stops: a test failing early hangs.
    while (!server_.is_running() && !listen_returned_) std::this_thread::yield();
  }
  ~FakeLava() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

  nlohmann::json job_ = {{"id", 7}, {"state", "Finished"}, {"health", "Complete"}, {"actual_device", "qemu-01"},
                         {"failure_comment", nullptr}};
  std::string log_;
  std::string first_log_;  // the first submission's log, when set; log_ for the later ones
  // The log as each read finds it, the last one staying (a job's log
  // growing while it runs); when empty, log_ or first_log_.
  std::vector<std::string> growing_log_;
  std::vector<std::size_t> log_starts_;  // each read's start line
  std::atomic<int> queued_polls_ = 0;     // polls that find the job Submitted, before the running ones
  std::atomic<int> running_polls_ = 0;    // polls that find the job Running before it is job_'s state
  std::atomic<int> submits_ = 0;
  std::string authorization_;
  std::string definition_;
  std::atomic<int> cancels_ = 0;
  std::string devices_query_;
  std::atomic<int> device_listings_ = 0;
  // What GET jobs/ (a resumed relay looking for its job) answers, and what
  // it was asked.
  std::string going_ = R"({"count": 0, "results": []})";
  std::string looked_for_;
  std::string looked_in_order_;
  std::atomic<int> lookups_ = 0;
  std::string devices_ = R"({"count": 1, "results": [{"hostname": "q1", "state": "Idle", "health": "Maintenance",
                                                     "worker_host": "w1"}]})";
  std::string workers_ = R"({"count": 1, "results": [{"hostname": "w1", "state": "Online", "health": "Active"}]})";

 private:
  httplib::Server server_;
  int port_ = 0;
  std::atomic<bool> listen_returned_ = false;
  std::thread thread_;
};

struct Relayed {
  std::string out;
  std::string err;
  int status = -1;
};

Relayed relay_through(Connection& connection) {
  AgentProcess agent = connection.start_agent({"fingerprint"});
  Relayed relayed;
  for (auto [fd, into] : {std::pair{agent.stdout_fd, &relayed.out}, std::pair{agent.stderr_fd, &relayed.err}}) {
    char buffer[4096];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) into->append(buffer, static_cast<std::size_t>(n));
    close(fd);
  }
  relayed.status = process::exit_code(process::wait_for_exit(agent.pid));
  return relayed;
}

class LavaConnection : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string agent = std::string(KBENCH_BINARY_DIR) + "/kbench-agent";
    // Every lava connection carries the agent: without it each test fails
    // on this one line rather than on its own.
    ASSERT_EQ(access(agent.c_str(), X_OK), 0) << agent << " is not built (cmake --build ... --target kbench-agent)";
    agent_env_.emplace("KBENCH_AGENT", agent.c_str());
    dir_ = std::filesystem::temp_directory_path() / ("kbench-lava-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    token_ = (dir_ / "token").string();
    std::ofstream(token_) << "abc123\n";
    kernel_ = (dir_ / "vmlinuz-test").string();
    std::ofstream(kernel_) << "not a kernel";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  SwprofileKernel swprofile(std::vector<std::string> cmdline = {}) const {
    return {"A", kernel_, "", "", std::move(cmdline), "", ""};
  }
  std::string make_error(Params params, std::vector<std::string> cmdline = {}) {
    const SwprofileKernel kernel = swprofile(std::move(cmdline));
    return error_of([&] { make_connection("lava", params, &kernel); });
  }
  Params good() const {
    return {{"url", "http://127.0.0.1:9/"}, {"token_file", token_}, {"device_type", "qemu"}};
  }
  // good() params pointed at `lava`, `extra` over them.
  Params params_for(const FakeLava& lava, const Params& extra = {}) const {
    Params params = good();
    params["url"] = lava.url();
    for (const auto& [name, value] : extra) params[name] = value;
    return params;
  }
  // A connection to `lava` for swprofile() (the connection keeps a copy).
  std::unique_ptr<Connection> connect(const FakeLava& lava, const Params& extra = {}) const {
    const SwprofileKernel kernel = swprofile();
    return make_connection("lava", params_for(lava, extra), &kernel);
  }
  // What the relay passes on from one job on `lava`.
  Relayed relay_job(const FakeLava& lava, std::vector<std::string> cmdline = {}, const Params& extra = {}) {
    const SwprofileKernel kernel = swprofile(std::move(cmdline));
    auto connection = make_connection("lava", params_for(lava, extra), &kernel);
    return relay_through(*connection);
  }

  // KBENCH_AGENT for this test only: the other tests share the process.
  std::optional<kbench::testing::ScopedEnv> agent_env_;
  std::filesystem::path dir_;
  std::string token_;
  std::string kernel_;
};

TEST_F(LavaConnection, GoodOnesMakeAConnectionWithoutContactingTheServer) {
  const SwprofileKernel kernel = swprofile({"mitigations=off"});
  auto connection = make_connection("lava", good(), &kernel);
  EXPECT_EQ(connection->describe(), "lava http://127.0.0.1:9/ (device type qemu, cmdline: mitigations=off)");
}

TEST_F(LavaConnection, BadOnesAreOneLine) {
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
  for (const std::string bad : {"0", "20s", ""}) {
    params = good();
    params["queue_timeout"] = bad;
    EXPECT_EQ(make_error(params), "sut.connection.params.queue_timeout: expected an integer from 1 to 1000000000, "
                                  "got '" + bad + "'");
  }
  for (const std::string bad : {"localhost", "0.0.0.0:70000", ":80", "host:"}) {
    params = good();
    params["serve_files"] = bad;
    EXPECT_EQ(make_error(params), "sut.connection.params.serve_files: expected ADDRESS:PORT, e.g. 0.0.0.0:0 (port 0: "
                                  "any free one), got '" + bad + "'");
  }
  params = good();
  params["arch"] = "riscv64";
  EXPECT_EQ(make_error(params), "sut.connection.params.arch: expected x86_64 or aarch64, got 'riscv64'");
  params = good();
  params["boot_method"] = "grub";
  EXPECT_EQ(make_error(params),
            "sut.connection.params.boot_method: expected one of qemu, u-boot, got 'grub'");
  params = good();
  params["boot_method"] = "u-boot";
  params["extra_options"] = "-cpu max";
  EXPECT_EQ(make_error(params), "sut.connection.params.extra_options: expected none with boot_method u-boot (they "
                                "are QEMU's; a board boots as its device type says)");
  // This machine's busybox for an arm64 board.
  params = good();
  params["arch"] = "arm64";
  EXPECT_THAT(make_error(params), StartsWith("sut.connection.params.busybox /bin/busybox: expected a static busybox "
                                             "built for aarch64, it is built for x86_64 (Debian busybox-static:arm64"));
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

TEST(LavaDevices, NoDeviceCanRunAJobWhenEachIsUnhealthyOrOnAWorkerThatIsNotUp) {
  const std::string workers = R"({"count": 2, "results": [{"hostname": "w1", "state": "Online", "health": "Active"},
                                                          {"hostname": "w2", "state": "Offline", "health": "Active"}]})";
  auto devices = [](const std::string& health, const std::string& worker) {
    return R"({"count": 2, "results": [{"hostname": "q1", "state": "Idle", "health": "Maintenance", "worker_host": "w1"},
                                      {"hostname": "q2", "state": "Running", "health": ")" +
           health + R"(", "worker_host": ")" + worker + R"("}]})";
  };
  // LAVA schedules onto Good and Unknown devices of online, active workers,
  // busy ones included (they will be free).
  EXPECT_EQ(lava::why_no_device_can_run(devices("Good", "w1"), workers), std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run(devices("Unknown", "w1"), workers), std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run(devices("Bad", "w1"), workers), "q1 Maintenance, q2 Bad");
  EXPECT_EQ(lava::why_no_device_can_run(devices("Looping", "w1"), workers), "q1 Maintenance, q2 Looping");
  EXPECT_EQ(lava::why_no_device_can_run(devices("Good", "w2"), workers), "q1 Maintenance, q2 Good on w2 Offline/Active");
  // What kbench cannot see is not held against the device: a worker missing
  // from the listing, an unreadable listing of workers.
  EXPECT_EQ(lava::why_no_device_can_run(devices("Good", "w9"), workers), std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run(devices("Good", "w2"), "<html>"), std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run(devices("Retired", "w2"), "<html>"), "q1 Maintenance, q2 Retired");
  // Only a type seen whole is reported: devices on a later page may be up.
  EXPECT_EQ(lava::why_no_device_can_run(
                R"({"count": 3, "results": [{"hostname": "q1", "health": "Retired", "worker_host": "w1"}]})", workers),
            std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run("<html>", workers), std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run(R"({"count": 0, "results": []})", workers), "the type has no device");
}

// LAVA runs a job only on a device that has every tag the job asks for; the
// devices listing names tags by id, api/v0.2/tags/ says which is which.
TEST(LavaDevices, ADeviceWithoutATagTheJobAsksForCannotRunIt) {
  const std::string workers = R"({"count": 1, "results": [{"hostname": "w1", "state": "Online", "health": "Active"}]})";
  const std::string tags = R"({"count": 3, "results": [{"id": 1, "name": "big-ram", "description": null},
                                                       {"id": 2, "name": "usb", "description": null},
                                                       {"id": 3, "name": "nvme", "description": null}]})";
  auto devices = [](const std::string& q2_tags) {
    return R"({"count": 2, "results": [{"hostname": "q1", "health": "Maintenance", "worker_host": "w1", "tags": [1, 2]},
                                      {"hostname": "q2", "health": "Good", "worker_host": "w1", "tags": )" +
           q2_tags + "}]}";
  };
  const std::vector<std::string> wanted = {"big-ram", "usb"};
  EXPECT_EQ(lava::why_no_device_can_run(devices("[2, 1, 3]"), workers, wanted, tags), std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run(devices("[2]"), workers, wanted, tags),
            "q1 Maintenance, q2 Good without tag big-ram");
  EXPECT_EQ(lava::why_no_device_can_run(devices("[]"), workers, wanted, tags),
            "q1 Maintenance, q2 Good without tag big-ram, usb");
  // No tags asked for: a device's tags do not matter.
  EXPECT_EQ(lava::why_no_device_can_run(devices("[]"), workers, {}, tags), std::nullopt);
  // What kbench cannot read is not held against the device: the tags
  // listing unreadable or not whole, a tag id it does not list.
  EXPECT_EQ(lava::why_no_device_can_run(devices("[]"), workers, wanted, "<html>"), std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run(devices("[]"), workers, wanted,
                                        R"({"count": 9, "results": [{"id": 1, "name": "big-ram"}]})"),
            std::nullopt);
  EXPECT_EQ(lava::why_no_device_can_run(devices("[7]"), workers, wanted, tags), std::nullopt);
}

TEST(LavaDevices, SaysHowManyCouldTakeAJobAndEachOnesStateAndHealth) {
  EXPECT_EQ(lava::describe_devices(R"({"count": 2, "results": [
                {"hostname": "q1", "state": "Idle", "health": "Maintenance"},
                {"hostname": "q2", "state": "Running", "health": "Good"}]})"),
            "2 devices, 0 Idle and Good: q1 Idle/Maintenance, q2 Running/Good");
  EXPECT_EQ(lava::describe_devices(R"({"count": 1, "results": [{"hostname": "q1", "state": "Idle", "health": "Good"}]})"),
            "1 device, 1 Idle and Good: q1 Idle/Good");
  nlohmann::json many = {{"count", 30}, {"results", nlohmann::json::array()}};
  for (int i = 0; i < 20; ++i) {
    std::string host = "b";  // not "b" + to_string(i), which GCC 12 takes for an overflowing memcpy
    host += std::to_string(i);
    many["results"].push_back({{"hostname", host}, {"state", "Idle"}, {"health", "Retired"}});
  }
  EXPECT_EQ(lava::describe_devices(many.dump()),
            "30 devices, 0 Idle and Good of the first 20: b0 Idle/Retired, b1 Idle/Retired, b2 Idle/Retired, "
            "b3 Idle/Retired, b4 Idle/Retired, ...");
  EXPECT_EQ(lava::describe_devices(R"({"count": 0, "results": []})"), "no device");
  EXPECT_EQ(lava::describe_devices("<html>"), "its devices not listed");
}

TEST_F(LavaConnection, ThePlanRefusesThemWithItsLine) {
  EXPECT_EQ(error_of([] {
              plan::parse_plan("sut: {connection: {method: lava, params: {url: x, token_file: t, device_type: q}}}\n"
                               "benchmarks: [a/b]\n",
                               "p.yaml");
            }),
            "p.yaml:1: sut.connection.params.url: expected an http:// or https:// URL, got 'x'");
}

TEST_F(LavaConnection, TheRelaySubmitsFollowsAndPassesOnTheVerifiedLines) {
  FakeLava lava;
  lava.log_ = log_entry("target", frame("KBS1", "init 6.12")) +
              log_entry("target", frame("KBO1", R"({"type":"fingerprint","data":{"kernel":"6.12"}})")) +
              log_entry("target", "[    3.0] noise") + log_entry("target", frame("KBE1", "a warning")) +
              log_entry("target", frame("KBX1", "0"));
  const Relayed relayed = relay_job(lava, {"mitigations=off"}, {{"poll_interval", "1"}});
  EXPECT_EQ(relayed.status, 0) << relayed.err;
  const auto fingerprint = nlohmann::json::parse(relayed.out);
  EXPECT_EQ(fingerprint["data"]["kernel"], "6.12");
  EXPECT_EQ(fingerprint["data"]["lava_job_id"], 7);
  EXPECT_EQ(fingerprint["data"]["lava_device"], "qemu-01");
  EXPECT_EQ(fingerprint["data"]["lava_job_url"], lava.url() + "scheduler/job/7");
  EXPECT_EQ(relayed.err, "kbench: lava: job 7: init 6.12 reached /init on qemu-01 (" + lava.url() +
                            "scheduler/job/7)\na warning\nkbench: lava: job 7 Finished/Complete on qemu-01: the "
                            "agent exited with status 0 (" +
                            lava.url() + "scheduler/job/7)\n");
  EXPECT_EQ(lava.authorization_, "Token abc123");
  EXPECT_THAT(lava.definition_, HasSubstr("mitigations=off"));
}

// The runner keeps a relay's last line with the benchmark's outcome: a
// failed agent's run, too, ends with its job's.
TEST_F(LavaConnection, AnAgentThatFailsInACompleteJobEndsWithALineNamingTheJob) {
  FakeLava lava;
  lava.log_ = log_entry("target", frame("KBS1", "init 6.12")) + log_entry("target", frame("KBE1", "it broke")) +
              log_entry("target", frame("KBX1", "3"));
  Relayed relayed = relay_job(lava);
  EXPECT_EQ(relayed.status, 3);
  EXPECT_THAT(relayed.err, ::testing::EndsWith("\nit broke\nkbench: lava: job 7 Finished/Complete on qemu-01: the "
                                               "agent exited with status 3 (" +
                                               lava.url() + "scheduler/job/7)\n"));
  // A refusal of its input is quoted from the agent's own last line.
  lava.log_ = log_entry("target", frame("KBS1", "init 6.12")) +
              log_entry("target", frame("KBE1", "kbench-agent: no such benchmark")) +
              log_entry("target", frame("KBX1", "2"));
  relayed = relay_job(lava);
  EXPECT_EQ(relayed.status, 2);
  EXPECT_THAT(relayed.err, ::testing::EndsWith("\nkbench-agent: no such benchmark\n"));
}

TEST_F(LavaConnection, AnIncompleteJobIsOneLineNamingItsJobAndReason) {
  FakeLava lava;
  lava.job_["health"] = "Incomplete";
  lava.log_ = log_entry("target", "qemu: linux kernel too old to load a ram disk") +
              log_entry("exception", "Connection closed") + log_entry("error", "InfrastructureError: generic");
  const Relayed relayed = relay_job(lava);
  EXPECT_EQ(relayed.status, 1);
  EXPECT_EQ(relayed.out, "");
  EXPECT_EQ(relayed.err, "kbench: lava: job 7 Finished/Incomplete: the agent never started: Connection closed; "
                         "last console line: qemu: linux kernel too old to load a ram disk (" +
                             lava.url() + "scheduler/job/7)\n");
}

TEST_F(LavaConnection, ACorruptedFrameFailsTheRelayEvenInACompleteJob) {
  FakeLava lava;
  std::string corrupted = frame("KBO1", R"({"type":"sample"})");
  corrupted[20] = 'X';
  lava.log_ = log_entry("target", frame("KBS1", "init 6.12")) + log_entry("target", corrupted) +
              log_entry("target", frame("KBX1", "0"));
  const Relayed relayed = relay_job(lava);
  EXPECT_EQ(relayed.status, 1);
  EXPECT_EQ(relayed.out, "");
  EXPECT_THAT(relayed.err, HasSubstr("dropped a result line whose checksum does not match"));
  EXPECT_THAT(relayed.err, HasSubstr("kbench: lava: job 7 Finished/Complete: 1 result line(s) failed their checksum"));
}

// lava-run's closing results line for a job that failed with `type`.
std::string job_result(const std::string& type, const std::string& message) {
  return "- {\"dt\": \"2026-12-05T11:20:09\", \"lvl\": \"results\", \"msg\": {\"case\": \"job\", \"definition\": "
         "\"lava\", \"error_msg\": \"" + message + "\", \"error_type\": \"" + type + "\", \"result\": \"fail\"}}\n";
}

TEST(LavaLog, TakesHowLavaClassedTheJobsFailure) {
  const std::string log = log_entry("exception", "Connection closed") +
                          "- {\"dt\": \"2026-12-05T11:20:08\", \"lvl\": \"results\", \"msg\": {\"case\": "
                          "\"validate\", \"definition\": \"lava\", \"result\": \"pass\"}}\n" +
                          job_result("Infrastructure", "Connection closed");
  const lava::LogContents contents = lava::read_job_log(log);
  EXPECT_EQ(contents.job_error_type, "Infrastructure");
  EXPECT_THAT(contents.errors, ::testing::ElementsAre("Connection closed"));
  EXPECT_EQ(lava::read_job_log(log_entry("exception", "x")).job_error_type, "");
}

// A device or dispatcher failing before the agent started is the lab's
// failure: the job goes in again, up to infra_retries times; when each try
// fails so, the relay's status says it was the lab's.
TEST_F(LavaConnection, AJobTheLabFailsBeforeTheAgentStartsIsSubmittedAgain) {
  FakeLava lava;
  lava.job_["health"] = "Incomplete";
  lava.log_ = log_entry("error", "ConnectionClosedError: connection closed") +
              job_result("Infrastructure", "Connection closed");
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}, {"infra_retries", "2"}});
  EXPECT_EQ(relayed.status, kExitInfrastructure);
  EXPECT_EQ(lava.submits_, 3);
  EXPECT_EQ(relayed.out, "");
  EXPECT_THAT(relayed.err, HasSubstr("kbench: lava: job 7 Finished/Incomplete: LAVA ended it on an Infrastructure "
                                     "error before the agent started: ConnectionClosedError: connection closed; "
                                     "submitting the job again (retry 1 of 2)"));
  EXPECT_THAT(relayed.err, HasSubstr("(retry 2 of 2)"));
  EXPECT_THAT(relayed.err, HasSubstr("kbench: lava: job 7 Finished/Incomplete: the agent never started: "
                                     "ConnectionClosedError: connection closed (LAVA: Infrastructure error); after "
                                     "the lab failed job 7: ConnectionClosedError: connection closed; job 7: "));
}

TEST_F(LavaConnection, AJobThatRunsAfterTheLabFailedItOnceSaysSo) {
  FakeLava lava;
  lava.first_log_ = job_result("Infrastructure", "Connection closed");
  lava.log_ = fingerprint_log();
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}});
  EXPECT_EQ(relayed.status, 0) << relayed.err;
  EXPECT_EQ(lava.submits_, 2);
  EXPECT_EQ(nlohmann::json::parse(relayed.out)["data"]["kernel"], "6.12");
  EXPECT_THAT(relayed.err, HasSubstr("(retry 1 of 1)"));
  EXPECT_THAT(relayed.err, HasSubstr("the agent exited with status 0; after the lab failed job 7"));
}

// A kernel that panics is the job's failure (LAVA's error type Job): never
// submitted again, and the relay's status is a plain failure.
TEST_F(LavaConnection, AJobTheKernelFailsIsNotSubmittedAgain) {
  FakeLava lava;
  lava.job_["health"] = "Incomplete";
  lava.log_ = log_entry("target", "Kernel panic - not syncing: VFS: Unable to mount root fs") +
              log_entry("error", "login-action kernel 'panic'") + job_result("Job", "login-action kernel 'panic'");
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}, {"infra_retries", "3"}});
  EXPECT_EQ(relayed.status, 1);
  EXPECT_EQ(lava.submits_, 1);
  EXPECT_THAT(relayed.err, HasSubstr("the agent never started: login-action kernel 'panic'; last console line: "
                                     "Kernel panic - not syncing: VFS: Unable to mount root fs (LAVA: Job error)"));
  EXPECT_EQ(relayed.err.find("again"), std::string::npos) << relayed.err;
}

// The job never leaves the queue here: the relay gives up on it after
// queue_timeout, cancels it, and says what LAVA says of the device type.
// A busy farm is not the kernel's failure: the lab's status (75).
TEST_F(LavaConnection, AJobLeftInTheQueueIsCanceledAfterQueueTimeout) {
  FakeLava lava;
  lava.job_["state"] = "Submitted";
  lava.job_["health"] = "Unknown";
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}, {"queue_timeout", "1"}});
  EXPECT_EQ(relayed.status, kExitInfrastructure);
  EXPECT_EQ(relayed.out, "");
  EXPECT_EQ(relayed.err, "kbench: lava: job 7 waited in the queue for more than 1s (device type qemu: 1 device, "
                         "0 Idle and Good: q1 Idle/Maintenance) (" +
                             lava.url() + "scheduler/job/7)\n");
  EXPECT_EQ(lava.cancels_, 1);
  EXPECT_EQ(lava.devices_query_, "qemu");
}

// The log is followed while the job runs: the agent's record is passed on
// once, whole, though the first read cut its line in two (LAVA indexes a
// line before it has written all of it), and the next read starts at the
// first line not yet taken.
TEST_F(LavaConnection, TheLogIsFollowedWhileTheJobRuns) {
  FakeLava lava;
  const std::string started = log_entry("target", frame("KBS1", "init 6.12"));
  const std::string record = log_entry("target", frame("KBO1", R"({"type":"fingerprint","data":{"kernel":"6.12"}})"));
  const std::string exited = log_entry("target", frame("KBX1", "0"));
  lava.growing_log_ = {started + record.substr(0, record.size() / 2), started + record + exited};
  lava.running_polls_ = 1;
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}});
  EXPECT_EQ(relayed.status, 0) << relayed.err;
  EXPECT_EQ(lava.log_starts_, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(nlohmann::json::parse(relayed.out)["data"]["kernel"], "6.12");
  EXPECT_EQ(std::count(relayed.out.begin(), relayed.out.end(), '\n'), 1) << relayed.out;
  EXPECT_THAT(relayed.err, StartsWith("kbench: lava: job 7: init 6.12 reached /init on qemu-01"));
  EXPECT_THAT(relayed.err, HasSubstr("the agent exited with status 0"));
}

// A kernel that hangs while booting: the job runs, its console printed
// and then nothing more. After boot_silence_timeout the relay cancels the
// job and fails as a failed boot, naming the last console line, instead of
// waiting out LAVA's boot timeout.
TEST_F(LavaConnection, AJobWhoseLogFallsSilentBeforeTheAgentIsAFailedBoot) {
  FakeLava lava;
  lava.job_["state"] = "Running";
  lava.log_ = log_entry("target", "[    2.100000] Freeing unused kernel image memory: 2048K");
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}, {"boot_silence_timeout", "1"}});
  EXPECT_EQ(relayed.status, 1);
  EXPECT_THAT(relayed.err, StartsWith("kbench: lava: job 7: its log gained no line for "));
  EXPECT_THAT(relayed.err, HasSubstr("s before the agent started; last console line: [    2.100000] Freeing unused "
                                     "kernel image memory: 2048K (" + lava.url() + "scheduler/job/7)\n"));
  EXPECT_EQ(lava.cancels_, 1);
}

// Silent with no console line at all (a dispatcher stuck before the boot):
// the lab's failure, not the kernel's.
TEST_F(LavaConnection, AJobSilentBeforeAnyConsoleLineIsTheLabs) {
  FakeLava lava;
  lava.job_["state"] = "Running";
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}, {"boot_silence_timeout", "1"}});
  EXPECT_EQ(relayed.status, kExitInfrastructure);
  EXPECT_THAT(relayed.err, HasSubstr("before the agent started and the console printed nothing: the lab's failure"));
  EXPECT_EQ(lava.cancels_, 1);
}

// Once the agent has started, a silence is a benchmark's (which writes its
// records at the end of a repeat): the job is followed to its end.
TEST_F(LavaConnection, ASilenceAfterTheAgentStartedIsNotABootHang) {
  FakeLava lava;
  const std::string started = log_entry("target", frame("KBS1", "init 6.12"));
  lava.growing_log_ = {started, started, started, started, fingerprint_log()};
  lava.running_polls_ = 4;
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}, {"boot_silence_timeout", "1"}});
  EXPECT_EQ(relayed.status, 0) << relayed.err;
  EXPECT_EQ(lava.cancels_, 0);
  EXPECT_EQ(nlohmann::json::parse(relayed.out)["data"]["kernel"], "6.12");
}

// Every device of the type in Maintenance: the relay does not wait for the
// queue's hour; after offline_timeout it cancels the job and fails as the lab.
TEST_F(LavaConnection, AJobNoDeviceCanRunIsCanceledAfterOfflineTimeout) {
  FakeLava lava;
  lava.job_["state"] = "Submitted";
  lava.job_["health"] = "Unknown";
  const Relayed relayed =
      relay_job(lava, {}, {{"poll_interval", "1"}, {"offline_timeout", "0"}, {"queue_timeout", "1000000"}});
  EXPECT_EQ(relayed.status, kExitInfrastructure);
  EXPECT_EQ(relayed.out, "");
  EXPECT_EQ(relayed.err, "kbench: lava: job 7 waited 0s with no device of type qemu able to run it (q1 Maintenance) (" +
                             lava.url() + "scheduler/job/7)\n");
  EXPECT_EQ(lava.cancels_, 1);
  EXPECT_EQ(lava.devices_query_, "qemu");
}

// A healthy device on a worker that is online: the job waits for it (here
// until queue_timeout), whatever offline_timeout says.
TEST_F(LavaConnection, AJobADeviceCanRunWaitsForIt) {
  FakeLava lava;
  lava.job_["state"] = "Submitted";
  lava.job_["health"] = "Unknown";
  lava.devices_ = R"({"count": 1, "results": [{"hostname": "q1", "state": "Running", "health": "Good",
                                                "worker_host": "w1"}]})";
  const Relayed relayed =
      relay_job(lava, {}, {{"poll_interval", "1"}, {"offline_timeout", "0"}, {"queue_timeout", "1"}});
  EXPECT_EQ(relayed.status, kExitInfrastructure);
  EXPECT_THAT(relayed.err, HasSubstr("waited in the queue for more than 1s"));
  EXPECT_THAT(relayed.err, HasSubstr("1 device, 0 Idle and Good: q1 Running/Good"));
}

// A job queued while its only device is in Maintenance, for less than
// offline_timeout: the devices are listed once, not at each of its polls
// (the next listing is due 30 s later), and the job, once it leaves the
// queue, runs as any other.
TEST_F(LavaConnection, AQueuedJobListsItsDevicesLessOftenThanItPolls) {
  FakeLava lava;
  lava.log_ = fingerprint_log();
  lava.queued_polls_ = 6;
  const Relayed relayed = relay_job(lava, {}, {{"poll_interval", "1"}});
  EXPECT_EQ(relayed.status, 0);
  EXPECT_EQ(lava.queued_polls_, 0);
  EXPECT_EQ(lava.cancels_, 0);
  // 1 unless six polls a second apart took a minute.
  EXPECT_GE(lava.device_listings_, 1);
  EXPECT_LE(lava.device_listings_, 2);
}

// With a run label (a plan's session) the job's name carries a digest of
// the label and the agent's arguments. Resuming, the connection first asks
// LAVA once for this swprofile's kbench jobs, newest first; none here: it
// submits.
TEST_F(LavaConnection, AResumedConnectionLooksForItsJobsBeforeSubmitting) {
  FakeLava lava;
  lava.log_ = fingerprint_log();
  auto connection = connect(lava, {{"poll_interval", "1"}});
  connection->set_run_label("store\nplan\nA\n0", /*resuming=*/true);
  ASSERT_EQ(relay_through(*connection).status, 0);
  ASSERT_EQ(relay_through(*connection).status, 0);
  EXPECT_EQ(lava.submits_, 2);
  EXPECT_EQ(lava.lookups_, 1);
  EXPECT_EQ(lava.looked_for_, "kbench A ");
  EXPECT_EQ(lava.looked_in_order_, "-id");
  const std::string name =
      fmt::format("kbench A fingerprint [{:016x}]", lava::fnv1a64("store\nplan\nA\n0\nfingerprint"));
  EXPECT_THAT(lava.definition_, HasSubstr("job_name: '" + name + "'"));
  // Not resuming, or without a label: nothing is looked for.
  auto fresh = connect(lava, {{"poll_interval", "1"}});
  fresh->set_run_label("store\nplan\nA\n0", /*resuming=*/false);
  ASSERT_EQ(relay_through(*fresh).status, 0);
  EXPECT_THAT(lava.definition_, HasSubstr("job_name: '" + name + "'"));
  relay_job(lava);
  EXPECT_EQ(lava.lookups_, 1);
  EXPECT_EQ(lava.submits_, 4);
}

// kbench was killed while its job ran: the resumed plan's relay follows that
// job (finished since, here) and passes its results on, submitting nothing;
// the same run again is a new job.
TEST_F(LavaConnection, AJobAStoppedKbenchLeftIsFollowedOnceNotSubmittedAgain) {
  FakeLava lava;
  const std::string name = fmt::format("kbench A fingerprint [{:016x}]", lava::fnv1a64("a session\nfingerprint"));
  lava.going_ = R"({"count": 3, "results": [{"id": 8, "description": "kbench A other", "state": "Running"},)"
                R"( {"id": 7, "description": ")" + name + R"(", "state": "Running", "health": "Unknown"},)"
                R"( {"id": 5, "description": ")" + name + R"(", "state": "Finished", "health": "Incomplete"}]})";
  lava.log_ = fingerprint_log();
  auto connection = connect(lava, {{"poll_interval", "1"}});
  connection->set_run_label("a session", /*resuming=*/true);
  const Relayed relayed = relay_through(*connection);
  EXPECT_EQ(relayed.status, 0) << relayed.err;
  EXPECT_EQ(lava.submits_, 0);
  EXPECT_EQ(nlohmann::json::parse(relayed.out)["data"]["kernel"], "6.12");
  EXPECT_THAT(relayed.err, StartsWith("kbench: lava: following job 7, submitted before kbench was stopped (" +
                                      lava.url() + "scheduler/job/7)\n"));
  // The run's last line, which the runner keeps with the outcome, says so.
  EXPECT_THAT(relayed.err, HasSubstr("the agent exited with status 0; followed after the kbench that submitted it "
                                     "was stopped (" + lava.url() + "scheduler/job/7)\n"));
  ASSERT_EQ(relay_through(*connection).status, 0);
  EXPECT_EQ(lava.submits_, 1);
}

// A job that finished Complete before the resumed kbench looked is taken as
// one still going would be; a name whose newest job was Canceled (by the
// interrupt that stopped kbench) or ended Incomplete is submitted again, even
// when an older job of it completed.
TEST_F(LavaConnection, AResumedSessionTakesAJobThatCompletedButNotOneCanceled) {
  const std::string label = "a session";
  const auto name_of = [&](const std::string& args) {
    return fmt::format("kbench A {} [{:016x}]", args, lava::fnv1a64(label + "\n" + args));
  };
  const auto job = [](long id, const std::string& name, const char* state, const char* health) {
    return nlohmann::json{{"id", id}, {"description", name}, {"state", state}, {"health", health}};
  };
  {
    FakeLava lava;
    lava.going_ = nlohmann::json{{"results", {job(7, name_of("fingerprint"), "Finished", "Complete")}}}.dump();
    lava.log_ = fingerprint_log();
    auto connection = connect(lava, {{"poll_interval", "1"}});
    connection->set_run_label(label, /*resuming=*/true);
    const Relayed relayed = relay_through(*connection);
    EXPECT_EQ(relayed.status, 0) << relayed.err;
    EXPECT_EQ(lava.submits_, 0);
    EXPECT_EQ(nlohmann::json::parse(relayed.out)["data"]["kernel"], "6.12");
    EXPECT_THAT(relayed.err, StartsWith("kbench: lava: following job 7, submitted before kbench was stopped"));
  }
  for (const char* health : {"Canceled", "Incomplete"}) {
    FakeLava lava;
    lava.going_ = nlohmann::json{{"results",
                                  {job(7, name_of("fingerprint"), "Finished", health),
                                   job(5, name_of("fingerprint"), "Finished", "Complete")}}}
                      .dump();
    lava.log_ = fingerprint_log();
    auto connection = connect(lava, {{"poll_interval", "1"}});
    connection->set_run_label(label, /*resuming=*/true);
    const Relayed relayed = relay_through(*connection);
    EXPECT_EQ(relayed.status, 0) << health << ": " << relayed.err;
    EXPECT_EQ(lava.submits_, 1) << health;
    EXPECT_THAT(relayed.err, Not(HasSubstr("following job"))) << health;
  }
}

TEST(LavaJobName, DigestIsStableAcrossRuns) {
  // FNV-1a's published test vectors: the digest must not depend on the build.
  EXPECT_EQ(lava::fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(lava::fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(lava::fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

// `plan check` asks the server: the device type must exist and the token
// be accepted; a server that does not answer is said, not held against the
// plan.
TEST_F(LavaConnection, PlanCheckAsksTheServerForTheDeviceTypeAndTheToken) {
  FakeLava lava;
  const Method& method = MethodRegistry::instance().get("lava");
  ASSERT_TRUE(method.check_online);
  Params params = params_for(lava);
  Method::OnlineCheck check = method.check_online(params);
  EXPECT_FALSE(check.problem);
  EXPECT_EQ(check.note, "LAVA server " + lava.url() + ": device type qemu: 1 device, 0 Idle and Good: q1 Idle/Maintenance");

  params["device_type"] = "qemu-typo";
  check = method.check_online(params);
  ASSERT_TRUE(check.problem);
  EXPECT_EQ(check.problem->key, "device_type");
  EXPECT_EQ(check.problem->expected,
            "a device type of the LAVA server at " + lava.url() + ", got 'qemu-typo' (it has: qemu)");

  params["device_type"] = "qemu";
  std::ofstream(token_) << "wrong\n";
  check = method.check_online(params);
  ASSERT_TRUE(check.problem);
  EXPECT_EQ(check.problem->key, "token_file");
  EXPECT_EQ(check.problem->expected, "a file holding a token the LAVA server at " + lava.url() + " accepts, got " +
                                         token_ + " (HTTP 401: {\"detail\":\"Invalid token.\"})");

  check = method.check_online(good());  // port 9: nothing listens
  EXPECT_FALSE(check.problem);
  EXPECT_THAT(check.note, StartsWith("LAVA server http://127.0.0.1:9/ not reached ("));
  EXPECT_THAT(check.note, ::testing::EndsWith("): device type qemu not checked"));
}

// The URL of `image` ("kernel", "initrd") in a job definition.
std::string image_url(const std::string& definition, const std::string& image) {
  const auto at = definition.find("      " + image + ":\n");
  const auto url = definition.find("url: '", at);
  if (at == std::string::npos || url == std::string::npos) return "";
  const auto start = url + 6;
  return definition.substr(start, definition.find('\'', start) - start);
}

// serve_files: the dispatcher gets the kernel and the initramfs from
// kbench's own HTTP server, which lasts as long as the connection.
TEST_F(LavaConnection, ServeFilesPutsHttpUrlsOfItsOwnServerIntoTheJob) {
  FakeLava lava;
  lava.log_ = fingerprint_log();
  // Made here, not by relay_job: the files are fetched after the job.
  auto connection = connect(lava, {{"serve_files", "127.0.0.1:0"}});
  ASSERT_EQ(relay_through(*connection).status, 0);
  const std::string kernel_url = image_url(lava.definition_, "kernel");
  const std::string initrd_url = image_url(lava.definition_, "initrd");
  ASSERT_THAT(kernel_url, StartsWith("http://127.0.0.1:")) << lava.definition_;
  ASSERT_THAT(initrd_url, StartsWith(kernel_url.substr(0, kernel_url.rfind('/') + 1)));
  const auto origin_end = kernel_url.find('/', 7);
  httplib::Client files(kernel_url.substr(0, origin_end));
  const auto image = files.Get(kernel_url.substr(origin_end));
  ASSERT_TRUE(image);
  EXPECT_EQ(image->status, 200);
  EXPECT_EQ(image->body, "not a kernel");
  const auto initrd = files.Get(initrd_url.substr(origin_end));
  ASSERT_TRUE(initrd);
  EXPECT_EQ(initrd->status, 200);
  EXPECT_THAT(initrd->body, StartsWith("070701")) << "a newc cpio archive";
  // Nothing else: the path's first part is a secret of the connection's.
  const auto guessed = files.Get("/vmlinuz");
  ASSERT_TRUE(guessed);
  EXPECT_EQ(guessed->status, 404);

  relay_job(lava, {}, {{"serve_files", "127.0.0.1:0"}, {"files_host", "farm-gateway.example"}});
  EXPECT_THAT(image_url(lava.definition_, "kernel"), StartsWith("http://farm-gateway.example:"));
  EXPECT_EQ(image_url(lava.definition_, "dtb"), "") << "no device tree without the swprofile's";
}

// boot_method u-boot: the initramfs is served as U-Boot's ramdisk image of
// kbench's archive, for the device's architecture (this machine's here).
TEST_F(LavaConnection, ABoardThatBootsByUBootGetsTheInitramfsWithUBootsHeader) {
  FakeLava lava;
  lava.log_ = fingerprint_log();
  auto connection = connect(lava, {{"serve_files", "127.0.0.1:0"}, {"boot_method", "u-boot"}});
  ASSERT_EQ(relay_through(*connection).status, 0);
  EXPECT_THAT(lava.definition_, HasSubstr("    to: tftp\n"));
  EXPECT_THAT(lava.definition_, HasSubstr("    method: u-boot\n"));
  const auto at = lava.definition_.find("    ramdisk:\n      url: '");
  ASSERT_NE(at, std::string::npos) << lava.definition_;
  const auto start = at + std::string("    ramdisk:\n      url: '").size();
  const std::string url = lava.definition_.substr(start, lava.definition_.find('\'', start) - start);
  ASSERT_THAT(url, StartsWith("http://127.0.0.1:"));
  const auto origin_end = url.find('/', 7);
  httplib::Client files(url.substr(0, origin_end));
  const auto ramdisk = files.Get(url.substr(origin_end));
  ASSERT_TRUE(ramdisk);
  ASSERT_EQ(ramdisk->status, 200);
  ASSERT_GT(ramdisk->body.size(), 64u);
  EXPECT_EQ(ramdisk->body.substr(0, 4), std::string("\x27\x05\x19\x56", 4));
  EXPECT_EQ(static_cast<int>(ramdisk->body[29]), 24) << "U-Boot's code for x86_64";
  EXPECT_EQ(ramdisk->body.substr(64, 6), "070701") << "a newc cpio archive after the header";
}

// kernel: {image, dtb}: the dispatcher fetches the device tree from beside
// the kernel, as it does the kernel, or reads it as a file:// URL.
TEST_F(LavaConnection, TheSwprofilesDeviceTreeIsServedBesideTheKernel) {
  FakeLava lava;
  lava.log_ = fingerprint_log();
  const std::string dtb = (dir_ / "board.dtb").string();
  std::ofstream(dtb, std::ios::binary) << std::string("\xd0\x0d\xfe\xed\0\0\0\x08", 8);
  SwprofileKernel kernel = swprofile();
  kernel.dtb = dtb;
  auto connection = make_connection("lava", params_for(lava, {{"serve_files", "127.0.0.1:0"}}), &kernel);
  ASSERT_EQ(relay_through(*connection).status, 0);
  EXPECT_THAT(lava.definition_, HasSubstr("      dtb:\n        image_arg: '-dtb {dtb}'\n"));
  const std::string kernel_url = image_url(lava.definition_, "kernel");
  const std::string dtb_url = image_url(lava.definition_, "dtb");
  ASSERT_EQ(dtb_url, kernel_url.substr(0, kernel_url.rfind('/') + 1) + "device-tree.dtb") << lava.definition_;
  const auto origin_end = dtb_url.find('/', 7);
  httplib::Client files(dtb_url.substr(0, origin_end));
  const auto served = files.Get(dtb_url.substr(origin_end));
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(served->body, std::string("\xd0\x0d\xfe\xed\0\0\0\x08", 8));

  auto direct = make_connection("lava", params_for(lava), &kernel);
  ASSERT_EQ(relay_through(*direct).status, 0);
  EXPECT_EQ(image_url(lava.definition_, "dtb"), "file://" + dtb);

  kernel.dtb = kernel_;  // not a device tree
  EXPECT_EQ(error_of([&] { make_connection("lava", good(), &kernel); }),
            "swprofile kernel.dtb " + kernel_ + ": expected a flattened device tree (it starts with 0x6e6f7420, not "
            "the device tree magic 0xd00dfeed)");
}

}  // namespace
}  // namespace kbench::sut
