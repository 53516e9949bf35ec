#pragma once
// How `kbench build` and `kbench plan exec` show the progress of kernel builds.
#include <string>

#include "build/kernel_build.h"

namespace kbench::app {

// Build options with `cache_dir` (default: build::default_cache_dir()) whose
// progress goes to stderr as "kbench: build: <line>".
build::BuildOptions build_options(const std::string& cache_dir);

}  // namespace kbench::app
