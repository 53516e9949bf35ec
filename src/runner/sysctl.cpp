#include "runner/sysctl.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.h"

namespace kbench::runner {

namespace fs = std::filesystem;

namespace {

std::string read_value(const std::string& key) {
  std::ifstream in(sysctl_path(key));
  if (!in) throw RunError("sysctl " + key + ": cannot read " + sysctl_path(key));
  std::stringstream text;
  text << in.rdbuf();
  std::string value = text.str();
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  return value;
}

void write_value(const std::string& key, const std::string& value) {
  std::ofstream out(sysctl_path(key));
  out << value << '\n';
  out.flush();
  if (!out) throw RunError("sysctl " + key + "=" + value + ": the kernel refused the value");
}

void write_journal(const std::map<std::string, std::string>& original) {
  const fs::path path = sysctl_journal_path();
  fs::create_directories(path.parent_path());
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary);
    out << nlohmann::json(original).dump(2) << '\n';
    if (!out) throw RunError("cannot write the sysctl journal " + temporary.string());
  }
  fs::rename(temporary, path);  // atomic: the journal is whole or absent
}

}  // namespace

std::string sysctl_path(const std::string& key) {
  std::string path = "/proc/sys/";
  for (const char c : key) path += c == '.' ? '/' : c;
  return path;
}

void validate_sysctls(const std::map<std::string, std::string>& settings) {
  for (const auto& [key, value] : settings) {
    if (key.empty() || key.find("..") != std::string::npos || key.find('/') != std::string::npos) {
      throw InputError("sysctl '" + key + "': expected a dotted name such as vm.swappiness");
    }
    if (access(sysctl_path(key).c_str(), F_OK) != 0) {
      throw InputError("sysctl " + key + ": " + sysctl_path(key) + " does not exist on this kernel");
    }
    if (access(sysctl_path(key).c_str(), W_OK) != 0) {
      throw InputError("sysctl " + key + ": " + sysctl_path(key) + " is not writable (run as root?)");
    }
  }
}

std::string kbench_state_dir() {
  fs::path dir;
  if (const char* env = std::getenv("KBENCH_STATE_DIR"); env && *env) {
    dir = env;
  } else if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) {
    dir = fs::path(xdg) / "kbench";
  } else {
    const char* home = std::getenv("HOME");
    dir = fs::path(home && *home ? home : "/tmp") / ".local" / "state" / "kbench";
  }
  return dir.string();
}

std::string sysctl_journal_path() { return (fs::path(kbench_state_dir()) / "sysctl-restore.json").string(); }

int restore_journalled_sysctls(std::ostream& log) {
  const std::string path = sysctl_journal_path();
  std::ifstream in(path);
  if (!in) return 0;
  const auto journal = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  int restored = 0;
  if (journal.is_object()) {
    for (const auto& [key, value] : journal.items()) {
      if (!value.is_string()) continue;
      write_value(key, value.get<std::string>());
      log << "kbench: restored sysctl " << key << "=" << value.get<std::string>()
          << " left by an interrupted run\n";
      ++restored;
    }
  }
  fs::remove(path);
  return restored;
}

SysctlGuard::~SysctlGuard() {
  try {
    restore();
  } catch (const std::exception&) {
    // The journal stays; the next kbench invocation restores from it.
  }
}

void SysctlGuard::apply(const std::map<std::string, std::string>& settings) {
  restore();
  if (settings.empty()) return;
  std::map<std::string, std::string> original;
  for (const auto& [key, value] : settings) original[key] = read_value(key);
  write_journal(original);
  original_ = original;
  for (const auto& [key, value] : settings) write_value(key, value);
}

void SysctlGuard::restore() {
  if (original_.empty()) return;
  for (const auto& [key, value] : original_) write_value(key, value);
  original_.clear();
  fs::remove(sysctl_journal_path());
}

}  // namespace kbench::runner
