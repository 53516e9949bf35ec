// kbench build PLAN: build (or find in the cache) the kernels of a plan's
// swprofiles with build:, without measuring anything.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli/build_request.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "plan/plan.h"

namespace kbench::cli {

void add_build_cache_option(CLI::App& command, std::string& cache_dir) {
  command.add_option_function<std::string>(
      "--build-cache",
      [&cache_dir](const std::string& dir) {
        if (dir.empty()) throw InputError("--build-cache: expected a directory, got an empty value");
        cache_dir = dir;
      },
      "where built kernels are kept (default: $KBENCH_BUILD_CACHE, else $XDG_CACHE_HOME/kbench/kernels, else "
      "~/.cache/kbench/kernels)");
}

namespace {

struct BuildCommandOptions {
  std::string plan;
  std::vector<std::string> swprofiles;
  std::string cache_dir;
  int jobs = 0;
};

void build_command(const BuildCommandOptions& options) {
  const plan::Plan plan = plan::load_plan(options.plan);
  std::vector<const plan::SwprofileSpec*> chosen;
  for (const auto& name : options.swprofiles) {
    const auto it = std::find_if(plan.swprofiles.begin(), plan.swprofiles.end(),
                                 [&](const plan::SwprofileSpec& profile) { return profile.name == name; });
    if (it == plan.swprofiles.end()) {
      throw InputError("--swprofile " + name + ": plan " + options.plan + " has no such swprofile");
    }
    if (!it->build) {
      throw InputError("--swprofile " + name + ": " + options.plan + ":" + std::to_string(it->line) +
                       ": expected a swprofile with build: (it has none)");
    }
    chosen.push_back(&*it);
  }
  if (options.swprofiles.empty()) {
    for (const auto& profile : plan.swprofiles) {
      if (profile.build) chosen.push_back(&profile);
    }
  }
  if (chosen.empty()) throw InputError("plan " + options.plan + ": expected a swprofile with build: (it has none)");
  // Every spec is checked before the first (long) build starts.
  for (const auto* profile : chosen) build::check_build_spec(*profile->build, profile->name);
  build::BuildOptions build = build_options(options.cache_dir);
  build.jobs = options.jobs;
  std::size_t width = 0;
  for (const auto* profile : chosen) width = std::max(width, profile->name.size());
  for (const auto* profile : chosen) {
    const build::BuiltKernel kernel = build::build_kernel(*profile->build, profile->name, build);
    const std::string how = kernel.cached ? "cached" : fmt::format("built in {:.0f} s", kernel.seconds);
    std::cout << fmt::format("{:<{}}  {}  {:<14}  {}\n", profile->name, width, kernel.key.substr(0, 12), how,
                             kernel.image)
              << std::flush;
  }
}

}  // namespace

void add_build_command(CLI::App& app) {
  auto options = std::make_shared<BuildCommandOptions>();
  CLI::App* cmd = app.add_subcommand("build", "Build the kernels of a plan's swprofiles with build: (or find them cached)");
  cmd->add_option("plan", options->plan, "YAML plan file")->required();
  cmd->add_option("--swprofile", options->swprofiles, "build only these swprofiles (repeatable); default: every one with build:");
  add_build_cache_option(*cmd, options->cache_dir);
  cmd->add_option("-j,--jobs", options->jobs, "make jobs (default: the number of CPUs)")->check(CLI::Range(1, 1024));
  cmd->footer(
      "A swprofile with build: {source: DIR, ref: REF, config: tinyconfig|defconfig|FILE,\n"
      "fragments: [FILE or CONFIG_X=y], compiler: gcc|clang, make_args: [...]} is built out of\n"
      "tree and cached by a key of the tree state, config, fragments, compiler (and its\n"
      "version), make arguments and architecture: an unchanged swprofile is never rebuilt.\n"
      "Prints per swprofile: name, key (12 hex), 'cached' or 'built in N s', the image.\n"
      "kbench plan exec builds the same way before measuring (docs/builds.md).\n"
      "Exit 1 when a build fails (the last 30 lines of its log are shown), 2 for a bad spec.\n"
      "Examples:\n"
      "  kbench build plans/seed-003-matrix.yaml\n"
      "  kbench build my-plan.yaml --swprofile clang --build-cache /srv/kernels\n"
      "  KBENCH_BUILD_CACHE=/srv/kernels kbench plan exec my-plan.yaml");
  cmd->callback([options] { build_command(*options); });
}

}  // namespace kbench::cli
