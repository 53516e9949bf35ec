#include "cli/suites.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/errors.h"

namespace kbench::cli {

namespace fs = std::filesystem;

std::string suite_plan_path(const std::string& suite) {
  if (suite != "quick" && suite != "default") {
    throw InputError("--suite " + suite + ": expected quick or default");
  }
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("KBENCH_PLANS_DIR"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(self.parent_path() / ".." / "share" / "kbench" / "plans");
    dirs.push_back(self.parent_path() / ".." / "plans");
  }
#ifdef KBENCH_SOURCE_PLANS_DIR
  dirs.emplace_back(KBENCH_SOURCE_PLANS_DIR);
#endif
  for (const auto& dir : dirs) {
    const fs::path candidate = dir / (suite + ".yaml");
    if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  throw RunError("the plan of suite '" + suite + "' (" + suite +
                 ".yaml) was not found; set KBENCH_PLANS_DIR to kbench's plans/ directory");
}

}  // namespace kbench::cli
