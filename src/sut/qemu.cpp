// The agent inside a kernel booted in QEMU. Each start_agent boots the VM
// once: an initramfs holds busybox, the agent, its arguments and an /init
// that runs it and sends every output line over a results channel (a second
// serial port on x86-64, a virtio-serial port on aarch64), framed and
// checksummed, then powers off. A relay process (the process-group leader
// the runner sees) checks the frames and passes on only verified JSON Lines,
// so kernel console noise or a corrupted line never reaches the store.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "assets/sut/init_mounts.sh.h"
#include "assets/sut/init_results_virtio.sh.h"
#include "assets/sut/init_results_x86.sh.h"
#include "assets/sut/init_end_poweroff.sh.h"
#include "assets/sut/init_run.sh.h"
#include "common/device_tree.h"
#include "common/errors.h"
#include "common/records.h"
#include "common/temp_directory.h"
#include "process/process.h"
#include "sut/connection.h"
#include "sut/initramfs.h"
#include "sut/method.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::sut {

namespace {

namespace fs = std::filesystem;
using process::Clock;
using process::write_all;

// The aarch64 results port: assets/sut/init_results_virtio.sh waits for a
// port of this name.
constexpr const char* kResultsPortName = "org.kbench.results";

constexpr std::size_t kConsoleTailLines = 25;

std::string host_machine() {
  utsname host{};
  uname(&host);
  return normalized_machine(host.machine);
}

struct QemuParams {
  std::string arch = host_machine();  // x86_64 | aarch64, as uname -m inside
  std::string memory = "1024M";
  std::string cpus = "1";
  std::string accel = "auto";  // auto | kvm | tcg
  int icount_shift = -1;        // -1: the guest's clock is the host's
  std::string cpu_model = "max";
  std::string qemu;  // default: qemu-system-<arch>
  std::string busybox = "/bin/busybox";
  std::chrono::seconds boot_timeout{180};
  std::chrono::seconds kvm_probe_timeout{30};
};

std::chrono::seconds parse_seconds(const std::string& key, const std::string& value) {
  char* end = nullptr;
  const long seconds = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || seconds <= 0) {
    throw InputError("sut.connection.params." + key + ": expected a number of seconds, got '" + value + "'");
  }
  return std::chrono::seconds(seconds);
}

constexpr const char* kQemuMethod = "qemu";

const std::vector<ParamSpec>& qemu_param_specs() {
  static const std::vector<ParamSpec> specs = {
      ParamSpec{"arch", "", "", "the guest's architecture, x86_64 or aarch64 (amd64, arm64); default: the host's"},
      ParamSpec{"memory", "1024M", "1024M", "the guest's memory, as qemu -m takes it"},
      ParamSpec{"cpus", "1", "1", "the guest's CPUs"}.integer(1, 1e9),
      ParamSpec{"accel", "auto", "auto", "the accelerator: KVM when it works, else TCG"}.choice(
          {"auto", "kvm", "tcg", "tcg-single"}),
      ParamSpec{"icount", "", "", "the guest's clock counts instructions, 2^N ns each (TCG only): "
                                  "times measured inside are then instruction counts, free of the host's load"}
          .integer(0, 10),
      ParamSpec{"cpu", "max", "max", "qemu -cpu"},
      ParamSpec{"qemu", "", "", "the QEMU binary; default: qemu-system-<arch>"},
      ParamSpec{"busybox", "/bin/busybox", "/bin/busybox", "a static busybox built for the guest, its /init"},
      ParamSpec{"boot_timeout", "180", "180", "seconds a boot may take to reach /init"}.integer(1, 1e9),
      ParamSpec{"kvm_probe_timeout", "30", "30", "seconds accel auto's probe boot may take"}.integer(1, 1e9),
  };
  return specs;
}

