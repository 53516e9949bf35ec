#include "deploy/deployer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/errors.h"
#include "common/utc_time.h"
#include "deploy/remote_scripts.h"
#include "process/process.h"
#include "sysinfo/sha256.h"

namespace kbench::deploy {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
namespace fs = std::filesystem;

constexpr seconds kQuickCommand{30};
constexpr seconds kStageCommand{30 * 60};  // unpacking and an initramfs under emulation are slow
constexpr seconds kPowerCycleCommand{120};
constexpr seconds kSettleCommand{180};
constexpr seconds kPollInterval{3};
constexpr std::size_t kConsoleLines = 25;
constexpr std::uintmax_t kMaxImageBytes = std::uintmax_t{512} << 20;

std::map<std::string, std::string> key_values(const std::string& text) {
  std::map<std::string, std::string> values;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Words a boot loader adds for itself, not asked for by anybody.
bool loader_word(const std::string& word) { return word.rfind("BOOT_IMAGE=", 0) == 0; }

std::vector<std::string> without_loader_words(std::vector<std::string> words) {
  std::erase_if(words, loader_word);
  return words;
}

std::string read_local(const std::string& path, const std::string& what) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || !fs::is_regular_file(path)) throw InputError(what + " " + path + ": expected a readable file");
  if (size > kMaxImageBytes * 4) throw InputError(what + " " + path + ": larger than 2 GiB (expected a kernel file)");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    throw InputError(what + " " + path + ": expected a readable file");
  }
  return bytes;
}

std::string last_line(const std::string& text) {
  std::string tail = process::last_lines(text, 1);
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  return tail;
}

bool shows_panic(const std::string& console) {
  return console.find("Kernel panic - not syncing") != std::string::npos;
}

std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\t' || (u >= 0x20 && u != 0x7f)) out += c;
  }
  return out;
}

}  // namespace

nlohmann::json BootReport::to_json() const {
  return {{"number", number}, {"swprofile", swprofile}, {"method", method}, {"started_at", started_at},
          {"seconds", seconds}, {"power_cycled", power_cycled}, {"release", release}, {"version", version},
          {"cmdline", cmdline}, {"ok", ok}, {"reason", reason}};
}

nlohmann::json LaunchedBoot::to_json() const {
  return {{"number", number},
          {"swprofile", swprofile},
          {"method", method},
          {"started_at", started_at},
          {"started_epoch", started_epoch},
          {"old_boot_id", old_boot_id},
          {"expected_release", expected.release},
          {"expected_version", expected.version},
          {"cmdline", cmdline}};
}

LaunchedBoot LaunchedBoot::from_json(const nlohmann::json& json) {
  try {
    LaunchedBoot boot;
    boot.number = json.at("number").get<int>();
    boot.swprofile = json.at("swprofile").get<std::string>();
    boot.method = json.at("method").get<std::string>();
    boot.started_at = json.at("started_at").get<std::string>();
    boot.started_epoch = json.at("started_epoch").get<std::int64_t>();
    boot.old_boot_id = json.at("old_boot_id").get<std::string>();
    boot.expected.release = json.at("expected_release").get<std::string>();
    boot.expected.version = json.at("expected_version").get<std::string>();
    boot.cmdline = json.at("cmdline").get<std::vector<std::string>>();
    return boot;
  } catch (const nlohmann::json::exception& e) {
    throw RunError(std::string("a launched boot's record: expected number, swprofile, method, started_at, "
                               "started_epoch, old_boot_id, expected_release, expected_version and cmdline (") +
                   e.what() + ")");
  }
}

namespace {

// The value of the cmdline's last panic= word (the kernel takes the last),
// nullopt when it has none or the value is not a number.
std::optional<long> last_panic_value(const std::vector<std::string>& cmdline) {
  std::optional<long> value;
  for (const auto& word : cmdline) {
    if (word.rfind("panic=", 0) != 0) continue;
    try {
      std::size_t used = 0;
      const long parsed = std::stol(word.substr(6), &used);
      value = used == word.size() - 6 ? std::optional<long>(parsed) : std::nullopt;
    } catch (const std::exception&) {
      value = std::nullopt;
    }
  }
  return value;
}

}  // namespace

std::vector<std::string> with_panic_reboot(std::vector<std::string> cmdline) {
  const auto value = last_panic_value(cmdline);
  if (!value || *value == 0) cmdline.push_back(kPanicRebootWord);
  return cmdline;
}

