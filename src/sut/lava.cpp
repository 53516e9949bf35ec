// The agent inside a kernel a LAVA board farm boots. Each start_agent is one
// LAVA job: deploy to tmpfs the swprofile's kernel and kbench's initramfs
// (the qemu connection's, src/sut/initramfs.h), boot them; /init runs the
// agent and writes its framed lines on the console, the only channel a
// LAVA device is sure to have, then starts a shell whose prompt ends the
// boot action and so the job. A relay process submits the job through the
// REST API, follows it, reads its log and passes on only the frames whose
// checksum matches: kernel messages and LAVA's own lines never reach the
// store.
#include "sut/lava.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "assets/sut/init_end_shell.sh.h"
#include "assets/sut/init_mounts.sh.h"
#include "assets/sut/init_results_console.sh.h"
#include "assets/sut/init_run.sh.h"
#include "common/device_tree.h"
#include "common/errors.h"
#include "common/records.h"
#include "common/temp_directory.h"
#include "process/process.h"
#include "sut/connection.h"
#include "sut/method.h"
#include "sut/uboot_image.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::sut {

namespace lava {

namespace {

// YAML single-quoted: only the quote itself is escaped, by doubling it.
std::string single_quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string debian_arch(const std::string& machine) { return machine == "aarch64" ? "arm64" : "amd64"; }

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// The double-quoted value of `"key": "..."` in one log line; nullopt when
// the key is missing or its value is not a double-quoted string.
std::optional<std::string> quoted_value(const std::string& line, const std::string& key) {
  const std::string opening = "\"" + key + "\": \"";
  const auto at = line.find(opening);
  if (at == std::string::npos) return std::nullopt;
  const auto start = at + opening.size();
  std::size_t end = start;
  while (end < line.size() && line[end] != '"') end += line[end] == '\\' ? 2 : 1;
  if (end >= line.size()) return std::nullopt;
  return yaml_unquote(line.substr(start, end - start));
}

}  // namespace

std::string yaml_unquote(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char e = text[++i];
    auto hex = [&](std::size_t digits) {
      const std::string code = text.substr(i + 1, digits);
      i += code.size();
      append_utf8(out, static_cast<std::uint32_t>(std::strtoul(code.c_str(), nullptr, 16)));
    };
    switch (e) {
      case '0': out += '\0'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'v': out += '\v'; break;
      case 'f': out += '\f'; break;
      case 'r': out += '\r'; break;
      case 'e': out += '\x1b'; break;
      case 'N': append_utf8(out, 0x85); break;
      case '_': append_utf8(out, 0xA0); break;
      case 'L': append_utf8(out, 0x2028); break;
      case 'P': append_utf8(out, 0x2029); break;
      case 'x': hex(2); break;
      case 'u': hex(4); break;
      case 'U': hex(8); break;
      default: out += e; break;  // \" \\ \/ and a space
    }
  }
  return out;
}

std::string describe_devices(const std::string& devices_json) {
  const nlohmann::json page = nlohmann::json::parse(devices_json, nullptr, /*allow_exceptions=*/false);
  if (!page.is_object() || !page.contains("results") || !page["results"].is_array()) return "its devices not listed";
  const nlohmann::json& devices = page["results"];
  const std::size_t total = page.contains("count") && page["count"].is_number_unsigned()
                                ? page["count"].get<std::size_t>()
                                : devices.size();
  constexpr std::size_t kNamed = 5;
  std::size_t ready = 0;
  std::string named;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const nlohmann::json& device = devices[i];
    if (!device.is_object()) continue;
    const std::string state = device.value("state", "?");
    const std::string health = device.value("health", "?");
    if (state == "Idle" && health == "Good") ++ready;
    if (i < kNamed) {
      named += fmt::format("{}{} {}/{}", named.empty() ? "" : ", ", device.value("hostname", "?"), state, health);
    }
  }
  if (total == 0) return "no device";
  if (total > std::min(devices.size(), kNamed)) named += ", ...";
  return fmt::format("{} device{}, {} Idle and Good{}: {}", total, total == 1 ? "" : "s", ready,
                     total > devices.size() ? fmt::format(" of the first {}", devices.size()) : "", named);
}

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

namespace {

// The items of an api/v0.2 listing reply (its `results`); nullopt when the
// reply is not one, or does not show every item (they go on on a later page).
std::optional<nlohmann::json> whole_listing(const std::string& reply) {
  nlohmann::json page = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (!page.is_object() || !page.contains("results") || !page["results"].is_array()) return std::nullopt;
  if (page.contains("count") && page["count"].is_number_unsigned() &&
      page["count"].get<std::size_t>() > page["results"].size()) {
    return std::nullopt;
  }
  return std::move(page["results"]);
}

// Tag id -> name from api/v0.2/tags/; nullopt when the reply does not show
// every tag.
std::optional<std::map<long, std::string>> tag_names(const std::string& tags_json) {
  const std::optional<nlohmann::json> tags = whole_listing(tags_json);
  if (!tags) return std::nullopt;
  std::map<long, std::string> names;
  for (const auto& tag : *tags) {
    if (!tag.is_object() || !tag.contains("id") || !tag["id"].is_number_integer() || !tag.contains("name") ||
        !tag["name"].is_string()) {
      return std::nullopt;
    }
    names[tag["id"].get<long>()] = tag["name"].get<std::string>();
  }
  return names;
}

// The wanted tags `device` lacks, "" when it has them all or its tags cannot
// be read.
std::string missing_tags(const nlohmann::json& device, const std::vector<std::string>& wanted,
                         const std::map<long, std::string>& names) {
  if (!device.contains("tags") || !device["tags"].is_array()) return "";
  std::set<std::string> has;
  for (const auto& tag : device["tags"]) {
    if (tag.is_string()) {
      has.insert(tag.get<std::string>());
    } else if (tag.is_number_integer()) {
      const auto found = names.find(tag.get<long>());
      if (found == names.end()) return "";
      has.insert(found->second);
    } else {
      return "";
    }
  }
  std::string missing;
  for (const auto& tag : wanted) {
    if (!has.count(tag)) missing += (missing.empty() ? "" : ", ") + tag;
  }
  return missing;
}

}  // namespace

