#include "common/spoken_list.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace kbench {
namespace {

using Words = std::vector<std::string>;

TEST(SpokenList, JoinsWithCommasAndTheLastWord) {
  EXPECT_EQ(spoken_list(Words{}), "");
  EXPECT_EQ(spoken_list(Words{"ssh"}), "ssh");
  EXPECT_EQ(spoken_list(Words{"local", "ssh"}), "local or ssh");
  EXPECT_EQ(spoken_list(Words{"local", "qemu", "ssh"}), "local, qemu or ssh");
  EXPECT_EQ(spoken_list(Words{"a", "b"}, "and"), "a and b");
  EXPECT_EQ(spoken_list(std::vector<std::string_view>{"grid", "csv", "json"}), "grid, csv or json");
}

}  // namespace
}  // namespace kbench