std::string hanging_panic_word(const std::vector<std::string>& cmdline) {
  std::string last;
  for (const auto& word : cmdline) {
    if (word.rfind("panic=", 0) == 0) last = word;
  }
  return !last.empty() && last_panic_value({last}) == 0 ? last : "";
}

std::vector<std::string> boot_cmdline(const std::string& sut_cmdline, const plan::SwprofileSpec& profile) {
  std::vector<std::string> words;
  if (profile.cmdline_mode == plan::CmdlineMode::Append) words = without_loader_words(words_of(sut_cmdline));
  words.insert(words.end(), profile.cmdline.begin(), profile.cmdline.end());
  return words;
}

std::vector<std::string> boot_mismatches(const KernelIdentity& expected, const std::vector<std::string>& expected_cmdline,
                                         const KernelIdentity& running, const std::string& running_cmdline) {
  std::vector<std::string> differences;
  if (!expected.release.empty() && running.release != expected.release) {
    differences.push_back(fmt::format("uname -r is '{}', expected '{}'", running.release, expected.release));
  }
  if (!expected.version.empty() && running.version != expected.version) {
    differences.push_back(fmt::format("uname -v is '{}', expected '{}' (another build of the release)", running.version,
                                      expected.version));
  }
  const auto running_words = without_loader_words(words_of(running_cmdline));
  if (running_words != without_loader_words(expected_cmdline)) {
    differences.push_back(fmt::format("/proc/cmdline is '{}', expected '{}'", fmt::join(running_words, " "),
                                      fmt::join(expected_cmdline, " ")));
  }
  return differences;
}

Deployer::Deployer(sut::RemoteShell& shell, plan::BootSpec spec, Log log, Sleep sleep, bool on_this_machine)
    : shell_(shell),
      spec_(std::move(spec)),
      log_(std::move(log)),
      sleep_(std::move(sleep)),
      on_this_machine_(on_this_machine) {}

process::CommandResult Deployer::run(const char* script, const std::vector<std::string>& args, const std::string& input,
                                 milliseconds timeout) {
  std::vector<std::string> words = {script};
  words.insert(words.end(), args.begin(), args.end());
  return shell_.run_script(scripts::kAsRoot, words, input, timeout);
}

void Deployer::require(const process::CommandResult& result, const std::string& what) {
  if (!result.timed_out && result.exit_status == 0) return;
  std::string reason = result.timed_out ? "timed out" : fmt::format("exit status {}", result.exit_status);
  if (result.exit_status == 255) reason += " (ssh could not connect)";
  const std::string said = last_line(result.err);
  throw RunError(fmt::format("{}: {} failed: {}{}", shell_.describe_target(), what, reason,
                             said.empty() ? "" : ": " + said));
}

std::map<std::string, std::string> Deployer::identify() {
  const auto result = shell_.run_script(scripts::kIdentify, {}, "", kQuickCommand);
  require(result, "asking which kernel runs");
  return key_values(result.out);
}

void Deployer::probe() {
  const auto result = run(scripts::kProbe, {}, "", kQuickCommand);
  require(result, "probing the SUT for kernel deployment");
  const auto values = key_values(result.out);
  original_.release = values.count("release") ? values.at("release") : "";
  original_.version = values.count("version") ? values.at("version") : "";
  original_.cmdline = values.count("cmdline") ? values.at("cmdline") : "";
  original_.boot_id = values.count("boot_id") ? values.at("boot_id") : "";
  original_.image = values.count("image") ? values.at("image") : "";
  original_.initrd = values.count("initrd") ? values.at("initrd") : "";
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("tool=", 0) == 0) original_.tools.insert(line.substr(5));
  }
  const std::string needed = spec_.method == "kexec" ? "kexec" : "grub-reboot";
  if (!original_.tools.count(needed)) {
    throw RunError(fmt::format("{}: sut.boot.method {} needs {} on the SUT, which it lacks{}", shell_.describe_target(),
                               spec_.method, needed,
                               spec_.method == "kexec" ? " (Debian: apt-get install kexec-tools)" : " (GRUB)"));
  }
  for (const char* tool : {"sha256sum", "tar"}) {
    if (!original_.tools.count(tool)) {
      throw RunError(fmt::format("{}: installing kernels needs {} on the SUT", shell_.describe_target(), tool));
    }
  }
  log_(fmt::format("kbench: {} runs {} ({}); boots by {}", shell_.describe_target(), original_.release,
                   original_.version, spec_.method));
}