QemuParams parse_qemu_params(const std::map<std::string, std::string>& params) {
  QemuParams parsed;
  for (const auto& [key, value] : params) {
    if (key == "arch") {
      parsed.arch = guest_arch(value);
    } else if (key == "memory") {
      parsed.memory = value;
    } else if (key == "cpus") {
      parsed.cpus = value;
    } else if (key == "accel") {
      parsed.accel = value;
    } else if (key == "icount") {
      parsed.icount_shift = std::stoi(value);
    } else if (key == "cpu") {
      parsed.cpu_model = value;
    } else if (key == "qemu") {
      parsed.qemu = value;
    } else if (key == "busybox") {
      parsed.busybox = value;
    } else if (key == "boot_timeout") {
      parsed.boot_timeout = parse_seconds(key, value);
    } else if (key == "kvm_probe_timeout") {
      parsed.kvm_probe_timeout = parse_seconds(key, value);
    }
  }
  if (parsed.qemu.empty()) parsed.qemu = "qemu-system-" + parsed.arch;
  // QEMU counts instructions only when it translates them itself.
  if (parsed.icount_shift >= 0 && parsed.accel == "kvm") {
    throw InputError("sut.connection.params.icount: counts the instructions TCG executes; expected accel tcg, "
                     "tcg-single or auto, got kvm");
  }
  // KVM runs guests of the host's own architecture only.
  if (parsed.accel == "kvm" && parsed.arch != host_machine()) {
    throw InputError("sut.connection.params.accel: kvm runs " + host_machine() + " guests on this " + host_machine() +
                     " host, the guest is " + parsed.arch + " (use accel: tcg or auto)");
  }
  return parsed;
}


void write_whole(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw RunError("cannot write " + path);
}

