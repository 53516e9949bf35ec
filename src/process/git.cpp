#include "process/git.h"

#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/errors.h"

namespace kbench::process {

namespace {

// Every git kbench runs works on a local tree (rev-parse, diff, worktree,
// checkout, bisect): one that takes this long hangs.
constexpr std::chrono::minutes kGitTimeout{10};

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

CommandResult run_git(const std::string& repo, const std::vector<std::string>& args, const ChunkHandler& on_stdout) {
  std::vector<std::string> argv = {"git", "-C", repo, "-c", "core.quotepath=off"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {.deadline = Clock::now() + kGitTimeout, .death_signal = 0, .on_stdout = on_stdout});
}

std::optional<std::string> try_git_output(const std::string& repo, const std::vector<std::string>& args) {
  CommandResult result = run_git(repo, args);
  if (result.exit_status != 0) return std::nullopt;
  return trimmed(std::move(result.out));
}

std::string git_output(const std::string& repo, const std::vector<std::string>& args) {
  CommandResult result = run_git(repo, args);
  if (result.exit_status != 0) {
    throw RunError(fmt::format("git {} in {} failed: {}", fmt::join(args, " "), repo, trimmed(std::move(result.err))));
  }
  return trimmed(std::move(result.out));
}

}  // namespace kbench::process