std::string Deployer::stage_files(const plan::SwprofileSpec& profile, const std::string& dir) {
  const auto& kernel = profile.kernel;
  std::vector<std::pair<std::string, std::string>> files;  // name on the SUT, local path
  std::string kind;
  if (!kernel.deb.empty()) {
    kind = "deb";
    files = {{"kernel.deb", kernel.deb}};
  } else {
    kind = "image";
    files = {{"image", kernel.image}};
    if (!kernel.modules.empty()) files.emplace_back("modules.tar", kernel.modules);
    if (!kernel.config.empty()) files.emplace_back("config", kernel.config);
  }
  std::string expected_release = kernel.release;
  for (const auto& [name, path] : files) {
    const std::string bytes = read_local(path, "swprofile " + profile.name + ": kernel");
    if (name == "image") {
      if (const auto identity = identity_of_image(bytes); identity && expected_release.empty()) {
        expected_release = identity->release;
      }
    }
    const std::string sha = sysinfo::sha256_hex(bytes);
    log_(fmt::format("kbench: copying {} ({:.1f} MB) to {}", path, bytes.size() / 1e6, shell_.describe_target()));
    const auto result = run(scripts::kReceiveFile, {dir, name}, bytes, kStageCommand);
    require(result, "copying " + path);
    if (result.out.substr(0, 64) != sha) {
      throw RunError(fmt::format("{}: {} arrived with sha256 {}, expected {}", shell_.describe_target(), path,
                                 result.out.substr(0, 64), sha));
    }
  }
  return kind + " " + expected_release;
}

void Deployer::stage(const plan::SwprofileSpec& profile) {
  const auto& kernel = profile.kernel;
  Staged staged;
  if (kernel.deb.empty() && kernel.image.empty()) {
    // A kernel the SUT has installed, by default the one it runs: its own
    // /boot files.
    const std::string release = kernel.release.empty() ? original_.release : kernel.release;
    const auto result = run("r=$1; [ -e /boot/vmlinuz-$r ] || exit 3; echo image=/boot/vmlinuz-$r;"
                            " for i in /boot/initrd.img-$r /boot/initramfs-$r.img; do [ -e $i ] && echo initrd=$i; done;"
                            " exit 0",
                            {release}, "", kQuickCommand);
    if (result.exit_status == 3) {
      throw InputError(fmt::format("swprofile {}: kernel.release {}: the SUT has no /boot/vmlinuz-{}", profile.name,
                                   release, release));
    }
    require(result, "looking for kernel " + release);
    const auto values = key_values(result.out);
    staged.image = values.at("image");
    staged.initrd = values.count("initrd") ? values.at("initrd") : "";
  } else {
    // The stage is named by the content's hash: an unchanged kernel is
    // copied once, a rebuilt one of the same release gets its own stage.
    std::string hashes;
    for (const auto* path : {&kernel.deb, &kernel.image, &kernel.modules, &kernel.config}) {
      hashes += path->empty() ? "-" : sysinfo::sha256_hex(read_local(*path, "swprofile " + profile.name + ": kernel"));
    }
    staged.dir = std::string(scripts::kStageRoot) + "/" + sysinfo::sha256_hex(hashes).substr(0, 16);
    const auto state = run(scripts::kStageState, {staged.dir}, "", kQuickCommand);
    require(state, "looking for a staged kernel");
    if (state.out.rfind("ready ", 0) != 0) {
      const std::string kind_and_release = stage_files(profile, staged.dir);
      const auto space = kind_and_release.find(' ');
      log_(fmt::format("kbench: unpacking the kernel of {} and making its initramfs on the SUT", profile.name));
      const std::string script = std::string(scripts::kActivateFunction) + scripts::kUnpack + scripts::kUnpackFinish;
      const auto unpacked = run(script.c_str(),
                                {staged.dir, kind_and_release.substr(0, space), kind_and_release.substr(space + 1)}, "",
                                kStageCommand);
      require(unpacked, "installing the kernel of swprofile " + profile.name);
    }
    staged.image = staged.dir + "/vmlinuz";
    staged.initrd = staged.dir + "/initrd.img";
    const auto has_initrd = run("[ -e \"$1\" ]", {staged.initrd}, "", kQuickCommand);
    if (has_initrd.exit_status != 0) staged.initrd.clear();
  }
  // The build identity to verify after the boot, read from the image on the
  // SUT: the same bytes that will be booted (as root: some distributions
  // keep /boot/vmlinuz-* unreadable to users).
  const auto image = run("cat \"$1\"", {staged.image}, "", kStageCommand);
  require(image, "reading " + staged.image);
  if (const auto identity = identity_of_image(image.out)) {
    staged.expected = *identity;
  } else {
    log_(fmt::format("kbench: warning: {} tells no release or build in its bytes; only uname -r and the cmdline are "
                     "checked after its boots",
                     staged.image));
    staged.expected.release = kernel.release.empty() && staged.dir.empty() ? original_.release : kernel.release;
  }
  if (staged.dir.size()) {
    const auto release = run("cat \"$1/release\"", {staged.dir}, "", kQuickCommand);
    const std::string staged_release = last_line(release.out);
    if (!staged.expected.release.empty() && staged_release != staged.expected.release) {
      throw InputError(fmt::format("swprofile {}: the image says release {} but its modules are {}", profile.name,
                                   staged.expected.release, staged_release));
    }
    staged.expected.release = staged_release;
  }
  if (!kernel.release.empty() && kernel.release != staged.expected.release) {
    throw InputError(fmt::format("swprofile {}: kernel.release is {} but the kernel is {}", profile.name, kernel.release,
                                 staged.expected.release));
  }
  log_(fmt::format("kbench: {} staged: {} {}", profile.name, staged.expected.release, staged.expected.version));
  staged_[profile.name] = staged;
}

