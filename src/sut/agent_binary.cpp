// Which kbench-agent binary goes to a SUT: the agent is static, so one
// binary per CPU architecture serves every SUT of that architecture.
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/elf_machine.h"
#include "common/errors.h"
#include "sut/connection.h"

namespace kbench::sut {

namespace {

// The agent next to the running kbench, or $KBENCH_AGENT; "" when neither.
std::string default_agent_candidate() {
  if (const char* env = std::getenv("KBENCH_AGENT"); env && *env) {
    if (access(env, X_OK) != 0) {
      throw InputError(std::string("KBENCH_AGENT=") + env + ": expected an executable kbench-agent");
    }
    return env;
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto candidate = self.parent_path() / "kbench-agent";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::string find_agent_binary() {
  std::string agent = default_agent_candidate();
  if (agent.empty()) throw RunError("kbench-agent not found next to kbench; set KBENCH_AGENT=/path/to/kbench-agent");
  return agent;
}

std::string normalized_machine(const std::string& machine) {
  if (machine == "arm64" || machine == "aarch64_be") return "aarch64";
  if (machine == "amd64" || machine == "x64") return "x86_64";
  return machine;
}

std::string agent_for_machine(const std::string& sut_machine, const std::string& default_agent) {
  const std::string machine = normalized_machine(sut_machine);
  std::vector<std::string> looked;
  auto fits = [&](const std::string& path) {
    looked.push_back(path);
    return access(path.c_str(), R_OK) == 0 && elf_machine(path) == machine;
  };
  if (!default_agent.empty() && fits(default_agent)) return default_agent;
  const std::string variable = "KBENCH_AGENT_" + upper(machine);
  if (const char* env = std::getenv(variable.c_str()); env && *env) {
    if (fits(env)) return env;
    throw InputError(variable + "=" + env + ": expected a kbench-agent built for " + machine + " (it is " +
                     (elf_machine(env).empty() ? "not an ELF executable" : "built for " + elf_machine(env)) + ")");
  }
  std::vector<std::filesystem::path> directories;
  if (!default_agent.empty()) directories.push_back(std::filesystem::path(default_agent).parent_path());
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) directories.push_back(self.parent_path());
  for (const auto& directory : directories) {
    const std::string candidate = (directory / ("kbench-agent-" + machine)).string();
    if (fits(candidate)) return candidate;
  }
  std::string list;
  for (const auto& path : looked) list += (list.empty() ? "" : ", ") + path;
  throw RunError("the SUT is " + machine + " but no kbench-agent for " + machine + " was found (looked at " + list +
                 "; set " + variable + "=/path/to/kbench-agent, or build one: docs/arm64.md)");
}

}  // namespace kbench::sut
