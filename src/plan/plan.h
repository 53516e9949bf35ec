#pragma once
// YAML plans: what to measure, on which SUT, under which swprofiles.
// The shipped suites (plans/quick.yaml, plans/default.yaml) are plans too.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/params.h"
#include "sut/method.h"

namespace kbench::plan {

struct BenchmarkSettings {
  int warmups = 1;
  int repeats = 5;
  int sessions = 1;
  std::chrono::seconds timeout{600};
  std::string size = "default";  // quick | default
  // Sample the kernel during the measured repeats (`kernel_profile: true`,
  // `kbench run --kernel-profile`); `kbench profile` compares the counts.
  bool kernel_profile = false;
};

// The settings a `defaults.families` entry gives, each only where given:
// applied over the plan's defaults when the benchmark is measured, so a
// family keeps the suite's size and timeout and changes only what it names.
struct SettingsPatch {
  std::optional<int> warmups;
  std::optional<int> repeats;
  std::optional<int> sessions;
  std::optional<std::chrono::seconds> timeout;
  std::optional<std::string> size;
  std::optional<bool> kernel_profile;
  BenchmarkSettings over(BenchmarkSettings settings) const;
};

struct BenchmarkEntry {
  std::string name;
  Params params;
  std::optional<BenchmarkSettings> overrides;  // per-benchmark warmups/repeats/...
  int line = 0;                                // 1-based, for error messages
  std::string file;                            // the plan file it was read from (an include's, maybe)
};

// The kernel a swprofile runs. `kernel: PATH` names an image alone (qemu
// boots it; an ssh SUT installs it without modules); the mapping form names
// what an ssh SUT installs: a Debian package, an image with a modules tarball
// (Fastpath's shape), or a kernel already installed on the SUT by its release.
// An image may come with the flattened device tree it boots with (arm64
// boards): checked when the plan is read, and refused on a SUT that cannot
// hand it to the kernel.
struct KernelSource {
  std::string image;    // vmlinuz / bzImage / Image[.gz]
  std::string modules;  // tarball holding lib/modules/RELEASE/...
  std::string config;   // the build's .config, for the fingerprint
  std::string deb;      // a linux-image-*.deb
  std::string release;  // uname -r; alone: an installed kernel on the SUT
  std::string dtb;      // a flattened device tree (.dtb) the image boots with
  bool empty() const { return image.empty() && deb.empty() && release.empty(); }
  // The one-line form stored in fingerprints and shown in errors.
  std::string describe() const;
};

// A kernel kbench builds from a source tree (`build:` instead of `kernel:`);
// src/build/kernel_build.h builds it and fills the swprofile's kernel with
// the result. Paths are absolute after parsing (relative ones are relative
// to the plan's directory).
struct KernelBuildSpec {
  std::string source;                  // the tree: a directory holding Makefile and Kconfig
  std::string ref;                     // a git ref; empty: the tree as it is (working tree state)
  std::string config = "defconfig";    // defconfig | tinyconfig | other make *config target | FILE
  std::vector<std::string> fragments;  // files, or single "CONFIG_X=y|m|n|value" lines
  std::string compiler = "gcc";        // gcc | clang (clang builds with LLVM=1)
  std::vector<std::string> make_args;
  int line = 0;
};

// Whether a config is a make target (tinyconfig, x86_64_defconfig) rather
// than a file: a name of letters, digits, '_' and '-' ending in "config"
// (no '/', no '.': "my.config" and "./myconfig" are files).
bool is_config_target(const std::string& config);

enum class CmdlineMode { Append, Replace };

struct SwprofileSpec {
  std::string name;
  KernelSource kernel;
  std::string initrd;  // qemu: an extra initramfs appended to kbench's own
  std::vector<std::string> cmdline;
  // Deployed kernels: the swprofile's words follow the SUT's own cmdline
  // (append) or are the whole cmdline (replace).
  CmdlineMode cmdline_mode = CmdlineMode::Append;
  std::map<std::string, std::string> sysctl;
  // A command the agent runs under in this swprofile's sessions (local and
  // ssh SUTs): `wrapper... kbench-agent ...`, e.g. a CPU or memory policy, a
  // sandbox, or a cost put on purpose on one side of an A/A comparison.
  std::vector<std::string> wrapper;
  std::optional<KernelBuildSpec> build;  // never together with a non-empty kernel
  // What was built (BuiltKernel::info); filled by build::resolve_builds and
  // stored in the session fingerprint as swprofile.build.
  nlohmann::json build_info;
  int line = 0;
};

// How an ssh or local SUT boots a swprofile's kernel (sut.boot). Present:
// every session is a fresh boot.
struct BootSpec {
  std::string method = "kexec";  // kexec | reboot
  std::chrono::seconds timeout{600};  // for ssh to come back after a boot
  std::string power_cycle;   // a command run on the controller when it does not
  std::string console_log;   // a file on the controller the SUT's console is logged to
  int line = 0;
};

struct SutSpec {
  std::string name;
  std::string method = sut::kDefaultMethod;  // a registered method (sut/method.h)
  std::map<std::string, std::string> params;
  std::optional<BootSpec> boot;
  // The declared SUT class (e.g. aws-m7g): stored as the session
  // fingerprint's sut_class instead of the one the agent derives. Empty: the
  // agent's.
  std::string sut_class;
  int line = 0;
};

// What a SUT class may be called: letters, digits, '.', '_', '-', up to 64.
bool valid_sut_class(const std::string& name);

// What may name a swprofile or a SUT, in a plan or on the command line: empty
// when `name` may, else what a name is expected to be ("a non-blank name
// without control characters", "a name in UTF-8"), for the error message.
std::string name_expectation(const std::string& name);

// The order of the benchmarks within a session. Shuffled (the default): a
// different order per session, from a seed of the run and the session, so
// the machine's drift during a session falls on every benchmark alike and
// --resume finds the same order again. Listed: the plan's order every time.
enum class Order { Shuffled, Listed };

// How the sessions of a plan with suts: are laid out. Interleaved (the
// default): every SUT alternates the swprofiles on its own. Crossover: two
// SUTs of one class run the two swprofiles in opposite orders, in step, so
// that at every moment each measures the other swprofile; the sessions
// measured side by side are a pair (the fingerprint's plan.pair), which
// cancels what the two SUTs share at that moment (the lab's drift). Duet:
// one SUT that is a VM on this machine, measured by two VMs at once, each
// on one half of this machine's CPUs, swapping halves every round; the unit
// a pair's two sessions differ in is the CPU half.
enum class Design { Interleaved, Crossover, Duet };

struct Plan {
  std::string path;
  Order order = Order::Shuffled;
  Design design = Design::Interleaved;
  int design_line = 0;  // of the design key, for errors found after parsing
  std::optional<SutSpec> sut;
  // `suts:`, several SUTs run in parallel (never together with `sut`).
  std::vector<SutSpec> suts;
  std::vector<SwprofileSpec> swprofiles;
  std::vector<BenchmarkEntry> benchmarks;
  BenchmarkSettings defaults;
  // `defaults.families`: per benchmark family (the part of a name before
  // the '/'), what differs from `defaults`.
  std::map<std::string, SettingsPatch> family_defaults;

