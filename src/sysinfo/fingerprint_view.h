#pragma once
// The session fingerprint's member names, and a typed view of a stored
// fingerprint. The agent (fingerprint.cpp), the controller that adds to it
// (the plan executor, the qemu and lava methods) and every reader take the
// names from here, so a renamed member cannot leave a reader behind.
//
// Stores hold fingerprints of every kbench version: a member may be missing
// (an older kbench did not record it), null (the agent could not read its
// source) or of another type. The typed accessors read all three as
// nullopt; member() gives the stored value where a reader tells them apart.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kbench::sysinfo {

namespace fingerprint_key {

// What the agent records (docs/agent-protocol.md).
inline constexpr const char* kHostname = "hostname";
inline constexpr const char* kArch = "arch";
inline constexpr const char* kCpuModel = "cpu_model";
inline constexpr const char* kCpuMidr = "cpu_midr";
inline constexpr const char* kMicrocode = "microcode";
inline constexpr const char* kCpuCount = "cpu_count";
inline constexpr const char* kMemoryKib = "memory_kib";
inline constexpr const char* kMemoryGib = "memory_gib";
inline constexpr const char* kProductName = "product_name";
inline constexpr const char* kKernelRelease = "kernel_release";
inline constexpr const char* kKernelVersion = "kernel_version";
inline constexpr const char* kCmdline = "cmdline";
inline constexpr const char* kKernelConfigSha256 = "kernel_config_sha256";
inline constexpr const char* kKernelConfigGzSha256 = "kernel_config_gz_sha256";
inline constexpr const char* kMitigations = "mitigations";
inline constexpr const char* kClocksource = "clocksource";
inline constexpr const char* kGovernor = "governor";
inline constexpr const char* kSmt = "smt";
inline constexpr const char* kAslr = "aslr";
inline constexpr const char* kSeccomp = "seccomp";
inline constexpr const char* kThp = "thp";
inline constexpr const char* kNoTurbo = "no_turbo";
inline constexpr const char* kBoost = "boost";
inline constexpr const char* kLoadavg = "loadavg";
inline constexpr const char* kCpuMhz = "cpu_mhz";
inline constexpr const char* kOsRelease = "os_release";
inline constexpr const char* kSockets = "sockets";
inline constexpr const char* kSutClass = "sut_class";
inline constexpr const char* kTimer = "timer";
inline constexpr const char* kCpusAllowed = "cpus_allowed";
inline constexpr const char* kContainment = "containment";
// The root node's model of the device tree the kernel booted with (arm64
// boards, QEMU's virt board: "linux,dummy-virt"); null without one (x86-64).
inline constexpr const char* kDeviceTreeModel = "device_tree_model";

// Fingerprints of the first stores kept the release in an object: kernel.release.
inline constexpr const char* kOldKernel = "kernel";
inline constexpr const char* kOldKernelRelease = "release";

// What the controller adds.
inline constexpr const char* kSutClassDerived = "sut_class_derived";  // the agent's, where the plan declares one
inline constexpr const char* kLoadavgEnd = "loadavg_end";            // at the session's end
inline constexpr const char* kSysctl = "sysctl";
inline constexpr const char* kBoot = "boot";
inline constexpr const char* kQemuAccel = "qemu_accel";
inline constexpr const char* kQemuAccelNote = "qemu_accel_note";
inline constexpr const char* kQemuCpu = "qemu_cpu";
inline constexpr const char* kQemuIcount = "qemu_icount";  // the guest's clock counted instructions
inline constexpr const char* kQemuBootSeconds = "qemu_boot_seconds";
inline constexpr const char* kQemuMachine = "qemu_machine";
inline constexpr const char* kLavaJobId = "lava_job_id";
inline constexpr const char* kLavaJobUrl = "lava_job_url";
inline constexpr const char* kLavaDeviceType = "lava_device_type";
inline constexpr const char* kLavaDevice = "lava_device";

// The plan a session was measured by, and the members of that object.
inline constexpr const char* kPlan = "plan";
namespace plan {
inline constexpr const char* kPath = "path";
inline constexpr const char* kKey = "key";
inline constexpr const char* kIdentity = "identity";
inline constexpr const char* kRun = "run";
inline constexpr const char* kSession = "session";
inline constexpr const char* kBenchmarks = "benchmarks";
inline constexpr const char* kOrdering = "ordering";
inline constexpr const char* kOrder = "order";
inline constexpr const char* kBlock = "block";
// Sessions measured at the same moment under a paired design (two SUTs of
// one class swapping kernels, or two guests of one host) share a pair; the
// unit is what the two sides of a pair do not share (the SUT, the CPU set),
// swapped between the pair's swprofiles from one pair to the next.
inline constexpr const char* kPair = "pair";
inline constexpr const char* kPairUnit = "pair_unit";
}  // namespace plan

// What the swprofile sets on purpose, and the members of that object.
inline constexpr const char* kSwprofile = "swprofile";
namespace swprofile {
inline constexpr const char* kKernel = "kernel";
inline constexpr const char* kCmdline = "cmdline";
inline constexpr const char* kWrapper = "wrapper";
inline constexpr const char* kBuild = "build";
// The sha256 of the flattened device tree the swprofile's kernel boots with.
inline constexpr const char* kDtbSha256 = "dtb_sha256";
}  // namespace swprofile

}  // namespace fingerprint_key