std::uintmax_t Deployer::console_size() const {
  std::error_code ec;
  if (spec_.console_log.empty()) return 0;
  const auto size = fs::file_size(spec_.console_log, ec);
  return ec ? 0 : size;
}

std::string Deployer::console_since(std::uintmax_t offset) const {
  if (spec_.console_log.empty()) return "";
  std::ifstream in(spec_.console_log, std::ios::binary);
  if (!in) return "";
  if (console_size() < offset) offset = 0;  // rotated
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream text;
  text << in.rdbuf();
  return printable(process::last_lines(text.str(), kConsoleLines));
}

std::optional<std::string> Deployer::wait_for_boot(const std::string& old_boot_id, seconds timeout,
                                                   std::optional<std::uintmax_t> console_offset) {
  panicked_ = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    // A panicked kernel never answers: waiting out the timeout would only
    // delay the power cycle. Looked at before each ssh attempt, which can
    // itself wait a connect timeout on a dead SUT.
    if (console_offset && shows_panic(console_since(*console_offset))) {
      panicked_ = true;
      return std::nullopt;
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    const auto result = shell_.run_script("cat /proc/sys/kernel/random/boot_id", {}, "",
                                          std::min<milliseconds>(left, kQuickCommand));
    const std::string boot_id = last_line(result.out);
    if (result.exit_status == 0 && !boot_id.empty() && boot_id != old_boot_id) return boot_id;
    if (!sleep_(kPollInterval)) {
      interrupted_ = true;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool Deployer::start_boot(const Target& target, BootReport& report, std::string& old_boot_id,
                          const std::function<void(const std::string&)>& before_start) {
  report.number = ++boots_;
  report.swprofile = target.swprofile;
  report.method = target.method;
  report.started_at = utc_now_iso8601();
  const auto before = identify();
  old_boot_id = before.count("boot_id") ? before.at("boot_id") : "";
  if (before_start) before_start(old_boot_id);
  const std::string script = std::string(scripts::kActivateFunction) + scripts::kBoot;
  const auto launched = run(script.c_str(),
                            {target.method, target.kernel.image, target.kernel.initrd,
                             fmt::format("{}", fmt::join(target.cmdline, " ")), target.kernel.dir,
                             on_this_machine_ ? "queue" : ""},
                            "", kStageCommand);
  if (launched.timed_out || launched.exit_status != 0) {
    report.reason = fmt::format("starting the {} failed: {}", target.method, last_line(launched.err));
    return false;
  }
  return true;
}

std::vector<std::string> Deployer::check_running(const KernelIdentity& expected,
                                                 const std::vector<std::string>& cmdline, BootReport& report) {
  // sshd (or the resume unit) starts before the boot has finished:
  // measuring beside the rest of the boot's start-up work would charge it to
  // the kernel.
  shell_.run_script(scripts::kSettle, {}, "", kSettleCommand);
  const auto now = identify();
  report.release = now.count("release") ? now.at("release") : "";
  report.version = now.count("version") ? now.at("version") : "";
  report.cmdline = now.count("cmdline") ? now.at("cmdline") : "";
  return boot_mismatches(expected, cmdline, {report.release, report.version}, report.cmdline);
}

BootReport Deployer::boot_into(const Target& target) {
  BootReport report;
  const auto console_offset = console_size();
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  std::string old_boot_id;
  if (!start_boot(target, report, old_boot_id)) {
    report.seconds = elapsed();
    return report;
  }
  auto back = wait_for_boot(old_boot_id, spec_.timeout, console_offset);
  if (!back) {
    if (interrupted_) {
      report.reason = "interrupted while waiting for the boot";
      return report;
    }
    const std::string console = console_since(console_offset);
    const std::string no_answer =
        panicked_ ? fmt::format("the console shows a kernel panic {:.0f}s after the {} into {}", elapsed(),
                                target.method, target.swprofile)
                  : fmt::format("no ssh answer from a new boot within {}s of the {} into {}", spec_.timeout.count(),
                                target.method, target.swprofile);
    if (spec_.power_cycle.empty()) {
      throw RunError(no_answer + "; no sut.boot.power_cycle command to recover the SUT" +
                     (console.empty() ? "" : "; console:\n" + console));
    }
    log_("kbench: " + no_answer + "; power-cycling: " + spec_.power_cycle);
    const auto cycled = process::run_command({"sh", "-c", spec_.power_cycle}, "", kPowerCycleCommand);
    report.power_cycled = true;
    if (cycled.timed_out || cycled.exit_status != 0) {
      log_(fmt::format("kbench: warning: power_cycle exited {}: {}", cycled.timed_out ? -1 : cycled.exit_status,
                       last_line(cycled.err)));
    }
    back = wait_for_boot(old_boot_id, spec_.timeout);
    if (!back) {
      throw RunError(fmt::format("{}; power-cycled, and still no ssh answer within {}s", no_answer,
                                 spec_.timeout.count()) +
                     (console.empty() ? "" : "; console:\n" + console));
    }
    shell_.forget_agent();
    const auto now = identify();
    report.seconds = elapsed();
    report.release = now.count("release") ? now.at("release") : "";
    report.version = now.count("version") ? now.at("version") : "";
    report.cmdline = now.count("cmdline") ? now.at("cmdline") : "";
    report.reason = fmt::format("{}; power-cycled, back after {:.0f}s running {}", no_answer, report.seconds,
                                report.release);
    report.console_tail = console;
    return report;
  }
  report.seconds = elapsed();
  shell_.forget_agent();
  const auto differences = check_running(target.kernel.expected, target.cmdline, report);
  if (!differences.empty()) {
    report.reason = fmt::format("the SUT came back {:.0f}s after the {}, but {}", report.seconds, target.method,
                                fmt::join(differences, "; "));
    report.console_tail = console_since(console_offset);
    return report;
  }
  report.ok = true;
  return report;
}

std::optional<BootReport> Deployer::launch_target(const Target& target, const Keep& keep) {
  BootReport report;
  LaunchedBoot launched;
  launched.swprofile = target.swprofile;
  launched.method = target.method;
  launched.expected = target.kernel.expected;
  launched.cmdline = target.cmdline;
  std::string old_boot_id;
  // Kept before the boot starts: from then on this process may end at any
  // moment, and the run after the boot must find what it was for.
  const bool started = start_boot(target, report, old_boot_id, [&](const std::string& boot_id) {
    launched.number = report.number;
    launched.started_at = report.started_at;
    launched.started_epoch = std::chrono::duration_cast<seconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count();
    launched.old_boot_id = boot_id;
    keep(launched);
  });
  if (!started) return report;
  return std::nullopt;
}

std::vector<std::string> Deployer::cmdline_for(const plan::SwprofileSpec& profile) const {
  auto words = boot_cmdline(original_.cmdline, profile);
  // A kernel that panics on this machine must reboot it, never leave it
  // hanging: there is no power_cycle for the machine kbench runs on.
  return on_this_machine_ ? with_panic_reboot(std::move(words)) : words;
}

std::optional<BootReport> Deployer::launch(const plan::SwprofileSpec& profile, const Keep& keep) {
  const auto staged = staged_.find(profile.name);
  if (staged == staged_.end()) throw RunError("swprofile " + profile.name + " was not staged before its boot");
  return launch_target({profile.name, spec_.method, staged->second, cmdline_for(profile)}, keep);
}

std::optional<BootReport> Deployer::launch_restore(const Keep& keep) { return launch_target(restore_target(), keep); }

BootReport Deployer::finish(const LaunchedBoot& launched) {
  BootReport report;
  report.number = launched.number;
  report.swprofile = launched.swprofile;
  report.method = launched.method;
  report.started_at = launched.started_at;
  boots_ = std::max(boots_, launched.number);
  const auto now_epoch =
      std::chrono::duration_cast<seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const auto before = identify();
  const std::string boot_id = before.count("boot_id") ? before.at("boot_id") : "";
  if (boot_id == launched.old_boot_id) {
    report.seconds = static_cast<double>(now_epoch - launched.started_epoch);
    report.release = before.count("release") ? before.at("release") : "";
    report.reason = fmt::format("this machine did not boot: it still runs the boot the {} into {} was started from",
                                launched.method, launched.swprofile);
    return report;
  }
  const auto differences = check_running(launched.expected, launched.cmdline, report);
  // Until the resumed run looked: the unit starts late in the boot.
  report.seconds = static_cast<double>(now_epoch - launched.started_epoch);
  if (differences.empty()) {
    report.ok = true;
    return report;
  }
  const bool own_kernel = report.release == original_.release && report.version == original_.version &&
                          !(launched.expected == KernelIdentity{original_.release, original_.version});
  if (own_kernel) {
    report.reason = fmt::format("this machine came back {:.0f}s after the {} into {} on its own kernel {}: the "
                                "kernel did not come up (a panic reboots through {}), or the machine was reset",
                                report.seconds, launched.method, launched.swprofile, report.release,
                                kPanicRebootWord);
  } else {
    report.reason = fmt::format("this machine came back {:.0f}s after the {}, but {}", report.seconds,
                                launched.method, fmt::join(differences, "; "));
  }
  return report;
}

bool Deployer::runs_original() {
  const auto now = identify();
  auto value = [&](const char* key) { return now.count(key) ? now.at(key) : std::string(); };
  return value("release") == original_.release && value("version") == original_.version &&
         without_loader_words(words_of(value("cmdline"))) == without_loader_words(words_of(original_.cmdline));
}

void Deployer::adopt_original(const SutKernel& original) {
  auto tools = std::move(original_.tools);
  original_ = original;
  original_.tools = std::move(tools);
}

BootReport Deployer::boot(const plan::SwprofileSpec& profile) {
  const auto staged = staged_.find(profile.name);
  if (staged == staged_.end()) throw RunError("swprofile " + profile.name + " was not staged before its boot");
  return boot_into({profile.name, spec_.method, staged->second, cmdline_for(profile)});
}

std::string Deployer::apply_sysctls(const std::map<std::string, std::string>& settings) {
  if (settings.empty()) return "";
  std::vector<std::string> args;
  for (const auto& [key, value] : settings) args.push_back(key + "=" + value);
  const auto result = run(scripts::kSysctl, args, "", kQuickCommand);
  if (result.timed_out || result.exit_status != 0) {
    const std::string said = last_line(result.err);
    return said.empty() ? "setting the sysctls failed" : said;
  }
  return "";
}

Deployer::Target Deployer::restore_target() const {
  Target target;
  target.swprofile = "(the SUT's own kernel)";
  target.kernel.expected = {original_.release, original_.version};
  target.cmdline = words_of(original_.cmdline);
  if (spec_.method == "kexec" && !original_.image.empty()) {
    target.method = "kexec";
    target.kernel.image = original_.image;
    target.kernel.initrd = original_.initrd;
  } else {
    target.method = "default";  // a plain reboot into the default entry
  }
  return target;
}

void Deployer::cleanup() {
  const auto cleaned = run(scripts::kCleanup, {}, "", kStageCommand);
  if (cleaned.timed_out || cleaned.exit_status != 0) {
    log_("kbench: warning: removing kbench's boot entries failed: " + last_line(cleaned.err));
  }
}

BootReport Deployer::restore() {
  BootReport report = boot_into(restore_target());
  cleanup();
  return report;
}

}  // namespace kbench::deploy
