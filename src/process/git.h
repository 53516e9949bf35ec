#pragma once
// git as kbench runs it on the kernel trees it builds and bisects.
#include <optional>
#include <string>
#include <vector>

#include "process/process.h"

namespace kbench::process {

// Runs `git -C repo args...` to its end, with paths in its output unquoted
// (core.quotepath=off). git stays in kbench's process group, so a Ctrl-C
// lets it remove its lock files; it is killed after ten minutes. Its stdout
// goes to `on_stdout` when set, else into the result.
CommandResult run_git(const std::string& repo, const std::vector<std::string>& args,
                      const ChunkHandler& on_stdout = {});

// git's stdout without its trailing newline; nullopt when git fails.
std::optional<std::string> try_git_output(const std::string& repo, const std::vector<std::string>& args);

// git's stdout without its trailing newline. Throws RunError ("git ARGS in
// REPO failed: " and what git said) when git fails.
std::string git_output(const std::string& repo, const std::vector<std::string>& args);

}  // namespace kbench::process
