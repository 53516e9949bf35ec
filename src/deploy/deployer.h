#pragma once
// Installs a swprofile's kernel on an ssh SUT, boots it (kexec, or a one-shot
// GRUB entry) and checks that the SUT runs exactly that kernel and cmdline
// before anything is measured; power-cycles a SUT that does not come back;
// and brings the SUT back to the kernel it had.
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "deploy/kernel_identity.h"
#include "plan/plan.h"
#include "sut/connection.h"

namespace kbench::deploy {

// What the SUT ran when the plan started.
struct SutKernel {
  std::string release;
  std::string version;
  std::string cmdline;
  std::string boot_id;
  std::string image;   // /boot/vmlinuz-RELEASE when the SUT has it
  std::string initrd;  // its initramfs, "" when none
  std::set<std::string> tools;
};

struct BootReport {
  bool ok = false;
  int number = 0;  // 1-based within this plan execution
  std::string swprofile;
  std::string method;  // kexec | reboot
  std::string started_at;
  double seconds = 0;  // from the boot command to ssh answering from the new boot
  bool power_cycled = false;
  std::string release;  // what the SUT runs after the boot ("" when it never answered)
  std::string version;
  std::string cmdline;
  std::string reason;        // why the boot failed
  std::string console_tail;  // the console log's lines written during a failed boot
  nlohmann::json to_json() const;
};

// A boot of the machine kbench runs on: started by one kbench process, which
// ends with the boot, and judged by the next (a systemd unit resumes the
// plan after the boot). What that one needs to know is kept in a file.
struct LaunchedBoot {
  int number = 0;
  std::string swprofile;
  std::string method;
  std::string started_at;         // ISO 8601 UTC
  std::int64_t started_epoch = 0;  // seconds since 1970, for the boot's duration
  std::string old_boot_id;        // the boot it was started from
  KernelIdentity expected;
  std::vector<std::string> cmdline;
  nlohmann::json to_json() const;
  // Throws RunError naming what is missing or malformed.
  static LaunchedBoot from_json(const nlohmann::json& json);
};

// What a kernel that panics does on the machine kbench runs on: reboot after
// this many seconds (into the default kernel or GRUB entry), so that a bad
// kernel costs a boot, never the machine.
inline constexpr const char* kPanicRebootWord = "panic=10";

// The cmdline with a panic that reboots: kPanicRebootWord appended unless
// the cmdline's last panic= word already reboots (any value but 0, which
// waits forever).
std::vector<std::string> with_panic_reboot(std::vector<std::string> cmdline);
// The panic= word of a swprofile's cmdline that would leave a panicked
// kernel hanging ("panic=0"), "" when there is none.
std::string hanging_panic_word(const std::vector<std::string>& cmdline);

// Verification: the booted kernel against what was asked for. Returns the
// differences ("uname -r is X, expected Y", ...), empty when it matches.
// `expected.version` empty: the image told no build identity.
std::vector<std::string> boot_mismatches(const KernelIdentity& expected, const std::vector<std::string>& expected_cmdline,
                                         const KernelIdentity& running, const std::string& running_cmdline);

// The cmdline a swprofile boots with: the SUT's own (without the words a
// boot loader adds for itself) followed by the swprofile's, or the
// swprofile's alone.
std::vector<std::string> boot_cmdline(const std::string& sut_cmdline, const plan::SwprofileSpec& profile);

class Deployer {
 public:
  using Log = std::function<void(const std::string&)>;
  // Sleeps between looks at a booting SUT; false: interrupted, stop waiting.
  using Sleep = std::function<bool(std::chrono::milliseconds)>;
  // `on_this_machine`: the shell is the machine kbench runs on. Its boots
  // are launched and finished by two kbench processes (launch, finish)
  // instead of awaited, and their cmdline reboots on a panic.
  Deployer(sut::RemoteShell& shell, plan::BootSpec spec, Log log, Sleep sleep, bool on_this_machine = false);