std::optional<std::string> why_no_device_can_run(const std::string& devices_json, const std::string& workers_json,
                                                 const std::vector<std::string>& wanted_tags,
                                                 const std::string& tags_json) {
  const std::optional<nlohmann::json> listed = whole_listing(devices_json);
  if (!listed) return std::nullopt;
  const nlohmann::json& devices = *listed;
  if (devices.empty()) return "the type has no device";
  // hostname -> "state/health" of the workers the listing shows.
  std::map<std::string, std::string> workers;
  const nlohmann::json worker_page = nlohmann::json::parse(workers_json, nullptr, /*allow_exceptions=*/false);
  const bool workers_known = worker_page.is_object() && worker_page.contains("results") &&
                             worker_page["results"].is_array();
  if (workers_known) {
    for (const auto& worker : worker_page["results"]) {
      if (!worker.is_object() || !worker.contains("hostname") || !worker["hostname"].is_string()) continue;
      workers[worker["hostname"].get<std::string>()] = worker.value("state", "?") + "/" + worker.value("health", "?");
    }
  }
  const std::optional<std::map<long, std::string>> names =
      wanted_tags.empty() ? std::nullopt : tag_names(tags_json);
  constexpr std::size_t kNamed = 5;
  std::string named;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const nlohmann::json& device = devices[i];
    if (!device.is_object()) return std::nullopt;
    const std::string health = device.value("health", "?");
    const std::string worker =
        device.contains("worker_host") && device["worker_host"].is_string() ? device["worker_host"].get<std::string>()
                                                                            : "";
    const auto found = workers.find(worker);
    // A worker the listing does not show is not held against its device.
    const bool worker_ready = !workers_known || found == workers.end() || found->second == "Online/Active";
    const std::string missing = names ? missing_tags(device, wanted_tags, *names) : "";
    if ((health == "Good" || health == "Unknown") && worker_ready && missing.empty()) return std::nullopt;
    if (i < kNamed) {
      std::string why = health;
      if (!worker_ready) why += fmt::format(" on {} {}", worker, found->second);
      if (!missing.empty()) why += " without tag " + missing;
      named += fmt::format("{}{} {}", named.empty() ? "" : ", ", device.value("hostname", "?"), why);
    }
  }
  if (devices.size() > kNamed) named += ", ...";
  return named;
}

LogContents read_job_log(const std::string& log_yaml) {
  LogContents contents;
  std::istringstream lines(log_yaml);
  for (std::string line; std::getline(lines, line);) {
    ++contents.lines;
    const auto level = quoted_value(line, "lvl");
    if (!level) continue;
    // lava-run's last word on the job, a mapping: {"case": "job",
    // "definition": "lava", "error_msg": ..., "error_type": ..., "result": ...}.
    if (*level == "results" && line.find("\"case\": \"job\"") != std::string::npos &&
        line.find("\"definition\": \"lava\"") != std::string::npos) {
      contents.job_error_type = quoted_value(line, "error_type").value_or("");
      continue;
    }
    auto message = quoted_value(line, "msg");
    if (!message) continue;
    if (*level == "target") {
      // LAVA's ShellLogger writes each '"' of the console as '\"' before the
      // line is dumped: every quote of the console line carries a backslash
      // in front that was not there.
      std::string console;
      for (const char c : *message) {
        if (c == '"' && !console.empty() && console.back() == '\\') console.pop_back();
        console += c;
      }
      if (auto frame = parse_result_frame(console)) {
        contents.frames.push_back(std::move(*frame));
      } else if (!console.empty()) {
        contents.last_console_line = console;
      }
    } else if (*level == "error" || *level == "exception") {
      contents.errors.push_back(*message);
    }
  }
  return contents;
}

namespace {

// The deploy and boot actions of a job whose board boots by U-Boot. The
// kernel's command line is the device type's (its console, root=/dev/ram0)
// with kbench's words in place of the device type's own extra ones: LAVA
// renders the job's context extra_kernel_args into the device's commands.
// The initramfs already carries U-Boot's header: LAVA neither unpacks it
// (its overlay would keep only the first of kbench's concatenated archives)
// nor adds modules.
std::string uboot_actions(const JobSpec& spec, const std::string& kernel_args, long run) {
  std::string yaml = fmt::format(
      "context:\n"
      "  extra_kernel_args: {}\n"
      "actions:\n"
      "- deploy:\n"
      "    to: tftp\n"
      "    timeout: {{seconds: {}}}\n"
      "    kernel:\n"
      "      url: {}\n"
      "      type: {}\n"
      "    ramdisk:\n"
      "      url: {}\n"
      "      header: u-boot\n"
      "      install_modules: false\n"
      "      install_overlay: false\n",
      single_quoted(kernel_args), spec.deploy_timeout.count(), single_quoted(spec.kernel_url), spec.kernel_type,
      single_quoted(spec.initramfs_url));
  if (!spec.dtb_url.empty()) yaml += "    dtb:\n      url: " + single_quoted(spec.dtb_url) + "\n";
  yaml += fmt::format(
      "- boot:\n"
      "    method: u-boot\n"
      "    commands: ramdisk\n"
      "    timeout: {{seconds: {}}}\n"
      "    prompts: [{}]\n",
      run, single_quoted(kDonePrompt));
  return yaml;
}

}  // namespace

std::string job_yaml(const JobSpec& spec) {
  const bool arm = spec.arch == "aarch64";
  std::string kernel_args = "rdinit=/init";
  for (const auto& word : spec.cmdline) kernel_args += " " + word;
  std::string yaml = fmt::format(
      "device_type: {}\n"
      "job_name: {}\n"
      "visibility: public\n"
      "priority: {}\n",
      spec.device_type, single_quoted(spec.job_name), spec.priority);
  if (!spec.tags.empty()) {
    yaml += "tags:\n";
    for (const auto& tag : spec.tags) yaml += "- " + single_quoted(tag) + "\n";
  }
  // The whole agent run happens inside the boot action (while LAVA waits
  // for the closing prompt), so the boot action, and every wait it makes,
  // may take the job's time less the deployment's.
  const long run = std::max<long>(60, (spec.job_timeout - spec.deploy_timeout).count());
  const std::string timeouts = fmt::format(
      "timeouts:\n"
      "  job: {{seconds: {}}}\n"
      "  action: {{seconds: {}}}\n"
      "  connection: {{seconds: {}}}\n",
      spec.job_timeout.count(), run, run);
  if (spec.boot == BootMethod::UBoot) return yaml + timeouts + uboot_actions(spec, kernel_args, run);
  // Kernel messages on the console could split a frame: only what init
  // writes matters there, and each frame carries its own checksum anyway.
  const std::string append = std::string("console=") + (arm ? "ttyAMA0" : "ttyS0,115200") + " " + kernel_args;
  std::string extra_options;
  for (const auto& option : spec.extra_options) {
    extra_options += (extra_options.empty() ? "  extra_options: [" : ", ") + single_quoted(option);
  }
  if (!extra_options.empty()) extra_options += "]\n";
  // Deployed like the kernel and the initrd: LAVA fetches it and puts its
  // path where image_arg says.
  const std::string dtb = spec.dtb_url.empty() ? std::string()
                                               : "      dtb:\n"
                                                 "        image_arg: '-dtb {dtb}'\n"
                                                 "        url: " +
                                                     single_quoted(spec.dtb_url) + "\n";
  yaml += timeouts + fmt::format(
      "context:\n"
      "  arch: {}\n"
      "{}"
      "actions:\n"
      "- deploy:\n"
      "    to: tmpfs\n"
      "    timeout: {{seconds: {}}}\n"
      "    images:\n"
      "      kernel:\n"
      "        image_arg: {}\n"
      "        url: {}\n"
      "      initrd:\n"
      "        image_arg: '-initrd {{initrd}}'\n"
      "        url: {}\n"
      "{}"
      "- boot:\n"
      "    method: qemu\n"
      "    media: tmpfs\n"
      "    timeout: {{seconds: {}}}\n"
      "    prompts: [{}]\n",
      debian_arch(spec.arch), extra_options, spec.deploy_timeout.count(),
      single_quoted("-kernel {kernel} -append \"" + append + "\""), single_quoted(spec.kernel_url),
      single_quoted(spec.initramfs_url), dtb, run, single_quoted(kDonePrompt));
  return yaml;
}

