// Formatting of the text tables: display width of CJK and combining
// marks, wrapping of long names, values in the label's unit and "wide" confidence
// intervals in the single-profile table, its width on a quick-suite-sized
// table, truthful "SUT" / "SUT Class" headings, and mail keys that cannot be
// mistaken for profile names.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/model.h"
#include "report/text_table.h"
#include "support/test_files.h"

namespace kbench::report {

using analysis::Cell;
using analysis::ProfileRow;
using analysis::ProfileTable;
using analysis::Report;
using analysis::Row;
using analysis::SutScope;
using analysis::Table;

namespace {

using kbench::testing::read_file;
using kbench::testing::expect_golden;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  for (const std::string& line : split_lines(text)) widest = std::max(widest, display_width(line));
  return widest;
}

// Every line of a grid (rules and rows) has the same display width, and every
// '|' of a row sits in the display column of a '+' of the rules.
void expect_grid_aligned(const std::string& text) {
  std::size_t width = 0;
  std::string rule;
  for (const std::string& line : split_lines(text)) {
    if (line.empty() || (line[0] != '|' && line[0] != '+')) continue;
    if (width == 0) width = display_width(line);
    EXPECT_EQ(display_width(line), width) << "'" << line << "'";
    if (line[0] == '+' && rule.empty()) rule = line;
    if (line[0] != '|') continue;
    std::size_t column = 0;
    for (std::size_t pos = 0; pos < line.size();) {
      const std::size_t next = pos + prefix_bytes_for_width(line.substr(pos), 1);
      if (line[pos] == '|') {
        EXPECT_EQ(rule[column], '+') << "'" << line << "' column " << column;
      }
      column += display_width(line.substr(pos, next - pos));
      pos = next;
    }
  }
}

ResultClass result_class(const std::string& name, const std::string& unit, Better better = Better::Lower) {
  return ResultClass{name, unit, better};
}

stats::Summary summary(double mean, double half_width, std::size_t count, double cv = 0.01) {
  stats::Summary s;
  s.count = count;
  s.mean = s.median = mean;
  s.cv = cv;
  s.stddev = std::fabs(mean) * cv;
  s.min = mean - half_width / 3;
  s.max = mean + half_width / 3;
  s.ci95_low = mean - half_width;
  s.ci95_high = mean + half_width;
  return s;
}

std::string render_profile(const ProfileTable& table, bool all_columns = false) {
  std::ostringstream out;
  render_profile_grid(table, out, {all_columns});
  return out.str();
}

// ---------------------------------------------------------------------------
// Display width

TEST(ReportDisplayWidth, WideCharactersCountTwoAndCombiningMarksZero) {
  EXPECT_EQ(display_width("getpid"), 6u);
  EXPECT_EQ(display_width("日本語"), 6u);            // CJK ideographs
  EXPECT_EQ(display_width("ｆｏｒｋ"), 8u);          // fullwidth Latin
  EXPECT_EQ(display_width("한국"), 4u);              // Hangul syllables
  EXPECT_EQ(display_width("e\xCC\x81"), 1u);         // e + combining acute accent
  EXPECT_EQ(display_width("ñ"), 1u);                 // precomposed
  EXPECT_EQ(display_width("µs"), 2u);
  EXPECT_EQ(display_width("↑1.1%"), 5u);
  EXPECT_EQ(display_width("±ci95"), 5u);
  EXPECT_EQ(display_width("\xFF\xFE"), 2u);  // not UTF-8: one column per byte, no crash
  EXPECT_EQ(display_width("\xE6\x97"), 2u);  // a truncated sequence
}

TEST(ReportDisplayWidth, PrefixNeverSplitsACharacterOrItsMarks) {
  EXPECT_EQ(prefix_bytes_for_width("日本語", 4), 6u);  // two ideographs of 3 bytes
  EXPECT_EQ(prefix_bytes_for_width("日本語", 3), 3u);  // the second would need 2 more columns
  EXPECT_EQ(prefix_bytes_for_width("e\xCC\x81x", 1), 3u);  // the accent stays with its e
  EXPECT_EQ(prefix_bytes_for_width("日", 1), 3u);           // progress even without room
}

TEST(ReportDisplayWidth, PadUsesDisplayColumns) {
  EXPECT_EQ(pad("日本", 6, Align::Left), "日本  ");
  EXPECT_EQ(pad("e\xCC\x81", 3, Align::Right), "  e\xCC\x81");
}

TEST(ReportWrap, PiecesFitAndJoinBackToTheText) {
  const std::string word = "kvfree_rcu_2_arg_vmalloc_test_with_an_unreasonably_long_identifier";
  const std::vector<std::string> lines = wrap_text(word, 20);
  std::string joined;
  for (const std::string& line : lines) {
    EXPECT_LE(display_width(line), 20u) << line;
    joined += line;
  }
  EXPECT_EQ(joined, word);
  // Benchmark names break after the family.
  EXPECT_EQ(wrap_text("mmtests/sysbench-thread", 16), (std::vector<std::string>{"mmtests/", "sysbench-thread"}));
  // CJK words split between characters, each line within the width.
  for (const std::string& line : wrap_text("日本語のとても長いベンチマーク名前", 9)) EXPECT_LE(display_width(line), 9u);
  EXPECT_EQ(wrap_text("size:4MB P:1 stride:128B rnd_read_lat (ns)", 26, 2),
            (std::vector<std::string>{"size:4MB P:1 stride:128B", "  rnd_read_lat (ns)"}));
}

// ---------------------------------------------------------------------------
// Grid tables with CJK and long names

TEST(ReportTextTable, CjkAndCombiningNamesStayAligned) {
  TextTable table({{"Benchmark"}, {"Result Class"}, {"mean", Align::Right}});
  table.add_row({"syscall/getpid", "mean (ns)", "145.83"}, true);
  table.add_row({"日本語/ベンチ", "平均 (ns)", "146.67"}, true);
  table.add_row({"cafe\xCC\x81/noe\xCC\x88l", "p99 (ns)", "150.00"}, true);
  std::ostringstream grid;
  table.render_grid(grid);
  expect_grid_aligned(grid.str());
  std::ostringstream markdown;
  table.render_markdown(markdown);
  std::set<std::size_t> widths;
  for (const std::string& line : split_lines(markdown.str())) widths.insert(display_width(line));
  EXPECT_EQ(widths.size(), 1u) << markdown.str();
}

TEST(ReportTextTable, LongCellsWrapInsideTheirColumn) {
  TextTable table({{"Benchmark", Align::Left, 16, 0}, {"Result Class", Align::Left, 20}, {"mean", Align::Right}});
  table.add_row({"sockperf/packet-tp-tcp", "throughput m:1472B t:0.5s, msg_rate (msg/sec)", "507.44k"}, true);
  table.add_row({"", "日本語の非常に長い結果クラスの名前 (ns)", "1.00 µs"});
  std::ostringstream out;
  table.render_grid(out);
  const std::string text = out.str();
  expect_grid_aligned(text);
  EXPECT_NE(text.find("| sockperf/     | throughput m:1472B   | 507.44k |"), std::string::npos) << text;
  EXPECT_NE(text.find("| packet-tp-tcp |   t:0.5s, msg_rate   |         |"), std::string::npos) << text;
  // The number stands on the first line of its row only.
  EXPECT_EQ(text.find("507.44k"), text.rfind("507.44k"));
  for (const std::string& line : split_lines(text)) EXPECT_LE(display_width(line), 54u) << line;
}

// ---------------------------------------------------------------------------
// Single-profile table

ProfileTable wide_ci_table() {
  ProfileTable table;
  table.sut = "vm";
  table.swprofile = "quick2";
  // n = 2 from a real quick-suite run: t(0.975, 1) = 12.71 makes the CI reach
  // below zero for a context switch time.
  stats::Summary two = summary(1790.64, 8280.69, 2, 0.5147);
  two.min = 1138.93;
  two.max = 2442.34;
  table.rows = {{"ctxsw/futex-threads", result_class("switch", "ns"), two},
                {"perf/mem", result_class("memset -k 64MB -f default -s 256MB -l 4", "bytes/sec", Better::Higher),
                 summary(5119622721.20, 1641661630.09, 2, 0.0357)},
                {"syscall/getppid", result_class("mean", "ns"), summary(201.85, 1.65, 2, 0.0009)}};
  return table;
}

TEST(ReportProfileGrid, ACiWiderThanTheMeanIsCalledWide) {
  const std::string compact = render_profile(wide_ci_table());
  const std::string all = render_profile(wide_ci_table(), true);
  expect_golden("profile-grid-wide-ci.txt", compact);
  expect_golden("profile-grid-all-columns.txt", all);
  for (const std::string& text : {compact, all}) {
    // No negative bound of a positive quantity is printed: the bounds of the
    // n = 2 row (-6490.05 ns .. 10071.33 ns) become "wide" with a note.
    EXPECT_EQ(text.find("-6"), std::string::npos) << text;
    EXPECT_NE(text.find("wide: the 95% confidence interval of the mean is wider than the mean itself"),
              std::string::npos);
    expect_grid_aligned(text);
  }
  EXPECT_NE(compact.find("|       1790.64 |    wide | 51.47% |"), std::string::npos) << compact;
  EXPECT_NE(compact.find("|        201.85 |  ±0.82% |  0.09% |"), std::string::npos) << compact;
  EXPECT_NE(all.find("|       1138.93 |          wide |       1790.64 |          wide |       2442.34 |"), std::string::npos) << all;
  EXPECT_NE(all.find("| 3477961091.11 | 5119622721.20 | 6761284351.29 |"), std::string::npos) << all;
}

TEST(ReportProfileGrid, NoNoteWhenEveryCiIsNarrow) {
  ProfileTable table = wide_ci_table();
  table.rows.erase(table.rows.begin());
  EXPECT_EQ(render_profile(table).find("wide"), std::string::npos);
}

// The labels of the quick suite (plans/quick.yaml) as a real run printed them;
// the old table was 180 columns wide.
ProfileTable quick_suite_table() {
  const std::vector<std::tuple<std::string, std::string, std::string, double>> rows = {
      {"ctxsw/futex-processes", "switch", "ns", 1460.94},
      {"lmbench/lat-mem-rd", "size:16MB P:1 stride:128B rnd_read_lat", "ns", 127.80},
      {"micromm/munmap", "munmap: p:512, d:0.5, s:64MB", "seconds", 0.00016},
      {"mmtests/hackbench", "hackbench-process-sockets-1", "seconds", 0.035},
      {"mmtests/sysbench-thread", "sysbenchthread-4", "usec", 8577.02},
      {"perf/mem", "mmap -p 4KB -f populate -s 64MB -l 2", "bytes/sec", 1628393128.24},
      {"perf/syscall", "basic", "ops/sec", 7158441.27},
      {"sockperf/echo-lat-tcp", "ping-pong m:1472B t:0.5s, avg_latency", "usec", 7.44},
      {"sockperf/packet-tp-udp", "throughput m:1472B t:0.5s, throughput_mbps", "Mbps", 2519.84},
      {"sockperf/packet-tp-tcp", "throughput m:1472B t:0.5s, msg_rate", "msg/sec", 507441.20},
      {"syscall/getpid", "p99.9", "ns", 247.62}};
  ProfileTable table;
  table.sut = "vm";
  table.swprofile = "quick2";
  for (const auto& [benchmark, name, unit, mean] : rows)
    table.rows.push_back({benchmark, result_class(name, unit), summary(mean, mean * 1.2, 2, 0.5)});
  return table;
}

TEST(ReportProfileGrid, QuickSuiteTableFitsATerminal) {
  const std::string compact = render_profile(quick_suite_table());
  expect_grid_aligned(compact);
  EXPECT_LE(widest_line(compact), 100u) << compact;
  // Wrapping moves words, never drops them.
  for (const ProfileRow& row : quick_suite_table().rows) {
    std::istringstream words(row.result_class.label());
    for (std::string word; words >> word;) EXPECT_NE(compact.find(word), std::string::npos) << word;
  }
  const std::string all = render_profile(quick_suite_table(), true);
  expect_grid_aligned(all);
  EXPECT_LE(widest_line(all), 140u) << all;
}

// ---------------------------------------------------------------------------
// Headings

TEST(ReportHeading, SutOrSutClassAsTheModelSays) {
  EXPECT_EQ(sut_heading("vm", SutScope::Sut), "Results for SUT vm");
  EXPECT_EQ(sut_heading("aws-m7g.metal", SutScope::SutClass), "Results for SUT Class aws-m7g.metal");
  ProfileTable table = wide_ci_table();
  EXPECT_EQ(split_lines(render_profile(table))[0], "Results for SUT vm, swprofile quick2:");
  table.sut_scope = SutScope::SutClass;
  EXPECT_EQ(split_lines(render_profile(table))[0], "Results for SUT Class vm, swprofile quick2:");

  Report report;
  Table compare;
  compare.sut = "vm";
  compare.base_profile = "A";
  compare.test_profiles = {"B"};
  report.tables.push_back(compare);
  report.legend.method = kbench::analysis::TestMethod::Welch;
  for (const std::string format : {"grid", "markdown", "delta", "mail"}) {
    std::ostringstream out;
    make_renderer(format)->render(report, out);
    EXPECT_EQ(split_lines(out.str())[0], "Results for SUT vm:") << format;
  }
}

// ---------------------------------------------------------------------------
// Mail keys

// A syscall/getpid row named `result_class_name` with one present test cell
// per test profile: 145.83 ns -> 144 ns, -1.25 %.
Row mail_row(const std::string& result_class_name, std::size_t tests) {
  Row row;
  row.benchmark = "syscall/getpid";
  row.result_class = result_class(result_class_name, "ns");
  row.base_present = true;
  row.base = summary(145.83, 1, 6);
  for (std::size_t t = 0; t < tests; ++t) {
    Cell cell;
    cell.present = true;
    cell.test = summary(144, 1, 6);
    cell.change_pct = -1.25;
    row.cells.push_back(cell);
  }
  return row;
}

std::string render_mail(Report& report) {
  report.legend.method = kbench::analysis::TestMethod::Welch;
  std::ostringstream out;
  make_renderer("mail")->render(report, out);
  return out.str();
}

// The "X: name" lines under a mail table, as key -> profile.
std::vector<std::pair<std::string, std::string>> mail_keys(const std::vector<std::string>& tests, const std::string& base) {
  Report report;
  Table table;
  table.sut = "vm";
  table.base_profile = base;
  table.test_profiles = tests;
  table.columns.resize(tests.size());
  table.rows.push_back(mail_row("mean", tests.size()));
  report.tables.push_back(table);
  std::vector<std::pair<std::string, std::string>> keys;
  for (const std::string& line : split_lines(render_mail(report))) {
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos || colon == 0 || colon > 3) continue;
    const std::string key = line.substr(0, colon);
    if (line.find("improvement") != std::string::npos) continue;  // the summary, not the key
    if (key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string::npos) keys.emplace_back(key, line.substr(colon + 2));
  }
  return keys;
}

