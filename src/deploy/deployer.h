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
  Deployer(sut::RemoteShell& shell, plan::BootSpec spec, Log log, Sleep sleep);

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
  // The new boot id once ssh answers from a new boot; nullopt after the
  // timeout, on an interrupt, or (console_offset given) as soon as the
  // console log shows a kernel panic written after console_offset.
  std::optional<std::string> wait_for_boot(const std::string& old_boot_id, std::chrono::seconds timeout,
                                           std::optional<std::uintmax_t> console_offset = std::nullopt);
  std::map<std::string, std::string> identify();
  std::string console_since(std::uintmax_t offset) const;
  std::uintmax_t console_size() const;
  sut::CommandResult run(const char* script, const std::vector<std::string>& args, const std::string& input,
                         std::chrono::milliseconds timeout);
  void require(const sut::CommandResult& result, const std::string& what);
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
};

}  // namespace kbench::deploy
