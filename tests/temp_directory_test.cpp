#include "common/temp_directory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "common/errors.h"
#include "support/test_files.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

TEST(TempDirectory, IsMadeInItsParentAndRemovedWithWhatItHolds) {
  testing::TempDir parent;
  std::string path;
  {
    const TempDirectory dir("kbench-unit", parent.path().string());
    path = dir.path();
    EXPECT_EQ(fs::path(path).parent_path(), parent.path());
    EXPECT_EQ(fs::path(path).filename().string().rfind("kbench-unit.", 0), 0u) << path;
    ASSERT_TRUE(fs::is_directory(path));
    fs::create_directories(fs::path(path) / "lib" / "modules");
    std::ofstream(fs::path(path) / "lib" / "modules" / "x.ko") << "module";
  }
  EXPECT_FALSE(fs::exists(path)) << "left behind: " << path;
}

TEST(TempDirectory, TwoHaveTwoNames) {
  const TempDirectory first("kbench-unit");
  const TempDirectory second("kbench-unit");
  EXPECT_NE(first.path(), second.path());
}

TEST(TempDirectory, AMovedDirectoryIsRemovedOnceByItsNewOwner) {
  std::string path;
  std::optional<TempDirectory> owner;
  {
    TempDirectory dir("kbench-unit");
    path = dir.path();
    owner.emplace(std::move(dir));
  }
  EXPECT_TRUE(fs::is_directory(path)) << "the moved-from directory removed it";
  EXPECT_EQ(owner->path(), path);
  TempDirectory other("kbench-unit");
  const std::string other_path = other.path();
  *owner = std::move(other);
  EXPECT_FALSE(fs::exists(path)) << "the directory it owned before the assignment is still there";
  EXPECT_EQ(owner->path(), other_path);
  owner.reset();
  EXPECT_FALSE(fs::exists(other_path));
}

TEST(TempDirectory, AParentThatIsNoDirectoryIsARunErrorNamingThePattern) {
  testing::TempDir parent;
  const fs::path file = parent.path() / "plain-file";
  std::ofstream(file) << "not a directory";
  try {
    const TempDirectory dir("kbench-unit", file.string());
    FAIL() << "made " << dir.path() << " inside a file";
  } catch (const RunError& error) {
    EXPECT_NE(std::string(error.what()).find(file.string() + "/kbench-unit.XXXXXX"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace kbench