// The connection's own names stay in lava: a unity build compiles qemu.cpp's
// anonymous namespace, with names like these, into the same unit.
namespace {

namespace fs = std::filesystem;
using process::Clock;
using process::write_all;

constexpr const char* kLavaMethod = "lava";

// Set by SIGTERM in the relay: the runner stops an agent (its timeout, an
// interrupt) with SIGTERM and a grace period before SIGKILL, time enough to
// cancel the job, which would otherwise hold a device until its own timeout.
volatile sig_atomic_t relay_stop_requested = 0;

std::string host_machine() {
  utsname host{};
  uname(&host);
  return normalized_machine(host.machine);
}

const std::vector<ParamSpec>& lava_param_specs() {
  static const std::vector<ParamSpec> specs = {
      ParamSpec{"url", "", "", "the LAVA server, e.g. http://lava.example.org/ (its REST API is URL/api/v0.2/)"},
      ParamSpec{"token_file", "", "", "a file holding an API token of the submitting user"},
      ParamSpec{"device_type", "", "", "the device type the jobs ask for, e.g. qemu"},
      ParamSpec{"boot_method", "qemu", "qemu",
                "how the device type boots: qemu (LAVA starts QEMU with the kernel and initramfs) or u-boot (a "
                "board whose U-Boot fetches them by TFTP, with the device type's ramdisk commands)"}
          .choice({"qemu", "u-boot"}),
      ParamSpec{"arch", "", "", "the device's architecture, x86_64 or aarch64 (amd64, arm64): the agent and busybox "
                                "it runs are built for it; default: this machine's"},
      ParamSpec{"kernel_type", "image", "image",
                "u-boot: the kernel image's kind, as LAVA names it: image (booti, arm64's Image), zimage (bootz) or "
                "uimage (bootm)"}
          .choice({"image", "zimage", "uimage"}),
      ParamSpec{"tags", "", "", "device tags the jobs ask for"}.list_of(),
      ParamSpec{"priority", "medium", "medium", "the jobs' priority"}.choice({"high", "medium", "low"}),
      ParamSpec{"job_timeout", "1800", "1800", "seconds one job (a boot and one agent run) may take once it runs"}
          .integer(120, 1e9),
      ParamSpec{"queue_timeout", "3600", "3600",
                "seconds one job may wait in LAVA's queue (state Submitted) before kbench cancels it; the session "
                "then fails as the lab's, not as a failed boot of its kernel"}
          .integer(1, 1e9),
      ParamSpec{"offline_timeout", "300", "300",
                "seconds one job may wait while no device of its type can run it (each one's health Bad, "
                "Maintenance, Looping or Retired, or its worker offline or not Active) before kbench cancels it; "
                "the session then fails as the lab's"}
          .integer(0, 1e9),
      ParamSpec{"boot_silence_timeout", "300", "300",
                "seconds a running job's log may gain no line before the agent has started (a kernel hung while "
                "booting, a dispatcher stuck) before kbench cancels it: a failed boot when the console had "
                "printed, else the lab's failure; 0: never (LAVA's own timeouts end the job)"}
          .integer(0, 1e9),
      ParamSpec{"extra_options", "-cpu max", "-cpu max",
                "boot_method qemu: options added to QEMU's command line as one string (LAVA's context "
                "extra_options; QEMU's own commas stay); the default gives the guest every instruction TCG has, "
                "as the qemu connection does; empty: none"},
      ParamSpec{"serve_files", "", "",
                "ADDRESS:PORT on which kbench serves the kernel and initramfs to the dispatcher over HTTP while the "
                "connection lasts, e.g. 0.0.0.0:0 (port 0: any free one); empty: file:// URLs, for a worker on this "
                "machine"},
      ParamSpec{"files_host", "", "",
                "the host name or address in the files' http:// URLs, the one the dispatcher reaches this machine "
                "by; default: serve_files' address, or this machine's host name when that is 0.0.0.0 or ::"},
      ParamSpec{"busybox", "/bin/busybox", "/bin/busybox", "a static busybox built for the device, its /init"},
      ParamSpec{"poll_interval", "2", "2", "seconds between two looks at a job's state"}.integer(1, 3600),
      ParamSpec{"infra_retries", "1", "1",
                "times a job that LAVA ends with an Infrastructure error before the agent started is submitted "
                "again; when the last one fails too, the session fails as the lab's, not as a failed boot of its "
                "kernel"}
          .integer(0, 100),
  };
  return specs;
}

// "HOST:PORT" ("[V6]:PORT") split; nullopt unless the port is 0-65535.
std::optional<std::pair<std::string, int>> host_and_port(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size() || colon + 6 < address.size()) {
    return std::nullopt;
  }
  const std::string port = address.substr(colon + 1);
  if (!std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); })) return std::nullopt;
  const int number = std::stoi(port);
  if (number > 65535) return std::nullopt;
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return std::pair{host, number};
}

std::optional<ParamProblem> check_lava_params(const Params& params) {
  for (const char* required : {"url", "token_file", "device_type"}) {
    if (!params.count(required) || params.at(required).empty()) {
      return ParamProblem{required, std::string("a value (url, token_file and device_type are required)")};
    }
  }
  const std::string& url = params.at("url");
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return ParamProblem{"url", "an http:// or https:// URL, got '" + url + "'"};
  }
  if (params.count("arch") && !params.at("arch").empty() && !known_guest_arch(params.at("arch"))) {
    return ParamProblem{"arch", expected_guest_arch(params.at("arch"))};
  }
  if (params.count("serve_files") && !params.at("serve_files").empty() && !host_and_port(params.at("serve_files"))) {
    return ParamProblem{"serve_files", "ADDRESS:PORT, e.g. 0.0.0.0:0 (port 0: any free one), got '" +
                                           params.at("serve_files") + "'"};
  }
  return std::nullopt;
}