std::string console_tail(const std::string& console_log) {
  std::ifstream in(console_log, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string tail = process::last_lines(text.str(), kConsoleTailLines);
  std::erase(tail, '\r');
  return tail.empty() ? "(the console log is empty)" : tail;
}

class QemuConnection final : public Connection {
 public:
  QemuConnection(QemuParams params, QemuBoot boot, std::string agent_path)
      : params_(std::move(params)), boot_(std::move(boot)), agent_path_(std::move(agent_path)) {
    require_readable_image(boot_.kernel);
    if (!boot_.initrd.empty() && access(boot_.initrd.c_str(), R_OK) != 0) {
      throw InputError("swprofile initrd " + boot_.initrd + ": expected a readable initramfs image");
    }
    if (!boot_.dtb.empty()) require_device_tree(boot_.dtb);
  }

  // The boot before the agent starts, which the relay bounds itself.
  std::chrono::seconds start_allowance() const override { return params_.boot_timeout; }

  std::string describe() const override {
    return fmt::format("qemu {}{}{} ({}{}{})", params_.arch == host_machine() ? "" : params_.arch + " ", boot_.kernel,
                       boot_.dtb.empty() ? "" : " + dtb " + boot_.dtb, accel_.empty() ? params_.accel : accel_,
                       params_.icount_shift < 0 ? "" : fmt::format(", icount shift={}", params_.icount_shift),
                       boot_.cmdline.empty() ? "" : ", cmdline: " + join_cmdline(boot_.cmdline));
  }

  AgentProcess start_agent(const std::vector<std::string>& args) override {
    // The guest is a busybox initramfs: a wrapper from the host would not be there.
    if (!wrapper_.empty()) throw InputError("a swprofile wrapper cannot run inside a qemu SUT");
    resolve_accel();
    const std::string initramfs = write_initramfs(args);
    const std::string console_log = fmt::format("{}/console-{}.log", work_dir_.path(), ++boots_);
    return start_relay(qemu_argv(accel_, initramfs, console_log), console_log, params_.boot_timeout,
                       /*probe_only=*/false);
  }

  const std::string& accel() const { return accel_; }

 private:
  static std::string join_cmdline(const std::vector<std::string>& words) {
    std::string joined;
    for (const auto& word : words) joined += (joined.empty() ? "" : " ") + word;
    return joined;
  }

  std::vector<std::string> qemu_argv(const std::string& accel, const std::string& initramfs,
                                     const std::string& console_log) const {
    const bool arm = params_.arch == "aarch64";
    // The console (the first UART) for the log; panic=-1 with -no-reboot
    // turns a panic into QEMU exiting instead of a hang.
    std::string append = std::string("console=") + (arm ? "ttyAMA0" : "ttyS0") + " panic=-1 rdinit=/init";
    // Under icount the guest's clock advances only as it executes, and a
    // whole session (boot and benchmark) can end before x86's TSC clocksource
    // finishes its calibration, which waits one second of the guest's time.
    // Until then the clocksource is tsc-early, which high-resolution timers
    // do not accept: every hrtimer, the kernel profile's sampling timer
    // among them, then fires only at the periodic tick. The HPET is ready
    // from early boot and does. A swprofile's own clocksource= comes after
    // this one and wins.
    if (params_.icount_shift >= 0 && !arm) append += " clocksource=hpet";
    for (const auto& word : boot_.cmdline) append += " " + word;
    std::vector<std::string> argv = {params_.qemu, "-nodefaults", "-no-user-config", "-display", "none",
                                     "-no-reboot"};
    if (arm) {
      // The virt board's default GICv2 exists under TCG; under KVM the
      // host's GIC version is the one that works (KVM on arm64 hosts is not
      // tested here: this project's machines are x86-64).
      argv.insert(argv.end(), {"-machine", accel == "kvm" ? "virt,gic-version=host" : "virt"});
    }
    // tcg-single: one host thread runs every vCPU in turn. Multi-threaded
    // TCG can let one vCPU execute a site another is patching through an
    // int3 (text_poke_bp) after the int3 handler's state is gone: a Debian
    // 6.12 guest with 2 vCPUs oopsed at boot ("Oops: int3") in about one
    // boot of three (docs/benchmarks/kfunc-cmdline.md).
    const std::string accel_arg = accel == "tcg-single" ? "tcg,thread=single" : accel;
    argv.insert(argv.end(), {"-m", params_.memory, "-smp", params_.cpus, "-cpu", params_.cpu_model, "-accel", accel_arg,
                             "-kernel", boot_.kernel, "-initrd", initramfs, "-append", append,
                             "-serial", "file:" + console_log});
    // sleep=off: an idle guest's clock jumps to its next timer instead of
    // waiting for the host's, so boots are no slower for it.
    if (params_.icount_shift >= 0) {
      argv.insert(argv.end(), {"-icount", fmt::format("shift={},sleep=off", params_.icount_shift)});
    }
    // QEMU still writes the memory, the command line and the initrd's place
    // into it, as into the board's own.
    if (!boot_.dtb.empty()) argv.insert(argv.end(), {"-dtb", boot_.dtb});
    if (arm) {
      // The results channel: QEMU's stdout as a named virtio-serial port
      // (see assets/sut/init_results_virtio.sh).
      argv.insert(argv.end(), {"-device", "virtio-serial-pci,id=kbench-serial", "-chardev", "stdio,id=kbench-results",
                               "-device",
                               std::string("virtserialport,bus=kbench-serial.0,chardev=kbench-results,name=") +
                                   kResultsPortName});
    } else {
      argv.insert(argv.end(), {"-serial", "stdio"});
    }
    return argv;
  }

  // Busybox, the agent, /init and the arguments, appended to the swprofile's
  // own initrd when it has one (the kernel unpacks concatenated archives).
  std::string write_initramfs(const std::vector<std::string>& args) {
    if (base_archive_.empty()) {
      base_archive_ = agent_initramfs(params_.busybox, qemu_init(params_.arch), agent_path_, boot_.kernel, boot_.initrd,
                                      boot_.modules);
    }
    const std::string path = work_dir_.path() + "/initramfs.cpio";
    write_whole(path, with_agent_args(base_archive_, args));
    return path;
  }

  std::string cache_key() const {
    utsname host{};
    uname(&host);
    struct stat kernel{};
    stat(boot_.kernel.c_str(), &kernel);
    return fmt::format("{}|{}|{}|{}|{}|{}", host.nodename, host.release, params_.qemu, fs::absolute(boot_.kernel).string(),
                       kernel.st_size, kernel.st_mtime);
  }

  static fs::path cache_file() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    const fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home ? home : "/tmp") / ".cache";
    return base / "kbench" / "qemu-kvm-probe";
  }

  // auto: KVM where /dev/kvm is usable and a probe boot of this kernel with
  // KVM reaches /init in time; TCG otherwise. The verdict is cached per host
  // and kernel image, as a probe that hangs costs its whole timeout.
  void resolve_accel() {
    if (!accel_.empty()) return;
    if (params_.accel != "auto") {
      accel_ = params_.accel;
      return;
    }
    if (params_.icount_shift >= 0) {
      accel_ = "tcg";
      accel_note_ = "auto: icount counts the instructions TCG executes, using TCG";
      std::cerr << "kbench: qemu: " << accel_note_ << "\n";
      return;
    }
    if (params_.arch != host_machine()) {
      accel_ = "tcg";
      accel_note_ = "auto: an " + params_.arch + " guest on an " + host_machine() + " host, using TCG";
      std::cerr << "kbench: qemu: " << accel_note_ << "\n";
      return;
    }
    if (access("/dev/kvm", R_OK | W_OK) != 0) {
      accel_ = "tcg";
      accel_note_ = "auto: /dev/kvm is not usable, using TCG";
      std::cerr << "kbench: qemu: " << accel_note_ << "\n";
      return;
    }
    const std::string key = cache_key();
    {
      std::ifstream cache(cache_file());
      for (std::string line; std::getline(cache, line);) {
        const auto tab = line.rfind('\t');
        if (tab != std::string::npos && line.substr(0, tab) == key) {
          accel_ = line.substr(tab + 1);
          accel_note_ = "auto: " + accel_ + " (KVM probe result cached in " + cache_file().string() + ")";
        }
      }
    }
    if (accel_.empty()) {
      const auto started = Clock::now();
      std::string why;
      const bool kvm_works = probe_kvm(why);
      const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
      accel_ = kvm_works ? "kvm" : "tcg";
      accel_note_ = kvm_works ? fmt::format("auto: KVM probe boot reached /init in {:.1f}s, using KVM", seconds)
                              : fmt::format("auto: KVM probe boot failed after {:.1f}s: {}; using TCG", seconds, why);
      std::error_code ec;
      fs::create_directories(cache_file().parent_path(), ec);
      std::ofstream(cache_file(), std::ios::app) << key << '\t' << accel_ << '\n';
    }
    if (accel_ == "tcg") std::cerr << "kbench: qemu: " << accel_note_ << "\n";
  }

  bool probe_kvm(std::string& why) {
    const std::string initramfs = write_initramfs({"--version"});
    const std::string console_log = work_dir_.path() + "/kvm-probe-console.log";
    AgentProcess probe = start_relay(qemu_argv("kvm", initramfs, console_log), console_log,
                                     params_.kvm_probe_timeout, /*probe_only=*/true);
    close(probe.stdout_fd);
    // The relay writes one short line at most, then exits.
    char buffer[4096];
    ssize_t n = 0;
    while ((n = read(probe.stderr_fd, buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) why.append(buffer, static_cast<std::size_t>(n));
    }
    close(probe.stderr_fd);
    std::erase(why, '\n');
    const int status = process::wait_for_exit(probe.pid);
    kill(-probe.pid, SIGKILL);
    return process::exit_code(status) == 0;
  }

  // Forks the relay: it starts QEMU in its own process group, checks the
  // frames, writes verified JSON Lines to its stdout and diagnostics to its
  // stderr, and exits with the agent's exit status (1 when the VM failed).
  AgentProcess start_relay(const std::vector<std::string>& argv, const std::string& console_log,
                           std::chrono::seconds boot_timeout, bool probe_only) {
    return process::fork_relay(
        [&](int out_fd, int err_fd) { return relay(argv, console_log, boot_timeout, probe_only, out_fd, err_fd); },
        "kbench: qemu");
  }

  int relay(const std::vector<std::string>& argv, const std::string& console_log, std::chrono::seconds boot_timeout,
            bool probe_only, int out_fd, int err_fd) {
    const auto started = Clock::now();
    // QEMU dies with the relay (parent-death signal), so the runner's kill of
    // the relay's group also ends the VM.
    // aarch64: QEMU's stdio chardev reports its backend closed when stdin
    // reaches EOF, and a virtserialport whose host side is closed blocks
    // every write of the guest (the agent would hang at its first line), so
    // QEMU's stdin is held open there; the x86 UART ignores the close.
    AgentProcess vm = process::spawn(
        argv, {.stdin_from = params_.arch == "aarch64" ? process::Stdin::HeldOpen : process::Stdin::DevNull});
    std::string pending;
    std::string qemu_stderr;
    std::optional<int> agent_status;
    bool init_started = false;
    int corrupted = 0;
    std::string failure;

    auto handle_frame = [&](const ResultFrame& frame) {
      if (!frame.valid) {
        ++corrupted;
        write_all(err_fd, "kbench: qemu: dropped a result line whose checksum does not match: " +
                              frame.payload.substr(0, 120) + "\n");
        return;
      }
      if (frame.tag == "KBS1") {
        init_started = true;
        boot_seconds_ = std::chrono::duration<double>(Clock::now() - started).count();
        if (!probe_only) {
          write_all(err_fd, fmt::format("kbench: qemu: {} reached /init after {:.1f}s ({})\n", frame.payload,
                                        boot_seconds_, accel_));
        }
      } else if (frame.tag == "KBO1") {
        write_all(out_fd, with_accel(frame.payload) + "\n");
      } else if (frame.tag == "KBE1") {
        write_all(err_fd, frame.payload + "\n");
      } else if (frame.tag == "KBX1") {
        agent_status = std::atoi(frame.payload.c_str());
      }
    };

    auto on_stdout = [&](const char* data, std::size_t size) {
      pending.append(data, size);
      std::size_t start = 0;
      for (auto nl = pending.find('\n', start); nl != std::string::npos; nl = pending.find('\n', start)) {
        if (auto frame = parse_result_frame(pending.substr(start, nl - start))) handle_frame(*frame);
        start = nl + 1;
      }
      pending.erase(0, start);
    };
    auto keep_going = [&] {
      if (probe_only && init_started) return false;
      if (!init_started && Clock::now() - started > boot_timeout) {
        failure = fmt::format("the kernel did not reach /init within {}s (hang?)", boot_timeout.count());
        return false;
      }
      return true;
    };
    // No deadline once /init runs: the runner's timeout kills the relay.
    process::PumpFds fds{vm.stdout_fd, vm.stderr_fd, -1, {}};
    process::pump_output(fds, Clock::time_point::max(),
                {on_stdout, [&](const char* data, std::size_t size) { qemu_stderr.append(data, size); }, keep_going});
    for (int fd : {fds.stdout_fd, fds.stderr_fd}) {
      if (fd >= 0) close(fd);
    }
    if (auto frame = parse_result_frame(pending)) handle_frame(*frame);

    // After the exit frame the VM powers itself off; give it a moment.
    const auto stop_deadline = Clock::now() + std::chrono::seconds(agent_status ? 20 : 0);
    if (!process::wait_for_exit_until(vm.pid, stop_deadline)) {
      kill(vm.pid, SIGKILL);
      process::wait_for_exit(vm.pid);
    }
    if (probe_only) {
      if (init_started) return 0;
      if (failure.empty()) failure = "the VM stopped before /init started";
      const std::string qemu_tail = process::last_lines(qemu_stderr, 2);
      write_all(err_fd, failure + (qemu_tail.empty() ? "" : " (qemu: " + qemu_tail + ")"));
      return 1;
    }

    if (agent_status && corrupted == 0) return *agent_status;
    if (failure.empty()) {
      if (corrupted > 0) {
        failure = fmt::format("{} result line(s) failed their checksum", corrupted);
      } else if (!init_started) {
        failure = "the VM stopped before /init started (kernel panic or bad kernel image?)";
      } else {
        failure = "the VM stopped before the agent finished (kernel panic or crash?)";
      }
    }
    std::string message = "kbench: qemu: " + failure + "\n";
    const std::string qemu_tail = process::last_lines(qemu_stderr, 5);
    if (!qemu_tail.empty()) message += "qemu: " + qemu_tail + "\n";
    message += "console log tail:\n" + console_tail(console_log) + "\n";
    write_all(err_fd, message);
    return agent_status && *agent_status != 0 ? *agent_status : 1;
  }

  // The fingerprint the agent takes inside the VM, plus how the VM ran.
  std::string with_accel(const std::string& line) const {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || record.value("type", "") != records::kFingerprint || !record["data"].is_object()) {
      return line;
    }
    namespace key = sysinfo::fingerprint_key;
    nlohmann::json& fingerprint = record["data"];
    fingerprint[key::kQemuAccel] = accel_;
    if (!accel_note_.empty()) fingerprint[key::kQemuAccelNote] = accel_note_;
    fingerprint[key::kQemuCpu] = params_.cpu_model;
    if (params_.icount_shift >= 0) fingerprint[key::kQemuIcount] = fmt::format("shift={}", params_.icount_shift);
    // Seconds from starting QEMU to /init's first frame: what each boot costs.
    if (boot_seconds_ >= 0) fingerprint[key::kQemuBootSeconds] = std::round(boot_seconds_ * 10) / 10;
    if (params_.arch == "aarch64") fingerprint[key::kQemuMachine] = "virt";
    return record.dump();
  }

  QemuParams params_;
  QemuBoot boot_;
  std::string agent_path_;
  const TempDirectory work_dir_{"kbench-qemu"};
  std::string accel_;  // resolved on the first start_agent
  std::string accel_note_;
  std::string base_archive_;
  int boots_ = 0;
  double boot_seconds_ = -1;  // set in the relay process when /init reports
};

}  // namespace

