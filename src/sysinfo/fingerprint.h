#pragma once
// What the agent records about the machine (SUT identity) and the software
// being measured (swprofile), plus the measurement hygiene it cannot fix.
// Every unreadable source is null: a fingerprint never fails.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kbench::sysinfo {

// Keys (docs/agent-protocol.md): hostname, arch, cpu_model, cpu_count,
// microcode, memory_kib, memory_gib, product_name, kernel_release, kernel_version,
// cmdline, kernel_config_sha256, kernel_config_gz_sha256, mitigations,
// clocksource, governor, smt, aslr, thp, no_turbo, boost, loadavg, os_release,
// device_tree_model;
// their names are sysinfo/fingerprint_view.h's.
nlohmann::json fingerprint();

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);
// The first line without its newline, or nullopt.
std::optional<std::string> read_line(const std::string& path);

// The "microcode" revision of the first CPU in /proc/cpuinfo's text
// ("0xf0"), or null where the kernel shows none (arm64, most VMs' guests
// show one, some do not).
nlohmann::json microcode_from_cpuinfo(const std::string& cpuinfo);

// The seccomp state of the process whose /proc/<pid>/status text is given:
// "none", "strict", "filter" or "filter x N" (N stacked filters), or null
// where the kernel shows none. A filter taxes every system call the
// benchmarks make, as a kernel change would; the agent reports its own.
nlohmann::json seccomp_from_status(const std::string& status);

// MemTotal in KiB rounded to whole GiB (half up).
std::int64_t kib_to_whole_gib(std::int64_t kib);

// "always [madvise] never" -> "madvise"; the text itself when nothing is bracketed.
std::string bracketed_choice(const std::string& text);

}  // namespace kbench::sysinfo