struct LavaParams {
  std::string origin;  // scheme://host[:port]
  std::string base;    // the path under it, ending in '/'
  std::string token;
  std::string device_type;
  lava::BootMethod boot = lava::BootMethod::Qemu;
  std::string arch = host_machine();
  std::string kernel_type = "image";
  std::vector<std::string> tags;
  std::vector<std::string> extra_options{"-cpu max"};
  std::string priority = "medium";
  std::chrono::seconds job_timeout{1800};
  std::chrono::seconds queue_timeout{3600};
  std::chrono::seconds offline_timeout{300};
  std::chrono::seconds boot_silence_timeout{300};
  std::string busybox = "/bin/busybox";
  std::chrono::seconds poll_interval{2};
  int infra_retries = 1;
  std::string serve_files;  // empty: file:// URLs
  std::string files_host;
};

LavaParams parse_lava_params(const Params& params) {
  LavaParams parsed;
  const std::string& url = params.at("url");
  const auto path = url.find('/', url.find("://") + 3);
  parsed.origin = url.substr(0, path);
  parsed.base = path == std::string::npos ? "/" : url.substr(path);
  if (parsed.base.back() != '/') parsed.base += '/';
  const std::string& token_file = params.at("token_file");
  std::ifstream in(token_file);
  if (!in || !std::getline(in, parsed.token) || parsed.token.empty()) {
    throw InputError("sut.connection.params.token_file " + token_file + ": expected a readable file holding a token");
  }
  while (!parsed.token.empty() && std::isspace(static_cast<unsigned char>(parsed.token.back()))) parsed.token.pop_back();
  parsed.device_type = params.at("device_type");
  if (params.count("boot_method") && params.at("boot_method") == "u-boot") parsed.boot = lava::BootMethod::UBoot;
  if (params.count("arch") && !params.at("arch").empty()) parsed.arch = guest_arch(params.at("arch"));
  if (params.count("kernel_type")) parsed.kernel_type = params.at("kernel_type");
  auto list = [&](const char* key, std::vector<std::string>& into) {
    if (!params.count(key)) return;
    into.clear();
    std::istringstream words(params.at(key));
    for (std::string word; std::getline(words, word, ',');) {
      if (!word.empty()) into.push_back(word);
    }
  };
  list("tags", parsed.tags);
  if (params.count("extra_options")) {
    parsed.extra_options.clear();
    if (!params.at("extra_options").empty()) parsed.extra_options.push_back(params.at("extra_options"));
  }
  if (params.count("priority")) parsed.priority = params.at("priority");
  auto seconds = [&](const char* key, std::chrono::seconds& into) {
    if (params.count(key)) into = std::chrono::seconds(std::stol(params.at(key)));
  };
  seconds("job_timeout", parsed.job_timeout);
  seconds("queue_timeout", parsed.queue_timeout);
  seconds("offline_timeout", parsed.offline_timeout);
  seconds("boot_silence_timeout", parsed.boot_silence_timeout);
  seconds("poll_interval", parsed.poll_interval);
  if (params.count("infra_retries")) parsed.infra_retries = std::stoi(params.at("infra_retries"));
  if (params.count("busybox")) parsed.busybox = params.at("busybox");
  if (params.count("serve_files")) parsed.serve_files = params.at("serve_files");
  if (params.count("files_host")) parsed.files_host = params.at("files_host");
  return parsed;
}

// A job's failure, as one line: the relay's only diagnostic for it.
struct JobFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RestClient {
 public:
  explicit RestClient(const LavaParams& params)
      : client_(params.origin), base_(params.base + "api/v0.2/"), origin_(params.origin) {
    client_.set_connection_timeout(15);
    client_.set_read_timeout(60);
    headers_ = {{"Authorization", "Token " + params.token}};
  }

  struct Reply {
    int status = 0;     // 0: no answer (`error` says why)
    std::string body;
    std::string error;
  };
  // `method` (GET or POST) `path`, whatever the answer.
  Reply send(const std::string& method, const std::string& path, const std::string& body = "") {
    const std::string target = base_ + path;
    auto result = method == "POST" ? client_.Post(target, headers_, body, "application/json")
                                   : client_.Get(target, headers_);
    if (!result) return {0, "", httplib::to_string(result.error())};
    return {result->status, result->body, ""};
  }
  Reply get(const std::string& path) { return send("GET", path); }
  void set_connection_timeout(int seconds) { client_.set_connection_timeout(seconds); }

  // The response's body; throws std::runtime_error naming the request for a
  // transport error or a status other than `expected`.
  std::string request(const std::string& method, const std::string& path, const std::string& body = "",
                      int expected = 200) {
    Reply reply = send(method, path, body);
    if (reply.status == 0) {
      throw std::runtime_error(fmt::format("{} {}{}{}: {}", method, origin_, base_, path, reply.error));
    }
    if (reply.status != expected) {
      std::string shown = reply.body.substr(0, 300);
      std::replace(shown.begin(), shown.end(), '\n', ' ');
      throw std::runtime_error(fmt::format("{} {}{}{}: HTTP {}: {}", method, origin_, base_, path, reply.status, shown));
    }
    return std::move(reply.body);
  }

 private:
  httplib::Client client_;
  std::string base_;
  std::string origin_;
  httplib::Headers headers_;
};

// A job's log read as it grows: logs/?start=N gives the lines from N on.
// Only whole lines are taken: LAVA indexes a line before it has written all
// of it, so the last one read may be cut; it is read again next time.
struct LogReader {
  std::size_t lines_read = 0;
  lava::LogContents contents;  // of every line read so far

  // The lines written since the last read, also added to `contents`. Throws
  // when LAVA has none (HTTP 404) or the request fails.
  lava::LogContents read_more(RestClient& rest, long id) {
    std::string text = rest.request("GET", fmt::format("jobs/{}/logs/?start={}", id, lines_read));
    const auto last_newline = text.rfind('\n');
    if (last_newline == std::string::npos) return {};
    text.resize(last_newline + 1);
    lava::LogContents more = lava::read_job_log(text);
    lines_read += more.lines;
    contents.frames.insert(contents.frames.end(), more.frames.begin(), more.frames.end());
    contents.errors.insert(contents.errors.end(), more.errors.begin(), more.errors.end());
    if (!more.last_console_line.empty()) contents.last_console_line = more.last_console_line;
    if (!more.job_error_type.empty()) contents.job_error_type = more.job_error_type;
    contents.lines += more.lines;
    return more;
  }
};

