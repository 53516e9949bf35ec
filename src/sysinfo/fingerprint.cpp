#include "sysinfo/fingerprint.h"

#include <dirent.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "sysinfo/arm64_cpu.h"
#include "sysinfo/fingerprint_view.h"
#include "sysinfo/sha256.h"

namespace kbench::sysinfo {

using nlohmann::json;

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return content.str();
}

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::int64_t kib_to_whole_gib(std::int64_t kib) {
  constexpr std::int64_t kKibPerGib = 1024 * 1024;
  return (kib + kKibPerGib / 2) / kKibPerGib;
}

std::string bracketed_choice(const std::string& text) {
  const auto open = text.find('[');
  const auto close = text.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return text;
  return text.substr(open + 1, close - open - 1);
}

namespace {

json line_or_null(const std::string& path) {
  auto line = read_line(path);
  if (!line) return nullptr;
  return *line;
}

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\n");
  return text.substr(first, last - first + 1);
}

// Value of the first "key : value" line of /proc/cpuinfo whose key matches.
std::optional<std::string> cpuinfo_field(const std::string& cpuinfo, const std::string& key) {
  std::istringstream lines(cpuinfo);
  std::string line;
  while (std::getline(lines, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return std::nullopt;
}

// The MIDR of every online CPU: /proc/cpuinfo, else sysfs' midr_el1 (a
// kernel that prints fewer fields), else the register itself, which arm64
// Linux emulates for user space (HWCAP_CPUID), as qemu-user does. `source`
// says which.
std::vector<Midr> cpu_midrs(const std::optional<std::string>& cpuinfo, std::string& source) {
  if (cpuinfo) {
    auto midrs = midrs_from_cpuinfo(*cpuinfo);
    if (!midrs.empty()) {
      source = "/proc/cpuinfo";
      return midrs;
    }
  }
  std::vector<Midr> midrs;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (long cpu = 0; cpu < online; ++cpu) {
    const auto text =
        read_line("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/regs/identification/midr_el1");
    const auto midr = text ? midr_from_sysfs_text(*text) : std::nullopt;
    if (!midr) break;
    midrs.push_back(*midr);
  }
  if (!midrs.empty()) {
    source = "/sys/devices/system/cpu/cpu*/regs/identification/midr_el1";
    return midrs;
  }
#if defined(__aarch64__)
  if (getauxval(AT_HWCAP) & HWCAP_CPUID) {
    std::uint64_t value = 0;
    asm volatile("mrs %0, midr_el1" : "=r"(value));
    source = "mrs midr_el1";
    return {Midr::from_register(value)};
  }
#endif
  return {};
}

json midr_json(const Midr& midr, const std::string& source) {
  char value[16];
  std::snprintf(value, sizeof value, "0x%08x", midr.value());
  char implementer[8], part[8];
  std::snprintf(implementer, sizeof implementer, "0x%02x", midr.implementer);
  std::snprintf(part, sizeof part, "0x%03x", midr.part);
  return {{"value", value},
          {"implementer", implementer},
          {"implementer_name", implementer_name(midr.implementer)},
          {"part", part},
          {"variant", midr.variant},
          {"revision", midr.revision},
          {"core", core_name(midr)},
          {"source", source}};
}

// x86's "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz" without its marks,
// clock and filler words, for the SUT class: "Intel Xeon Platinum 8375C".
std::string short_model_name(std::string model) {
  if (const auto at = model.find(" @ "); at != std::string::npos) model.erase(at);
  for (const char* noise : {"(R)", "(r)", "(TM)", "(tm)"}) {
    for (auto at = model.find(noise); at != std::string::npos; at = model.find(noise)) {
      model.erase(at, std::string(noise).size());
    }
  }
  std::istringstream words(model);
  std::string out;
  for (std::string word; words >> word;) {
    if (word == "CPU" || word == "Processor") continue;
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

// How many packages (sockets) the online CPUs sit in; 0 when the topology
// does not say (-1 ids, no sysfs).
int socket_count() {
  std::vector<long> packages;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (long cpu = 0; cpu < online; ++cpu) {
    const auto id = read_line("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/physical_package_id");
    if (!id) return 0;
    try {
      const long value = std::stol(*id);
      if (value < 0) return 0;
      if (std::find(packages.begin(), packages.end(), value) == packages.end()) packages.push_back(value);
    } catch (const std::exception&) {
      return 0;
    }
  }
  return int(packages.size());
}

}  // namespace

nlohmann::json microcode_from_cpuinfo(const std::string& cpuinfo) {
  if (auto revision = cpuinfo_field(cpuinfo, "microcode")) return *revision;
  return nullptr;
}

nlohmann::json seccomp_from_status(const std::string& status) {
  const auto mode = cpuinfo_field(status, "Seccomp");
  if (!mode) return nullptr;
  if (*mode == "0") return "none";
  if (*mode == "1") return "strict";
  if (*mode != "2") return "mode " + *mode;
  const auto filters = cpuinfo_field(status, "Seccomp_filters");
  if (!filters || *filters == "1") return "filter";
  return "filter x " + *filters;
}

namespace {

json microcode() {
  const auto cpuinfo = read_file("/proc/cpuinfo");
  if (!cpuinfo) return nullptr;
  return microcode_from_cpuinfo(*cpuinfo);
}

json meminfo_kib() {
  const auto meminfo = read_file("/proc/meminfo");
  if (!meminfo) return nullptr;
  std::istringstream lines(*meminfo);
  std::string key;
  std::int64_t value = 0;
  std::string unit;
  while (lines >> key >> value) {
    std::getline(lines, unit);
    if (key == "MemTotal:") return value;
  }
  return nullptr;
}

// Debian's /boot/config-RELEASE, else the config beside the modules (Fedora's
// layout, and where kbench puts the config of a kernel it deployed).
json kernel_config_text_hash(const std::string& release) {
  auto text = read_file("/boot/config-" + release);
  if (!text) text = read_file("/lib/modules/" + release + "/config");
  if (!text) return nullptr;
  return sha256_hex(*text);
}

// The agent has no zlib; /proc/config.gz is hashed as stored, which is fixed
// per kernel build (the kernel embeds the compressed file).
json kernel_config_gz_hash() {
  auto bytes = read_file("/proc/config.gz");
  if (!bytes || bytes->empty()) return nullptr;
  return sha256_hex(*bytes);
}

json mitigations() {
  const std::string dir = "/sys/devices/system/cpu/vulnerabilities";
  DIR* handle = opendir(dir.c_str());
  if (!handle) return nullptr;
  std::vector<std::string> names;
  while (dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(handle);
  std::sort(names.begin(), names.end());
  json out = json::object();
  for (const auto& name : names) out[name] = line_or_null(dir + "/" + name);
  return out;
}

json bracketed_or_null(const std::string& path) {
  auto line = read_line(path);
  if (!line) return nullptr;
  return bracketed_choice(*line);
}

json int_or_null(const std::string& path) {
  auto line = read_line(path);
  if (!line) return nullptr;
  try {
    std::size_t used = 0;
    const long long value = std::stoll(*line, &used);
    if (trim(line->substr(used)).empty()) return value;
  } catch (const std::exception&) {
  }
  return *line;
}

json loadavg() {
  auto line = read_line("/proc/loadavg");
  if (!line) return nullptr;
  std::istringstream fields(*line);
  double one = 0, five = 0, fifteen = 0;
  if (!(fields >> one >> five >> fifteen)) return nullptr;
  return json::array({one, five, fifteen});
}

// Current frequency of each CPU in MHz: cpufreq where the driver exposes it,
// else /proc/cpuinfo's "cpu MHz" (what a VM without cpufreq still reports).
json cpu_mhz() {
  json out = json::array();
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (long cpu = 0; cpu < online; ++cpu) {
    const auto khz = read_line("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_cur_freq");
    if (!khz) break;
    try {
      out.push_back(std::stod(*khz) / 1000.0);
    } catch (const std::exception&) {
      break;
    }
  }
  if (!out.empty()) return out;
  const auto cpuinfo = read_file("/proc/cpuinfo");
  if (!cpuinfo) return nullptr;
  std::istringstream lines(*cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    try {
      out.push_back(std::stod(line.substr(colon + 1)));
    } catch (const std::exception&) {
    }
  }
  return out.empty() ? json(nullptr) : out;
}

json os_release() {
  auto text = read_file("/etc/os-release");
  if (!text) return nullptr;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string value = line.substr(12);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      return value;
    }
  }
  return nullptr;
}

// The device tree's root model property: a string the kernel shows with
// its NUL (a list of strings: the first).
json device_tree_model() {
  auto bytes = read_file("/sys/firmware/devicetree/base/model");
  if (!bytes) bytes = read_file("/proc/device-tree/model");
  if (!bytes) return nullptr;
  const std::string model = bytes->substr(0, bytes->find('\0'));
  return model.empty() ? json(nullptr) : json(model);
}

}  // namespace

json fingerprint() {
  namespace key = fingerprint_key;
  json data = json::object();
  utsname names{};
  const bool have_uname = uname(&names) == 0;
  data[key::kHostname] = have_uname ? json(names.nodename) : json(nullptr);
  data[key::kArch] = have_uname ? json(names.machine) : json(nullptr);
  const auto cpuinfo = read_file("/proc/cpuinfo");
  const auto model_name = cpuinfo ? cpuinfo_field(*cpuinfo, "model name") : std::nullopt;
  std::string midr_source;
  const auto midrs = cpu_midrs(cpuinfo, midr_source);
  // arm64 names no model: the cores the MIDRs stand for ("Neoverse-V1 r1p1").
  // They come first: under qemu-user, /proc/cpuinfo is the host's.
  data[key::kCpuModel] = !midrs.empty() ? json(describe_cores(midrs)) : model_name ? json(*model_name) : json(nullptr);
  data[key::kCpuMidr] = midrs.empty() ? json(nullptr) : midr_json(midrs.front(), midr_source);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  data[key::kMicrocode] = microcode();
  data[key::kCpuCount] = online > 0 ? json(online) : json(nullptr);
  const json kib = meminfo_kib();
  data[key::kMemoryKib] = kib;
  data[key::kMemoryGib] = kib.is_null() ? json(nullptr) : json(kib_to_whole_gib(kib.get<std::int64_t>()));
  data[key::kProductName] = line_or_null("/sys/class/dmi/id/product_name");
  data[key::kKernelRelease] = have_uname ? json(names.release) : json(nullptr);
  data[key::kKernelVersion] = have_uname ? json(names.version) : json(nullptr);
  data[key::kCmdline] = line_or_null("/proc/cmdline");
  data[key::kKernelConfigSha256] = have_uname ? kernel_config_text_hash(names.release) : json(nullptr);
  data[key::kKernelConfigGzSha256] = kernel_config_gz_hash();
  data[key::kMitigations] = mitigations();
  data[key::kClocksource] = line_or_null("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  data[key::kGovernor] = line_or_null("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  data[key::kSmt] = line_or_null("/sys/devices/system/cpu/smt/control");
  data[key::kAslr] = int_or_null("/proc/sys/kernel/randomize_va_space");
  const auto status = read_file("/proc/self/status");
  data[key::kSeccomp] = status ? seccomp_from_status(*status) : json(nullptr);
  data[key::kThp] = bracketed_or_null("/sys/kernel/mm/transparent_hugepage/enabled");
  data[key::kNoTurbo] = int_or_null("/sys/devices/system/cpu/intel_pstate/no_turbo");
  data[key::kBoost] = int_or_null("/sys/devices/system/cpu/cpufreq/boost");
  data[key::kLoadavg] = loadavg();
  data[key::kCpuMhz] = cpu_mhz();
  data[key::kOsRelease] = os_release();
  data[key::kDeviceTreeModel] = device_tree_model();
  const int sockets = socket_count();
  data[key::kSockets] = sockets > 0 ? json(sockets) : json(nullptr);
  const std::string class_core = !midrs.empty() ? core_name(midrs.front()) : model_name ? short_model_name(*model_name) : "";
  data[key::kSutClass] = sut_class_name(have_uname ? names.machine : "", class_core, sockets, online,
                                     read_line("/sys/class/dmi/id/sys_vendor").value_or(""),
                                     read_line("/sys/class/dmi/id/product_name").value_or(""),
                                     kib.is_null() ? 0 : kib_to_whole_gib(kib.get<std::int64_t>()));
  return data;
}

}  // namespace kbench::sysinfo