// One script, joined in the order it runs: the mounts (whose first line is the
// shebang), the results channel, which only differs by architecture (the
// virt board's console is its only UART), then running the agent.
std::string qemu_init(const std::string& arch) {
  return std::string(assets::sut::init_mounts_sh) +
         (arch == "aarch64" ? assets::sut::init_results_virtio_sh : assets::sut::init_results_x86_sh) +
         assets::sut::init_run_sh + assets::sut::init_end_poweroff_sh;
}

std::unique_ptr<Connection> make_qemu_connection(const std::map<std::string, std::string>& params, QemuBoot boot,
                                                 std::string agent_path) {
  if (boot.kernel.empty()) throw InputError("swprofile kernel: expected a kernel image for the qemu connection");
  MethodRegistry::instance().get(kQemuMethod).require_valid(params);
  QemuParams parsed = parse_qemu_params(params);
  require_busybox_for(parsed.busybox, parsed.arch);
  // The guest runs the agent built for its architecture: the given one when
  // it fits, else kbench-agent-<arch> (agent_for_machine says where it looked).
  std::string agent = agent_for_machine(parsed.arch, agent_path);
  return std::make_unique<QemuConnection>(std::move(parsed), std::move(boot), std::move(agent));
}

KBENCH_SUT_METHOD({
    .name = kQemuMethod,
    .summary = "a QEMU VM that boots each swprofile's kernel with kbench's own initramfs (docs/remote.md)",
    .params = qemu_param_specs(),
    .capabilities = {Capability::BootsKernel, Capability::GuestOnController, Capability::DeviceTree},
    .make = [](const Params& params, const SwprofileKernel* swprofile) {
      if (!swprofile || swprofile->image.empty() || !swprofile->deb.empty()) {
        throw InputError(std::string("swprofiles[") + (swprofile ? swprofile->name : "") +
                         "].kernel: expected a kernel image to boot with the qemu connection (kernel: PATH, or "
                         "{image: PATH, modules: TARBALL})");
      }
      QemuBoot boot{swprofile->image, swprofile->cmdline, swprofile->initrd, swprofile->modules, swprofile->dtb};
      return make_qemu_connection(params, std::move(boot), find_agent_binary());
    },
});

std::string qemu_accel(const Connection& connection) {
  const auto* qemu = dynamic_cast<const QemuConnection*>(&connection);
  return qemu ? qemu->accel() : std::string();
}

}  // namespace kbench::sut
