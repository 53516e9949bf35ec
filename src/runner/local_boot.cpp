#include "process/process.h"
#include "runner/local_boot.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "runner/sysctl.h"
#include "sysinfo/sha256.h"

namespace kbench::runner {

namespace {

namespace fs = std::filesystem;
constexpr std::chrono::seconds kSystemctlTimeout{60};

std::string local_boot_dir() { return (fs::path(kbench_state_dir()) / "local-boot").string(); }

nlohmann::json original_json(const deploy::SutKernel& kernel) {
  return {{"release", kernel.release}, {"version", kernel.version}, {"cmdline", kernel.cmdline},
          {"boot_id", kernel.boot_id}, {"image", kernel.image},     {"initrd", kernel.initrd}};
}

// systemd's unit file syntax: '%' starts a specifier everywhere, and in
// ExecStart= '$' expands variables, and quotes and backslashes are syntax.
std::string escape_specifiers(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

std::string exec_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                              "0123456789/_.:=+,@-") == std::string::npos;
  if (plain) return word;
  std::string out = "\"";
  for (const char c : word) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '$') out += '$';
    if (c == '%') out += '%';
    out += c;
  }
  return out + "\"";
}

std::string systemctl_failure(const process::CommandResult& result) {
  if (result.timed_out) return "timed out";
  std::string said = process::last_lines(result.err, 1);
  while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
  return fmt::format("exit status {}{}", result.exit_status, said.empty() ? "" : ": " + said);
}

process::CommandResult systemctl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"systemctl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return process::run_command(argv, "", kSystemctlTimeout);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

nlohmann::json LocalBootState::to_json() const {
  nlohmann::json json = {{"plan", plan},         {"plan_key", plan_key}, {"store", store},
                         {"run", run},           {"identity", identity}, {"unit", unit},
                         {"log", log},           {"boots", boots},       {"original", original_json(original)},
                         {"pending", nullptr}};
  if (pending) json["pending"] = {{"boot", pending->boot.to_json()}, {"plan_session", pending->plan_session}};
  return json;
}

LocalBootState LocalBootState::from_json(const nlohmann::json& json) {
  try {
    LocalBootState state;
    state.plan = json.at("plan").get<std::string>();
    state.plan_key = json.at("plan_key").get<std::string>();
    state.store = json.at("store").get<std::string>();
    state.run = json.at("run").get<std::string>();
    state.identity = json.at("identity").get<std::string>();
    state.unit = json.at("unit").get<std::string>();
    state.log = json.at("log").get<std::string>();
    state.boots = json.at("boots").get<int>();
    const auto& original = json.at("original");
    state.original.release = original.at("release").get<std::string>();
    state.original.version = original.at("version").get<std::string>();
    state.original.cmdline = original.at("cmdline").get<std::string>();
    state.original.boot_id = original.at("boot_id").get<std::string>();
    state.original.image = original.at("image").get<std::string>();
    state.original.initrd = original.at("initrd").get<std::string>();
    const auto& pending = json.at("pending");
    if (!pending.is_null()) {
      state.pending = PendingBoot{deploy::LaunchedBoot::from_json(pending.at("boot")),
                                  pending.at("plan_session").get<int>()};
    }
    return state;
  } catch (const nlohmann::json::exception& e) {
    throw RunError(std::string("expected plan, plan_key, store, run, identity, unit, log, boots, original and "
                               "pending (") +
                   e.what() + ")");
  }
}

std::string local_boot_key(const std::string& plan_key) { return sysinfo::sha256_hex(plan_key).substr(0, 12); }

std::string local_boot_state_path(const std::string& plan_key) {
  return (fs::path(local_boot_dir()) / (local_boot_key(plan_key) + ".json")).string();
}

std::string local_boot_log_path(const std::string& plan_key) {
  return (fs::path(local_boot_dir()) / (local_boot_key(plan_key) + ".log")).string();
}

std::string resume_unit_name(const std::string& plan_key) {
  return "kbench-resume-" + local_boot_key(plan_key) + ".service";
}

std::string local_boot_done_path(const std::string& plan_key) {
  return (fs::path(local_boot_dir()) / (local_boot_key(plan_key) + ".done")).string();
}

void write_local_boot_done(const std::string& path, const std::string& store, const std::string& run) {
  std::ofstream out(path);
  out << nlohmann::json({{"store", store}, {"run", run}}).dump() << "\n";
}

std::string read_local_boot_done_store(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return json.is_object() ? json.value("store", std::string()) : "";
}

std::optional<LocalBootState> read_local_boot_state(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::ifstream in(path);
  if (!in) throw RunError("the local boot state " + path + " cannot be read");
  const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw RunError("the local boot state " + path + " is not JSON");
  try {
    return LocalBootState::from_json(json);
  } catch (const RunError& e) {
    throw RunError("the local boot state " + path + ": " + e.what());
  }
}

