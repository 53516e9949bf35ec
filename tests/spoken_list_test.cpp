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

struct Named {
  std::string name;
  std::string_view short_name;
};

TEST(CommaList, JoinsEveryItemsField) {
  const std::vector<Named> items{{"first", "1"}, {"", "2"}, {"third", "3"}};
  EXPECT_EQ(comma_list(items, &Named::name), "first, , third");  // an empty field keeps its place
  EXPECT_EQ(comma_list(items, &Named::short_name), "1, 2, 3");
  EXPECT_EQ(comma_list(std::vector<Named>{}, &Named::name), "");
  EXPECT_EQ(comma_list(std::vector<Named>{{"only", ""}}, &Named::name), "only");
}

}  // namespace
}  // namespace kbench