  // Settings for one entry: its own overrides when it has them, else the
  // plan's defaults with its family's patch.
  BenchmarkSettings settings_for(const BenchmarkEntry& entry) const;
  // The plan as one SUT of `suts` runs it: `sut` set to that SUT, no list.
  Plan for_sut(const SutSpec& one) const;
};

// The registered connection method of a plan's SUT (the default method
// when the plan names no SUT): what plans, the runner, the fleet, bisect and
// the kernel build ask instead of a method's name.
const sut::Method& sut_method(const SutSpec& sut);
const sut::Method& sut_method(const Plan& plan);
// The connection to `sut`. A BootsKernel method boots one swprofile's
// kernel: one connection per swprofile, `swprofile` required (else an
// InputError naming it); the others ignore it. Throws InputError for bad
// params, RunError when the agent cannot be found.
std::unique_ptr<sut::Connection> connect(const SutSpec& sut, const SwprofileSpec* swprofile);
// sut.boot on the machine kbench runs on: kbench itself is restarted after
// each boot (runner/local_boot.h).
bool boots_this_machine(const Plan& plan);

// Throws InputError "<file>:<line>: <key>: expected ..." for any problem,
// including duplicate keys. A plan's top-level `include: FILE` (relative to
// the plan's directory) adds FILE's benchmarks before its own and takes
// FILE's sut, swprofiles and defaults where the plan gives none.
Plan load_plan(const std::string& path);
Plan parse_plan(const std::string& yaml_text, const std::string& name_for_errors);

// The largest plan file accepted: plans are hand-written, and reading
// /dev/zero or a huge file must not exhaust memory.
inline constexpr std::size_t kMaxPlanBytes = 1 << 20;
// The text of a plan file, refused (InputError) when unreadable or larger
// than kMaxPlanBytes, whatever kind of file it is.
std::string read_plan_text(const std::string& path);

// "10m", "30s", "1h", "1h30m", "500ms" -> duration; throws InputError naming `what`.
std::chrono::milliseconds parse_duration(const std::string& text, const std::string& what);

// What a plan and the command line accept for a benchmark's settings.
inline constexpr int kMaxRepeats = 10000;
inline constexpr int kMaxWarmups = 10000;
inline constexpr int kMaxSessions = 10000;
inline constexpr std::chrono::seconds kMinTimeout{1};
inline constexpr std::chrono::seconds kMaxTimeout{24 * 3600};

// A benchmark timeout: a duration in whole seconds from kMinTimeout to
// kMaxTimeout. Throws InputError "<what> '<text>': expected ..." otherwise.
std::chrono::seconds parse_timeout(const std::string& text, const std::string& what);

}  // namespace kbench::plan