TEST(ReportMailKeys, AKeyNeverNamesAnotherProfile) {
  // Before: base A, test B printed "A: B" under a table whose base is A.
  using Keys = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(mail_keys({"B"}, "A"), (Keys{{"B", "B"}}));
  EXPECT_EQ(mail_keys({"C", "B"}, "A"), (Keys{{"C", "C"}, {"D", "B"}}));
  EXPECT_EQ(mail_keys({"a", "b"}, "base"), (Keys{{"A", "a"}, {"B", "b"}}));  // its own name is fine
  EXPECT_EQ(mail_keys({"patched", "b"}, "a"), (Keys{{"C", "patched"}, {"D", "b"}}));  // case-insensitive
  EXPECT_EQ(mail_keys({"v6.19", "v6.20"}, "v6.18"), (Keys{{"A", "v6.19"}, {"B", "v6.20"}}));
  // Whatever the names, a key equals no profile but its own.
  const std::vector<std::string> tests{"D", "A", "C", "B", "E"};
  for (const auto& [key, profile] : mail_keys(tests, "F")) {
    EXPECT_NE(key, "F");
    for (const std::string& other : tests)
      if (other != profile) {
        EXPECT_NE(key, other) << key << " stands for " << profile;
      }
  }
}

TEST(ReportMail, CjkNamesKeepTheNumbersAligned) {
  Report report;
  Table table;
  table.sut = "vm";
  table.base_profile = "基準";
  table.test_profiles = {"修正"};
  table.columns.resize(1);
  for (const std::string name : {"平均", "mean", "日本語の非常に長い結果クラスの名前でありこれは折り返される必要があります"}) {
    table.rows.push_back(mail_row(name, 1));
  }
  report.tables.push_back(table);
  const std::string mail = render_mail(report);
  std::set<std::size_t> ends;
  for (const std::string& line : split_lines(mail)) {
    EXPECT_LE(display_width(line), 80u) << line;
    if (line.find("1.25%") != std::string::npos) ends.insert(display_width(line));
  }
  EXPECT_EQ(ends, std::set<std::size_t>{80u}) << mail;
}

// ---------------------------------------------------------------------------
// csv and json keep every digit

TEST(ReportMachineFormats, LargeValuesStayUnrounded) {
  Report report;
  Table table;
  table.sut = "vm";
  table.base_profile = "A";
  table.test_profiles = {"B"};
  Row row;
  row.benchmark = "perf/mem";
  row.result_class = result_class("memset", "bytes/sec", Better::Higher);
  row.base_present = true;
  row.base = summary(12345678901234.56, 1, 6);
  row.cells.push_back({});
  table.rows.push_back(row);
  report.tables.push_back(table);
  report.legend.method = kbench::analysis::TestMethod::Welch;
  for (const std::string format : {"csv", "json"}) {
    std::ostringstream out;
    make_renderer(format)->render(report, out);
    EXPECT_NE(out.str().find("12345678901234.56"), std::string::npos) << format;
    EXPECT_EQ(out.str().find("TB/s"), std::string::npos) << format;
  }
}

}  // namespace
}  // namespace kbench::report