// `plan check`'s questions to the server: does the device type exist, is
// the token accepted (one request answers both: LAVA refuses a bad token on
// any request that carries it).
Method::OnlineCheck check_lava_online(const Params& params) {
  const LavaParams parsed = parse_lava_params(params);
  const std::string server = parsed.origin + parsed.base;
  RestClient rest(parsed);
  rest.set_connection_timeout(5);
  const auto reply = rest.get(httplib::append_query_params("devicetypes/", {{"name", parsed.device_type}}));
  Method::OnlineCheck check;
  if (reply.status == 401 || reply.status == 403) {
    std::string detail = reply.body.substr(0, 120);
    std::replace(detail.begin(), detail.end(), '\n', ' ');
    check.problem = ParamProblem{"token_file", fmt::format("a file holding a token the LAVA server at {} accepts, "
                                                           "got {} (HTTP {}: {})",
                                                           server, params.at("token_file"), reply.status, detail)};
    return check;
  }
  const nlohmann::json page = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  if (reply.status != 200 || !page.is_object() || !page.contains("count") || !page["count"].is_number()) {
    check.note = fmt::format("LAVA server {} not reached ({}): device type {} not checked", server,
                             reply.status == 0 ? reply.error : fmt::format("HTTP {}", reply.status),
                             parsed.device_type);
    return check;
  }
  if (page["count"] == 0) {
    std::string known;
    const auto all = rest.get("devicetypes/?limit=50");
    const nlohmann::json types = nlohmann::json::parse(all.body, nullptr, /*allow_exceptions=*/false);
    if (types.is_object() && types.contains("results") && types["results"].is_array()) {
      for (const auto& type : types["results"]) {
        if (type.is_object() && type.contains("name") && type["name"].is_string()) {
          known += (known.empty() ? "" : ", ") + type["name"].get<std::string>();
        }
      }
    }
    check.problem = ParamProblem{"device_type", fmt::format("a device type of the LAVA server at {}, got '{}' ({})",
                                                            server, parsed.device_type,
                                                            known.empty() ? "it lists none" : "it has: " + known)};
    return check;
  }
  const auto devices = rest.get("devices/?device_type=" + parsed.device_type);
  check.note = fmt::format("LAVA server {}: device type {}: {}", server, parsed.device_type,
                           lava::describe_devices(devices.body));
  return check;
}

class LavaConnection final : public Connection {
 public:
  LavaConnection(LavaParams params, SwprofileKernel swprofile, std::string agent_path)
      : params_(std::move(params)), swprofile_(std::move(swprofile)), agent_path_(std::move(agent_path)) {
    require_readable_image(swprofile_.image);
    if (!swprofile_.dtb.empty()) require_device_tree(swprofile_.dtb);
    for (const auto& word : swprofile_.cmdline) {
      // The words reach QEMU's -append inside LAVA's own command line, or
      // U-Boot's bootargs inside its single quotes.
      if (word.find_first_of("\"'{} \t\n\\") != std::string::npos) {
        throw InputError("swprofiles[" + swprofile_.name + "].cmdline '" + word +
                         "': expected no quotes, braces, backslashes or blanks with the lava connection");
      }
    }
    // Without serve_files the worker reads the files as file:// URLs: it
    // runs on this machine.
    chmod(work_dir_.path().c_str(), 0755);
    if (!params_.serve_files.empty()) serve_files();
  }

  ~LavaConnection() override {
    if (files_server_) {
      files_server_->stop();
      files_thread_.join();
    }
  }

  std::string describe() const override {
    std::string cmdline;
    for (const auto& word : swprofile_.cmdline) cmdline += (cmdline.empty() ? "" : " ") + word;
    return fmt::format("lava {}{} (device type {}{})", params_.origin, params_.base, params_.device_type,
                       cmdline.empty() ? "" : ", cmdline: " + cmdline);
  }

  // Every line the relay ends a run with: its failure, its cancellation, or
  // the job's end.
  std::string run_account_prefix() const override { return "kbench: lava: job "; }
  // A job may wait in the queue up to queue_timeout (the relay cancels it
  // then) and, once it runs, LAVA holds it to job_timeout: those are the
  // limits a job has, and the runner's deadline only backs them up.
  std::chrono::seconds start_allowance() const override { return params_.queue_timeout + params_.job_timeout; }

  AgentProcess start_agent(const std::vector<std::string>& args) override {
    if (!wrapper_.empty()) throw InputError("a swprofile wrapper cannot run inside a lava SUT");
    if (base_archive_.empty()) {
      base_archive_ = agent_initramfs(params_.busybox, lava_init(), agent_path_, swprofile_.image, swprofile_.initrd,
                                      swprofile_.modules);
    }
    const bool uboot = params_.boot == lava::BootMethod::UBoot;
    const std::string initramfs =
        fmt::format("{}/initramfs-{}.{}", work_dir_.path(), ++jobs_, uboot ? "uimage" : "cpio");
    {
      std::ofstream out(initramfs, std::ios::binary | std::ios::trunc);
      std::string archive = with_agent_args(base_archive_, args);
      if (uboot) archive = uboot_ramdisk_image(archive, params_.arch, "kbench initramfs");
      out.write(archive.data(), static_cast<std::streamsize>(archive.size()));
      if (!out) throw RunError("cannot write " + initramfs);
    }
    lava::JobSpec spec;
    spec.boot = params_.boot;
    spec.kernel_type = params_.kernel_type;
    spec.job_name = fmt::format("kbench {} {}", swprofile_.name, args.empty() ? "" : args.front());
    for (std::size_t i = 1; i < args.size() && i < 3; ++i) spec.job_name += " " + args[i];
    spec.device_type = params_.device_type;
    spec.tags = params_.tags;
    spec.extra_options = params_.extra_options;
    spec.priority = params_.priority;
    spec.arch = params_.arch;
    if (files_url_.empty()) {
      spec.kernel_url = "file://" + fs::absolute(swprofile_.image).string();
      spec.initramfs_url = "file://" + initramfs;
      if (!swprofile_.dtb.empty()) spec.dtb_url = "file://" + fs::absolute(swprofile_.dtb).string();
    } else {
      spec.kernel_url = files_url_ + kServedKernel;
      spec.initramfs_url = files_url_ + fs::path(initramfs).filename().string();
      if (!swprofile_.dtb.empty()) spec.dtb_url = files_url_ + kServedDtb;
    }
    spec.cmdline = swprofile_.cmdline;
    spec.job_timeout = params_.job_timeout;
    // A resumed plan finds its job by this name when the job outlived the
    // kbench that submitted it.
    std::optional<long> orphan;
    if (!run_label_.empty()) {
      std::string key = run_label_;
      for (const auto& arg : args) key += "\n" + arg;
      spec.job_name += fmt::format(" [{:016x}]", lava::fnv1a64(key));
      if (resuming_) orphan = orphaned_job(spec.job_name);
    }
    return start_relay(lava::job_yaml(spec), orphan);
  }

 private:
  // The kernel's and the device tree's names in the served directory:
  // links to the swprofile's.
  static constexpr const char* kServedKernel = "vmlinuz";
  static constexpr const char* kServedDtb = "device-tree.dtb";