// The plan members of a session a plan execution measured.
struct FingerprintPlan {
  std::optional<std::string> path;
  std::optional<std::string> run;    // the execution's run id
  std::optional<std::string> block;  // set where sessions are paused apart
  std::optional<std::int64_t> session;  // the round inside the run
  std::optional<std::string> pair;       // set under a paired design
  std::optional<std::string> pair_unit;  // the side of the pair: SUT or CPU set
};

// What a plan's swprofile declares: its kernel (as the plan names it) and
// the words it puts on the kernel command line.
struct FingerprintSwprofile {
  std::optional<std::string> kernel;
  std::vector<std::string> cmdline;  // the string words of the stored list
  std::optional<std::string> dtb_sha256;  // set: the kernel booted with the swprofile's device tree
};

// Reads a fingerprint without copying it: `document` must outlive the view.
// A document that is not an object (an unparsable stored text) has no members.
class FingerprintView {
 public:
  explicit FingerprintView(const nlohmann::json& document) : document_(document) {}

  // The member as stored, null included; nullptr when it is missing.
  const nlohmann::json* member(std::string_view key) const;
  // The member `sub` of the object member `key` (mitigations/NAME);
  // nullptr when either is missing or `key` is no object.
  const nlohmann::json* member(std::string_view key, std::string_view sub) const;
  // A string member's text; nullopt for anything else.
  std::optional<std::string> text(std::string_view key) const;

  std::optional<std::string> hostname() const { return text(fingerprint_key::kHostname); }
  std::optional<std::string> arch() const { return text(fingerprint_key::kArch); }
  std::optional<std::string> cpu_model() const { return text(fingerprint_key::kCpuModel); }
  std::optional<std::string> product_name() const { return text(fingerprint_key::kProductName); }
  std::optional<std::string> cmdline() const { return text(fingerprint_key::kCmdline); }
  std::optional<std::string> sut_class() const { return text(fingerprint_key::kSutClass); }
  // The agent's CPU list ("0-3,6"), which a --cpus list is checked against.
  std::optional<std::string> cpus_allowed() const { return text(fingerprint_key::kCpusAllowed); }
  // kernel_release, else the kernel.release of the first stores.
  std::optional<std::string> kernel_release() const;

  std::optional<std::int64_t> cpu_count() const;
  std::optional<std::int64_t> memory_gib() const;
  // The 1-minute load average when the fingerprint was taken.
  std::optional<double> load_one_minute() const;

  // nullopt: no plan object (a `kbench run` session, or an older kbench).
  std::optional<FingerprintPlan> plan() const;
  // nullopt: no swprofile object.
  std::optional<FingerprintSwprofile> swprofile() const;
  // The sysctls the swprofile sets, name -> value; a value that is not a
  // string reads as its JSON text. Empty when none are recorded.
  std::map<std::string, std::string> sysctl() const;

 private:
  const nlohmann::json& document_;
};

}  // namespace kbench::sysinfo
