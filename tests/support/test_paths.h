#pragma once
// Where the tests' inputs and the built programs are. Defined for each build
// tree in one generated object (test_paths.cpp.in), so that no other test
// object holds a path of this clone and the compiler cache can serve them to
// a clone at another path.
#include <string>

namespace kbench::test_paths {
extern const char* const data_dir;    // tests/data
extern const char* const golden_dir;  // tests/golden
extern const char* const binary_dir;  // the build tree: kbench, kbench-agent, ...
}  // namespace kbench::test_paths

#define KBENCH_TEST_DATA_DIR std::string(kbench::test_paths::data_dir)
#define KBENCH_GOLDEN_DIR std::string(kbench::test_paths::golden_dir)
#define KBENCH_BINARY_DIR std::string(kbench::test_paths::binary_dir)
