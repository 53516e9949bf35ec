// The format table: which formats render which view, their traits, and the
// one error every command gives for a format it cannot print.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "report/format_table.h"
#include "support/error_text.h"

namespace kbench::report {
namespace {

using Names = std::vector<std::string_view>;
using testing::error_of;

std::set<std::string_view> names_where(bool Format::*trait) {
  std::set<std::string_view> names;
  for (const Format& format : formats())
    if (format.*trait) names.insert(format.name);
  return names;
}

TEST(FormatTable, EachViewListsItsFormatsInTableOrder) {
  EXPECT_EQ(format_names(View::Comparison), (Names{"grid", "markdown", "delta", "mail", "csv", "json", "html"}));
  EXPECT_EQ(format_names(View::Scenarios), (Names{"delta"}));
  EXPECT_EQ(format_names(View::Noise), (Names{"grid", "csv", "json"}));
  EXPECT_EQ(format_names(View::Trend), (Names{"text", "html"}));
  EXPECT_EQ(format_names(View::Samples), (Names{"csv", "json"}));
}

TEST(FormatTable, ChoicesReadAsASentence) {
  EXPECT_EQ(format_choices(View::Comparison), "grid, markdown, delta, mail, csv, json or html");
  EXPECT_EQ(format_choices(View::Noise), "grid, csv or json");
  EXPECT_EQ(format_choices(View::Trend), "text or html");
  EXPECT_EQ(format_choices(View::Scenarios), "delta");
}

TEST(FormatTable, Traits) {
  EXPECT_EQ(names_where(&Format::machine_readable), (std::set<std::string_view>{"csv", "json", "html"}));
  EXPECT_EQ(names_where(&Format::needs_session_samples), (std::set<std::string_view>{"html"}));
  EXPECT_EQ(names_where(&Format::raw_change_only), (std::set<std::string_view>{"markdown", "delta"}));
}

TEST(FormatTable, NamesAreUniqueAndEveryFormatRendersSomething) {
  std::set<std::string_view> seen;
  for (const Format& format : formats()) {
    EXPECT_TRUE(seen.insert(format.name).second) << format.name;
    const bool renders = format.renders(View::Comparison) || format.renders(View::Scenarios) ||
                         format.renders(View::Noise) || format.renders(View::Trend) ||
                         format.renders(View::Samples);
    EXPECT_TRUE(renders) << format.name;
  }
}

TEST(FormatTable, FindsAFormatByNameAndView) {
  EXPECT_EQ(find_format("html", View::Trend).name, "html");
  EXPECT_NE(find_format("csv", View::Samples).samples, nullptr);
  for (const std::string_view name : format_names(View::Comparison)) EXPECT_NE(make_renderer(name), nullptr);
}

TEST(FormatTable, AnUnknownNameNamesTheFormatsOfTheView) {
  EXPECT_EQ(error_of([] { find_format("pdf", View::Comparison); }),
            "--format pdf: expected grid, markdown, delta, mail, csv, json or html");
  EXPECT_EQ(error_of([] { find_format("pdf", View::Samples); }), "--format pdf: expected csv or json");
  EXPECT_THROW(make_renderer("pdf"), InputError);
}

TEST(FormatTable, AKnownNameOutsideTheViewIsRefusedTheSameWay) {
  EXPECT_EQ(error_of([] { find_format("markdown", View::Noise); }), "--format markdown: expected grid, csv or json");
  EXPECT_EQ(error_of([] { find_format("text", View::Comparison); }),
            "--format text: expected grid, markdown, delta, mail, csv, json or html");
  EXPECT_EQ(error_of([] { find_format("grid", View::Trend); }), "--format grid: expected text or html");
}

}  // namespace
}  // namespace kbench::report