  // The private directory, with a link to the kernel, served under a path
  // no one can guess (the server may listen on every interface) by a thread
  // of this process; the relays are processes of their own and serve nothing.
  void serve_files() {
    const auto address = host_and_port(params_.serve_files);
    fs::create_symlink(fs::absolute(swprofile_.image), fs::path(work_dir_.path()) / kServedKernel);
    if (!swprofile_.dtb.empty()) {
      fs::create_symlink(fs::absolute(swprofile_.dtb), fs::path(work_dir_.path()) / kServedDtb);
    }
    std::string token;
    {
      std::ifstream random("/dev/urandom", std::ios::binary);
      for (int i = 0; i < 12; ++i) token += fmt::format("{:02x}", static_cast<unsigned char>(random.get()));
    }
    files_server_ = std::make_unique<httplib::Server>();
    if (!files_server_->set_mount_point("/" + token, work_dir_.path())) {
      throw RunError("cannot serve " + work_dir_.path());
    }
    const int port = address->second == 0 ? files_server_->bind_to_any_port(address->first)
                     : files_server_->bind_to_port(address->first, address->second) ? address->second
                                                                                      : -1;
    if (port < 0) {
      throw InputError("sut.connection.params.serve_files " + params_.serve_files +
                       ": expected an address and port kbench can listen on");
    }
    std::string host = params_.files_host;
    if (host.empty()) host = address->first;
    if (host == "0.0.0.0" || host == "::") {
      char name[256] = {};
      gethostname(name, sizeof name - 1);
      host = name;
    }
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    files_url_ = fmt::format("http://{}:{}/{}/", host, port, token);
    files_thread_ = std::thread([server = files_server_.get()] { server->listen_after_bind(); });
  }

  AgentProcess start_relay(const std::string& job, std::optional<long> orphan) {
    return process::fork_relay(
        [&](int out_fd, int err_fd) {
          signal(SIGTERM, [](int) { relay_stop_requested = 1; });
          return relay(job, orphan, out_fd, err_fd);
        },
        "kbench: lava");
  }

  // Follows `orphan`, a job of the same name a stopped kbench submitted,
  // else submits `job`; submits it again while LAVA ends it with an
  // Infrastructure error before the agent started, up to infra_retries
  // times: a device or a dispatcher failing is not the kernel's failure.
  // Returns the agent's status, or the relay's own when no agent status came
  // back.
  int relay(const std::string& job, std::optional<long> orphan, int out_fd, int err_fd) {
    RestClient rest(params_);
    std::vector<std::string> lab_failures;  // "job N: why", one per try the lab failed
    if (orphan) {
      write_all(err_fd, fmt::format("kbench: lava: following job {}, submitted before kbench was stopped ({})\n",
                                    *orphan, job_url_of(*orphan)));
    }
    for (;;) {
      if (const auto status = run_job(rest, job, orphan, out_fd, err_fd, lab_failures)) return *status;
      orphan.reset();
    }
  }

  std::string job_url_of(long id) const {
    return fmt::format("{}{}scheduler/job/{}", params_.origin, params_.base, id);
  }

  // The job named `name` that a stopped kbench left: one LAVA had not
  // finished when this resumed execution first looked (its results are
  // taken even when it finishes since; its device was busy with it
  // meanwhile), or one that finished Complete before. Each is followed once.
  std::optional<long> orphaned_job(const std::string& name) {
    if (!orphans_) orphans_ = jobs_to_take();
    const auto found = orphans_->find(name);
    if (found == orphans_->end()) return std::nullopt;
    const long id = found->second;
    orphans_->erase(found);
    return id;
  }

  // name -> id of this swprofile's kbench jobs whose results a resumed
  // session may take: the newest job of each name, when it is still going or
  // finished Complete. A newest one Canceled (by the interrupt that stopped
  // kbench) or Incomplete is submitted again. Empty when the server does not
  // say (new jobs are submitted).
  std::map<std::string, long> jobs_to_take() const {
    struct Newest {
      long id = 0;
      bool takeable = false;
    };
    std::map<std::string, Newest> newest;
    try {
      RestClient rest(params_);
      // Newest first: the page holds this run's jobs however many older runs
      // of the swprofile the server keeps.
      const nlohmann::json page = nlohmann::json::parse(rest.request(
          "GET", httplib::append_query_params("jobs/", {{"description__startswith", "kbench " + swprofile_.name + " "},
                                                        {"ordering", "-id"},
                                                        {"limit", "1000"}})));
      static const std::set<std::string> going = {"Submitted", "Scheduling", "Scheduled", "Running"};
      for (const auto& job : page.at("results")) {
        const long id = job.at("id").get<long>();
        Newest& entry = newest[job.at("description").get<std::string>()];
        if (id < entry.id) continue;
        const std::string state = job.value("state", "");
        entry = {id, going.count(state) > 0 || (state == "Finished" && job.value("health", "") == "Complete")};
      }
    } catch (const std::exception&) {
      newest.clear();
    }
    std::map<std::string, long> takeable;
    for (const auto& [name, entry] : newest) {
      if (entry.takeable) takeable[name] = entry.id;
    }
    return takeable;
  }

