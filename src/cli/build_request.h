#pragma once
// What `kbench build` and `kbench plan exec` share for building swprofiles'
// kernels: the --build-cache option and progress lines on stderr.
#include <CLI/CLI.hpp>
#include <string>

#include "build/kernel_build.h"

namespace kbench::cli {

// --build-cache DIR (default: build::default_cache_dir()).
void add_build_cache_option(CLI::App& command, std::string& cache_dir);

// Options whose progress goes to stderr as "kbench: build: <line>".
build::BuildOptions build_options(const std::string& cache_dir);

}  // namespace kbench::cli
