// Option values of the kbench command line: what each parser accepts, and
// that everything else is one InputError naming the option and the value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/options.h"
#include "common/errors.h"
#include "support/error_text.h"

using kbench::InputError;
using kbench::testing::error_of;
using namespace kbench::cli;
using testing::HasSubstr;

TEST(CliGlob, PlainAndBracketedGlobsPassUnchanged) {
  EXPECT_EQ(parse_glob("--benchmark", "syscall/*"), "syscall/*");
  EXPECT_EQ(parse_glob("--benchmark", "perf/s?s*"), "perf/s?s*");
  EXPECT_EQ(parse_glob("--benchmark", "[a-c]*"), "[a-c]*");
  EXPECT_EQ(parse_glob("--benchmark", "[]x]"), "[]x]");  // a leading ']' is a member
  EXPECT_EQ(parse_glob("--benchmark", "[[]"), "[[]");
}

TEST(CliGlob, NegatedSetIsWrittenTheWaySqliteReadsIt) {
  EXPECT_EQ(parse_glob("--benchmark", "syscall/[!g]*"), "syscall/[^g]*");
  EXPECT_EQ(parse_glob("--benchmark", "[^g]*"), "[^g]*");
  EXPECT_EQ(parse_glob("--benchmark", "[!]]"), "[^]]");
}

TEST(CliGlob, EmptyGlobIsRefused) {
  EXPECT_THAT(error_of([] { parse_glob("--benchmark", ""); }), HasSubstr("--benchmark '': expected a non-empty glob"));
}

TEST(CliGlob, UnclosedBracketIsAnInvalidGlobNotNoMatch) {
  for (const char* glob : {"[", "sys[", "[!", "[]", "a[b-"}) {
    EXPECT_THAT(error_of([&] { parse_glob("--benchmark", glob); }), HasSubstr("is closed by a ']'")) << glob;
  }
  EXPECT_THAT(error_of([] { parse_glob("--sut", "ab["); }), HasSubstr("--sut 'ab[': expected a glob whose '[' (character 3)"));
}

TEST(CliGlob, EscapesAndClassesThatSqliteReadsDifferentlyAreRefused) {
  EXPECT_THAT(error_of([] { parse_glob("--benchmark", "a\\*"); }), HasSubstr("without backslashes"));
  EXPECT_THAT(error_of([] { parse_glob("--benchmark", "[a\\]"); }), HasSubstr("without backslashes"));
  EXPECT_THAT(error_of([] { parse_glob("--resultclass", "[[:digit:]]*"); }), HasSubstr("character classes"));
}

TEST(CliInteger, AcceptsDecimalsInRange) {
  EXPECT_EQ(parse_integer("--repeats", "1", 1, kMaxRepeats), 1);
  EXPECT_EQ(parse_integer("--repeats", "10000", 1, kMaxRepeats), 10000);
  EXPECT_EQ(parse_integer("--warmups", "0", 0, kMaxWarmups), 0);
}

TEST(CliInteger, OutOfRangeAndNonDecimalSayTheRange) {
  for (const char* text : {"99999999999", "0", "10001", "-1", "0x10", "1e3", "+3", " 3", "3 ", "", "many"}) {
    EXPECT_EQ(error_of([&] { parse_integer("--repeats", text, 1, 10000); }),
              std::string("--repeats '") + text + "': expected a whole number from 1 to 10000")
        << text;
  }
}

TEST(CliDecimal, FiniteNumbersAtOrAboveTheMinimum) {
  EXPECT_DOUBLE_EQ(parse_decimal("--min-change", "1.5", 0), 1.5);
  EXPECT_DOUBLE_EQ(parse_decimal("--min-change", "0", 0), 0.0);
  for (const char* text : {"nan", "inf", "1e999", "-1", "0x1p0", "abc", ""}) {
    EXPECT_THAT(error_of([&] { parse_decimal("--min-change", text, 0); }), HasSubstr("expected a number >= 0"))
        << text;
  }
}

TEST(CliFdr, LevelsOffAndEverythingElse) {
  EXPECT_EQ(parse_fdr("off"), std::nullopt);
  EXPECT_DOUBLE_EQ(*parse_fdr("0.05"), 0.05);
  EXPECT_DOUBLE_EQ(*parse_fdr("5e-2"), 0.05);
  for (const char* text : {"0", "1", "2", "nan", "0x0.1p0", " 0.05", ""}) {
    EXPECT_THAT(error_of([&] { parse_fdr(text); }), HasSubstr("expected a level between 0 and 1")) << text;
  }
}

TEST(CliTimeout, WholeSecondsFromOneSecondToADay) {
  EXPECT_EQ(parse_timeout("--timeout", "1s").count(), 1);
  EXPECT_EQ(parse_timeout("--timeout", "1h30m").count(), 5400);
  EXPECT_EQ(parse_timeout("--timeout", "2000ms").count(), 2);
  EXPECT_EQ(parse_timeout("--timeout", "24h").count(), 86400);
}

TEST(CliTimeout, TooShortTooLongOrFractionalIsRefusedWithTheRange) {
  // 1ms used to pass and become a timeout of 0s, failing every benchmark.
  for (const char* text : {"1ms", "999ms", "1500ms", "24h1s", "99999999999999999999h", "9999999999999h", "0s",
                           "soon", ""}) {
    EXPECT_EQ(error_of([&] { parse_timeout("--timeout", text); }),
              std::string("--timeout '") + text +
                  "': expected a duration in whole seconds from 1s to 24h, e.g. 90s, 10m or 1h30m")
        << text;
  }
}

TEST(CliOptions, CheckedOptionsFailWhileParsing) {
  CLI::App app;
  std::optional<int> repeats;
  std::string glob = "*";
  add_integer_option(app, "--repeats", repeats, 1, kMaxRepeats, "repeats");
  add_glob_option(app, "--benchmark", glob, "benchmark");
  EXPECT_THAT(error_of([&] { app.parse(std::vector<std::string>{"99999999999", "--repeats"}); }),
              HasSubstr("--repeats '99999999999': expected a whole number from 1 to 10000"));
  app.parse(std::vector<std::string>{"[!x]*", "--benchmark", "3", "--repeats"});  // CLI11 reads the vector backwards
  EXPECT_EQ(repeats, 3);
  EXPECT_EQ(glob, "[^x]*");
}