  // One try: submit (or take `orphan`, a job submitted before), follow,
  // read the log. nullopt: the lab failed it before the agent started and a
  // retry is left (said on err_fd, added to lab_failures).
  std::optional<int> run_job(RestClient& rest, const std::string& job, std::optional<long> orphan, int out_fd,
                             int err_fd, std::vector<std::string>& lab_failures) {
    long id = 0;
    if (orphan) {
      id = *orphan;
    } else {
      const nlohmann::json submitted =
          nlohmann::json::parse(rest.request("POST", "jobs/", nlohmann::json{{"definition", job}}.dump(), 201));
      if (!submitted.contains("job_ids") || submitted["job_ids"].empty()) {
        throw std::runtime_error("the job was not accepted: " + submitted.dump());
      }
      id = submitted["job_ids"][0].get<long>();
    }
    const std::string job_url = job_url_of(id);
    // What the agent's fingerprint record is given (with_job).
    job_id_ = id;
    job_url_ = job_url;
    const auto queued_since = Clock::now();
    // The log is followed while the job runs, so that the agent's records
    // reach the runner (its progress) as the agent writes them.
    LogReader log;
    FramesPassed passed;
    nlohmann::json info;
    std::string state;
    // Whether, and since when, no device of the type can run the job. The
    // listing is two requests that grow with the lab, so a queued job asks
    // for it less often than it polls its own state.
    bool no_device = false;
    Clock::time_point no_device_since;
    std::optional<Clock::time_point> devices_listed_at;
    // When the job's log last gained a line (or the job started running).
    std::optional<Clock::time_point> log_grew_at;
    int failed_polls = 0;
    for (;;) {
      try {
        info = nlohmann::json::parse(rest.request("GET", fmt::format("jobs/{}/", id)));
        failed_polls = 0;
      } catch (const std::exception& error) {
        // A server restarting or busy for a moment is not the job's failure.
        if (++failed_polls >= 10) throw std::runtime_error(fmt::format("job {}: {}", id, error.what()));
        std::this_thread::sleep_for(params_.poll_interval);
        continue;
      }
      state = info.value("state", "");
      if (state == "Finished") break;
      if (state == "Running") {
        take_device(info);
        if (!log_grew_at) log_grew_at = Clock::now();
        try {
          const lava::LogContents more = log.read_more(rest, id);
          if (more.lines > 0) log_grew_at = Clock::now();
          pass_on(more.frames, id, job_url, out_fd, err_fd, passed);
        } catch (const std::exception&) {
          // No line yet (LAVA answers 404), or a moment's failure: the next
          // poll, or the read at the job's end, takes the lines.
        }
        // A kernel that hangs while booting, without a panic LAVA would
        // see, leaves the log silent until the boot action's timeout: most
        // of job_timeout, for every session of that kernel.
        const auto silent = Clock::now() - *log_grew_at;
        if (!passed.init_started && params_.boot_silence_timeout.count() > 0 &&
            silent >= params_.boot_silence_timeout) {
          const std::string canceled = cancel_job(rest, id);
          const std::string& console = log.contents.last_console_line;
          write_all(err_fd, fmt::format("kbench: lava: job {}: its log gained no line for {}s before the agent "
                                        "started{}{} ({})\n",
                                        id, std::chrono::duration_cast<std::chrono::seconds>(silent).count(),
                                        console.empty() ? " and the console printed nothing: the lab's failure"
                                                        : "; last console line: " + console,
                                        canceled == "canceled" ? "" : ", " + canceled, job_url));
          return console.empty() ? kExitInfrastructure : 1;
        }
      }
      // A job that never leaves the queue (a busy farm, no device able to
      // run it) would otherwise hold the plan until the runner's timeout,
      // with nothing said of why. Neither is the kernel's failure.
      if (state == "Submitted") {
        const auto now = Clock::now();
        std::optional<std::string> why_no_device;
        if (!devices_listed_at || now - *devices_listed_at >= device_listing_interval()) {
          devices_listed_at = now;
          why_no_device = why_no_device_can_run(rest);
          if (why_no_device && !no_device) no_device_since = now;
          no_device = why_no_device.has_value();
        }
        if (why_no_device && now - no_device_since >= params_.offline_timeout) {
          const std::string canceled = cancel_job(rest, id);
          write_all(err_fd, fmt::format("kbench: lava: job {} waited {}s with no device of type {} able to run it "
                                        "({}){} ({})\n",
                                        id, std::chrono::duration_cast<std::chrono::seconds>(now - no_device_since).count(),
                                        params_.device_type, *why_no_device,
                                        canceled == "canceled" ? "" : ", " + canceled, job_url));
          return kExitInfrastructure;
        }
        if (now - queued_since > params_.queue_timeout) {
          const std::string canceled = cancel_job(rest, id);
          std::string devices;
          try {
            devices = lava::describe_devices(rest.request("GET", "devices/?device_type=" + params_.device_type));
          } catch (const std::exception& error) {
            devices = std::string("its devices not listed: ") + error.what();
          }
          write_all(err_fd, fmt::format("kbench: lava: job {} waited in the queue for more than {}s{} (device type "
                                        "{}: {}) ({})\n",
                                        id, params_.queue_timeout.count(),
                                        canceled == "canceled" ? "" : ", " + canceled, params_.device_type, devices,
                                        job_url));
          return kExitInfrastructure;
        }
      }
      const auto next_poll = Clock::now() + params_.poll_interval;
      while (!relay_stop_requested && Clock::now() < next_poll) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (relay_stop_requested) {
        write_all(err_fd, fmt::format("kbench: lava: job {} {}: kbench stopped its agent ({})\n", id,
                                      cancel_job(rest, id), job_url));
        return 1;
      }
    }
    const std::string health = info.value("health", "");
    take_device(info);
    try {
      pass_on(log.read_more(rest, id).frames, id, job_url, out_fd, err_fd, passed);
    } catch (const std::exception& error) {
      // LAVA answers 404 when no line is left to read.
      if (health == "Complete" && log.lines_read == 0) {
        throw std::runtime_error(fmt::format("job {}: {}", id, error.what()));
      }
    }
    const lava::LogContents& contents = log.contents;
    const bool lab_failed = contents.job_error_type == "Infrastructure";
    const bool any_frame = std::any_of(contents.frames.begin(), contents.frames.end(),
                                       [](const ResultFrame& frame) { return frame.valid; });
    if (lab_failed && !any_frame && static_cast<int>(lab_failures.size()) < params_.infra_retries) {
      const std::string reason = failure_reason(info, contents, false);
      lab_failures.push_back(fmt::format("job {}: {}", id, reason));
      write_all(err_fd, fmt::format("kbench: lava: job {} {}/{}: LAVA ended it on an Infrastructure error before the "
                                    "agent started: {}; submitting the job again (retry {} of {}) ({})\n",
                                    id, state, health, reason, lab_failures.size(), params_.infra_retries, job_url));
      return std::nullopt;
    }
    std::string earlier;
    for (const auto& failure : lab_failures) earlier += (earlier.empty() ? "" : "; ") + failure;
    if (!earlier.empty()) earlier = "; after the lab failed " + earlier;
    if (orphan) earlier += "; followed after the kbench that submitted it was stopped";
    if (passed.agent_status && passed.corrupted == 0) {
      // The run's last line names its job: the runner keeps it with the
      // benchmark's outcome. Not after a refusal of the agent's input
      // (kExitUsage), which the runner quotes from the agent's own last line.
      if (*passed.agent_status != kExitUsage) {
        write_all(err_fd, fmt::format("kbench: lava: job {} {}/{} on {}: the agent exited with status {}{} ({})\n", id,
                                      state, health, device_.empty() ? "?" : device_, *passed.agent_status, earlier,
                                      job_url));
      }
      return *passed.agent_status;
    }

    const std::string reason = failure_reason(info, contents, passed.init_started);
    std::string what;
    if (passed.corrupted > 0) {
      what = fmt::format("{} result line(s) failed their checksum", passed.corrupted);
    } else if (!passed.init_started) {
      what = "the agent never started";
    } else {
      what = "the agent did not finish";
    }
    const std::string classed =
        contents.job_error_type.empty() ? "" : fmt::format(" (LAVA: {} error)", contents.job_error_type);
    write_all(err_fd, fmt::format("kbench: lava: job {} {}/{}: {}{}{}{} ({})\n", id, state, health, what,
                                  reason.empty() ? "" : ": " + reason, classed, earlier, job_url));
    if (passed.agent_status && *passed.agent_status != 0) return *passed.agent_status;
    return lab_failed && !passed.init_started ? kExitInfrastructure : 1;
  }

  // What the frames read so far of a job's log said.
  struct FramesPassed {
    std::optional<int> agent_status;
    bool init_started = false;
    int corrupted = 0;
  };

