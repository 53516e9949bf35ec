#pragma once
// Files for tests: a temporary directory removed with everything in it, whole-
// file reads, and golden-file comparison. Header-only, shared by the test
// binaries (tests/*_test.cpp include it as "support/test_files.h").
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include "common/temp_directory.h"
#include "support/test_paths.h"

namespace kbench::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "kbench-test") : dir_(prefix), path_(dir_.path()) {}
  const std::filesystem::path& path() const { return path_; }

 private:
  TempDirectory dir_;
  std::filesystem::path path_;
};

// The whole file, byte for byte; empty (and a test failure) when unreadable.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Compares `actual` with tests/golden/<name>; KBENCH_UPDATE_GOLDEN=1 rewrites
// the file instead, for an intended change of layout.
inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(KBENCH_GOLDEN_DIR) + "/" + name;
  if (std::getenv("KBENCH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  EXPECT_EQ(read_file(path), actual) << "golden file " << path << " differs (KBENCH_UPDATE_GOLDEN=1 rewrites it)";
}

}  // namespace kbench::testing