  // Asks the SUT what it runs and which tools it has. Throws RunError when
  // it cannot be reached, InputError when it lacks what the boot method needs.
  void probe();
  // Copies and unpacks a swprofile's kernel and makes its initramfs, once:
  // a stage is kept on the SUT by content and reused by later plans.
  // Throws InputError for a bad kernel file, RunError when the SUT fails.
  void stage(const plan::SwprofileSpec& profile);
  // Boots the staged kernel and verifies it. A kernel that does not come
  // up, or is not what was asked, is a report with ok false; throws RunError
  // when the SUT stays unreachable (no power_cycle, or it did not help).
  BootReport boot(const plan::SwprofileSpec& profile);
  // Back to the kernel and cmdline of probe() time; kbench's boot entries go.
  BootReport restore();

  // On this machine. Called with the boot just before it starts, to keep it.
  using Keep = std::function<void(const LaunchedBoot&)>;
  // Starts the boot into the swprofile's staged kernel and returns without
  // waiting for it. The failed report when it could not be started.
  std::optional<BootReport> launch(const plan::SwprofileSpec& profile, const Keep& keep);
  // Starts the boot back into the kernel and cmdline of the plan's start.
  std::optional<BootReport> launch_restore(const Keep& keep);
  // After the boot, in the next kbench process: what runs, against what was
  // asked. A machine back on its own kernel instead is a failed boot.
  BootReport finish(const LaunchedBoot& launched);
  // Whether the machine runs the kernel and cmdline of the plan's start.
  bool runs_original();
  // Removes kbench's boot entries and module copies (the stages stay).
  void cleanup();
  // What the machine ran when the plan started, kept across its boots (probe
  // sees the kernel of the last boot); its tools stay probe()'s.
  void adopt_original(const SutKernel& original);
  // The boots a plan on this machine started before this process.
  void count_boots(int boots) { boots_ = boots; }
  // Sets sysctls on the booted SUT (the next boot drops them); returns why
  // it failed, "" when it did not.
  std::string apply_sysctls(const std::map<std::string, std::string>& settings);
  const SutKernel& original() const { return original_; }
  int boots() const { return boots_; }

 private:
  struct Staged {
    std::string dir;  // "" for a kernel the SUT has installed
    std::string image;
    std::string initrd;
    KernelIdentity expected;
  };
  struct Target {
    std::string swprofile;
    std::string method;
    Staged kernel;
    std::vector<std::string> cmdline;
  };
  BootReport boot_into(const Target& target);
  Target restore_target() const;
  std::vector<std::string> cmdline_for(const plan::SwprofileSpec& profile) const;
  // Runs the boot script: false (report.reason set) when the boot could not
  // be started. `old_boot_id`: the boot it starts from.
  bool start_boot(const Target& target, BootReport& report, std::string& old_boot_id,
                  const std::function<void(const std::string&)>& before_start = nullptr);
  // After a boot came back: waits for its start-up jobs, records what runs
  // in `report`, and returns how it differs from what was asked.
  std::vector<std::string> check_running(const KernelIdentity& expected, const std::vector<std::string>& cmdline,
                                         BootReport& report);
  std::optional<BootReport> launch_target(const Target& target, const Keep& keep);
  // The new boot id once ssh answers from a new boot; nullopt after the
  // timeout, on an interrupt, or (console_offset given) as soon as the
  // console log shows a kernel panic written after console_offset.
  std::optional<std::string> wait_for_boot(const std::string& old_boot_id, std::chrono::seconds timeout,
                                           std::optional<std::uintmax_t> console_offset = std::nullopt);
  std::map<std::string, std::string> identify();
  std::string console_since(std::uintmax_t offset) const;
  std::uintmax_t console_size() const;
  process::CommandResult run(const char* script, const std::vector<std::string>& args, const std::string& input,
                         std::chrono::milliseconds timeout);
  void require(const process::CommandResult& result, const std::string& what);
  std::string stage_files(const plan::SwprofileSpec& profile, const std::string& dir);

  sut::RemoteShell& shell_;
  plan::BootSpec spec_;
  Log log_;
  Sleep sleep_;
  bool interrupted_ = false;
  bool panicked_ = false;  // the last wait saw a kernel panic on the console
  SutKernel original_;
  std::map<std::string, Staged> staged_;  // by swprofile
  int boots_ = 0;
  bool on_this_machine_ = false;
};

}  // namespace kbench::deploy