  // Passes the agent's frames on as they are read: its records to out_fd,
  // its diagnostics to err_fd.
  void pass_on(const std::vector<ResultFrame>& frames, long id, const std::string& job_url, int out_fd, int err_fd,
               FramesPassed& passed) {
    for (const ResultFrame& frame : frames) {
      if (!frame.valid) {
        ++passed.corrupted;
        write_all(err_fd, "kbench: lava: dropped a result line whose checksum does not match: " +
                              frame.payload.substr(0, 120) + "\n");
      } else if (frame.tag == "KBS1") {
        passed.init_started = true;
        write_all(err_fd, fmt::format("kbench: lava: job {}: {} reached /init on {} ({})\n", id, frame.payload,
                                      device_.empty() ? "?" : device_, job_url));
      } else if (frame.tag == "KBO1") {
        write_all(out_fd, with_job(frame.payload) + "\n");
      } else if (frame.tag == "KBE1") {
        write_all(err_fd, frame.payload + "\n");
      } else if (frame.tag == "KBX1") {
        passed.agent_status = std::atoi(frame.payload.c_str());
      }
    }
  }

  void take_device(const nlohmann::json& info) {
    if (info.contains("actual_device") && info["actual_device"].is_string()) {
      device_ = info["actual_device"].get<std::string>();
    }
  }

  // One line: LAVA's own reason for a job's failure. The failure comment is
  // often LAVA's generic "InfrastructureError: ..."; the log's first error
  // or exception says what went wrong, and, before the agent started, the
  // last console line what the device said (e.g. QEMU refusing the kernel).
  static std::string failure_reason(const nlohmann::json& info, const lava::LogContents& contents,
                                    bool init_started) {
    std::string reason;
    if (info.contains("failure_comment") && info["failure_comment"].is_string()) {
      reason = info["failure_comment"].get<std::string>();
    }
    if (!contents.errors.empty() && contents.errors.front() != reason) {
      reason += (reason.empty() ? "" : "; first error: ") + contents.errors.front();
    }
    if (!init_started && !contents.last_console_line.empty()) {
      reason += (reason.empty() ? "" : "; ") + std::string("last console line: ") + contents.last_console_line;
    }
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    return reason;
  }

  // How often a queued job's devices are listed: often enough that
  // offline_timeout is kept to a tenth of it, never more often than the job
  // is polled, and at least every 30 s.
  std::chrono::seconds device_listing_interval() const {
    return std::clamp(params_.offline_timeout / 10, params_.poll_interval,
                      std::max(params_.poll_interval, std::chrono::seconds{30}));
  }

  // The devices and workers as LAVA lists them now; nullopt when a device
  // can run the job or the server does not say (a failed request is not the
  // devices' state).
  std::optional<std::string> why_no_device_can_run(RestClient& rest) const {
    std::string devices;
    std::string workers;
    try {
      devices = rest.request("GET", fmt::format("devices/?device_type={}&limit=200", params_.device_type));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    try {
      workers = rest.request("GET", "workers/?limit=200");
    } catch (const std::exception&) {
      workers.clear();
    }
    std::string tags;
    if (!params_.tags.empty()) {
      try {
        tags = rest.request("GET", "tags/?limit=1000");
      } catch (const std::exception&) {
        tags.clear();
      }
    }
    return lava::why_no_device_can_run(devices, workers, params_.tags, tags);
  }

  // "canceled", or "not canceled: " and why.
  static std::string cancel_job(RestClient& rest, long id) {
    try {
      rest.request("GET", fmt::format("jobs/{}/cancel/", id));
    } catch (const std::exception& error) {
      return std::string("not canceled: ") + error.what();
    }
    return "canceled";
  }

  // The fingerprint the agent takes on the device, plus the job that ran it.
  std::string with_job(const std::string& line) const {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || record.value("type", "") != records::kFingerprint || !record["data"].is_object()) {
      return line;
    }
    namespace key = sysinfo::fingerprint_key;
    nlohmann::json& fingerprint = record["data"];
    fingerprint[key::kLavaJobId] = job_id_;
    fingerprint[key::kLavaJobUrl] = job_url_;
    fingerprint[key::kLavaDeviceType] = params_.device_type;
    if (!device_.empty()) fingerprint[key::kLavaDevice] = device_;
    return record.dump();
  }

  LavaParams params_;
  SwprofileKernel swprofile_;
  std::string agent_path_;
  // In /tmp rather than $TMPDIR, which may be private to this user: the
  // LAVA worker reads the files as file:// URLs (without serve_files).
  const TempDirectory work_dir_{"kbench-lava", "/tmp"};
  std::unique_ptr<httplib::Server> files_server_;
  std::thread files_thread_;
  std::string files_url_;  // ending in '/'; empty: file:// URLs
  std::string base_archive_;
  int jobs_ = 0;
  // Resuming: the jobs a stopped kbench left going, not yet followed (read
  // at the first agent run); see orphaned_job.
  std::optional<std::map<std::string, long>> orphans_;
  // Set in the relay process: its job, and the device running it once known.
  long job_id_ = 0;
  std::string job_url_;
  std::string device_;
};

}  // namespace

KBENCH_SUT_METHOD({
    .name = kLavaMethod,
    .summary = "a device of a LAVA farm, one job per agent run, booting each swprofile's kernel (docs/lava.md)",
    .params = lava_param_specs(),
    .capabilities = {Capability::BootsKernel, Capability::DeviceTree},
    .make = [](const Params& params, const SwprofileKernel* swprofile) -> std::unique_ptr<Connection> {
      if (!swprofile || swprofile->image.empty() || !swprofile->deb.empty()) {
        throw InputError(std::string("swprofiles[") + (swprofile ? swprofile->name : "") +
                         "].kernel: expected a kernel image to boot with the lava connection (kernel: PATH, or "
                         "{image: PATH, modules: TARBALL})");
      }
      MethodRegistry::instance().get(kLavaMethod).require_valid(params);
      LavaParams parsed = parse_lava_params(params);
      require_busybox_for(parsed.busybox, parsed.arch);
      if (parsed.boot == lava::BootMethod::UBoot && params.count("extra_options")) {
        throw InputError("sut.connection.params.extra_options: expected none with boot_method u-boot (they are "
                         "QEMU's; a board boots as its device type says)");
      }
      std::string agent = agent_for_machine(parsed.arch, find_agent_binary());
      return std::make_unique<LavaConnection>(std::move(parsed), *swprofile, std::move(agent));
    },
    .check_params = check_lava_params,
    .check_online = check_lava_online,
});

}  // namespace lava

std::string lava_init() {
  return std::string(assets::sut::init_mounts_sh) + assets::sut::init_results_console_sh + assets::sut::init_run_sh +
         assets::sut::init_end_shell_sh;
}

}  // namespace kbench::sut