void write_local_boot_state(const std::string& path, const LocalBootState& state) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string part = path + ".part";
  const std::string text = state.to_json().dump(2) + "\n";
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw RunError("writing the local boot state " + part + " failed");
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n <= 0) {
      ::close(fd);
      throw RunError("writing the local boot state " + part + " failed");
    }
    written += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || std::rename(part.c_str(), path.c_str()) != 0) {
    throw RunError("writing the local boot state " + path + " failed");
  }
  // The rename itself must reach the disk before the machine goes down.
  const int dir = ::open(fs::path(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

std::string local_boot_obstacle(const std::string& systemd_run_dir, bool root) {
  std::error_code ec;
  if (!fs::is_directory(systemd_run_dir, ec)) {
    return "this machine does not run systemd (no " + systemd_run_dir +
           "), which kbench needs to resume the plan after each boot";
  }
  if (!root) return "booting this machine and installing the unit that resumes the plan after each boot need root";
  return "";
}

std::string volatile_folder(const std::string& path) {
  const std::string absolute = fs::absolute(path).lexically_normal().string();
  for (const char* folder : {"/tmp", "/run", "/dev/shm"}) {
    const std::string prefix = std::string(folder) + "/";
    if (absolute == folder || absolute.rfind(prefix, 0) == 0) return folder;
  }
  return "";
}

std::string resume_unit_text(const ResumeUnit& unit) {
  std::string command;
  for (const auto& word : unit.command) {
    if (!command.empty()) command += ' ';
    command += exec_word(word);
  }
  std::string environment;
  for (const auto& [name, value] : unit.environment) {
    environment += "Environment=";
    environment += exec_word(name + "=" + value);
    environment += "\n";
  }
  // Type=exec: the unit is started once kbench runs, so the boot's start-up
  // finishes without waiting for the measurement, and the resumed run's own
  // wait for it (systemctl is-system-running --wait) does not wait for itself.
  return fmt::format(
      "# Written by kbench: resumes the plan {plan} after each boot of this machine, and is removed\n"
      "# by kbench when the machine is back on its own kernel (docs/deploy.md, \"Alternating kernels\n"
      "# on this machine\"). To stop the plan: systemctl disable {name}; rm {path}\n"
      "[Unit]\n"
      "Description=kbench: resume the plan {plan} after a boot\n"
      "\n"
      "[Service]\n"
      "Type=exec\n"
      "{environment}"
      "ExecStart={command}\n"
      "StandardOutput=append:{log}\n"
      "StandardError=append:{log}\n"
      "\n"
      "[Install]\n"
      "WantedBy=multi-user.target\n",
      fmt::arg("plan", escape_specifiers(unit.plan)), fmt::arg("name", unit.name),
      fmt::arg("path", escape_specifiers((fs::path(kSystemdUnitDir) / unit.name).string())),
      fmt::arg("environment", environment), fmt::arg("command", command),
      fmt::arg("log", escape_specifiers(unit.log)));
}

void install_resume_unit(const ResumeUnit& unit, const std::string& unit_dir) {
  const std::string path = (fs::path(unit_dir) / unit.name).string();
  std::error_code ec;
  fs::create_directories(fs::path(unit.log).parent_path(), ec);
  {
    std::ofstream out(path + ".part");
    out << resume_unit_text(unit);
    if (!out.flush()) throw RunError("writing the resume unit " + path + " failed");
  }
  fs::rename(path + ".part", path, ec);
  if (ec) throw RunError("writing the resume unit " + path + " failed: " + ec.message());
  for (const std::vector<std::string>& args : {std::vector<std::string>{"daemon-reload"},
                                                std::vector<std::string>{"enable", unit.name}}) {
    const auto result = systemctl(args);
    if (result.timed_out || result.exit_status != 0) {
      throw RunError(fmt::format("systemctl {} failed: {}", fmt::format("{}", fmt::join(args, " ")),
                                 systemctl_failure(result)));
    }
  }
}

std::string remove_resume_unit(const std::string& name, const std::string& unit_dir) {
  std::string warnings;
  const auto disabled = systemctl({"disable", name});
  if (disabled.timed_out || disabled.exit_status != 0) {
    warnings = "systemctl disable " + name + " failed: " + systemctl_failure(disabled);
  }
  std::error_code ec;
  fs::remove(fs::path(unit_dir) / name, ec);
  if (ec) warnings += (warnings.empty() ? "" : "; ") + ("removing " + name + " failed: " + ec.message());
  const auto reloaded = systemctl({"daemon-reload"});
  if (reloaded.timed_out || reloaded.exit_status != 0) {
    warnings += (warnings.empty() ? "" : "; ") + ("systemctl daemon-reload failed: " + systemctl_failure(reloaded));
  }
  return warnings;
}

std::string resume_unit_state(const std::string& name) {
  const auto enabled = systemctl({"is-enabled", name});
  const std::string enabled_word = first_line(enabled.out);
  if (enabled_word.empty() || enabled_word == "not-found") return "not installed";
  const auto active = systemctl({"is-active", name});
  const std::string active_word = first_line(active.out);
  return enabled_word + ", " + (active_word.empty() ? "unknown" : active_word);
}

}  // namespace kbench::runner
