#pragma once
// What `kbench build` and `kbench plan exec` share for building swprofiles'
// kernels: the --build-cache option and progress lines on stderr.
#include <CLI/CLI.hpp>
#include <string>

#include "app/build_progress.h"
#include "build/kernel_build.h"

namespace kbench::cli {

// --build-cache DIR (default: build::default_cache_dir()).
void add_build_cache_option(CLI::App& command, std::string& cache_dir);

using app::build_options;

}  // namespace kbench::cli
