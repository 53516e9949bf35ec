#include "app/build_progress.h"

#include <iostream>

namespace kbench::app {

build::BuildOptions build_options(const std::string& cache_dir) {
  build::BuildOptions options;
  options.cache_dir = cache_dir.empty() ? build::default_cache_dir() : cache_dir;
  options.progress = [](const std::string& line) { std::cerr << "kbench: build: " << line << "\n" << std::flush; };
  return options;
}

}  // namespace kbench::app
