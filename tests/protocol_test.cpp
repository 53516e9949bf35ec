// The agent protocol from both ends: the typed records, the harness that
// writes them, the line reader and the stream check that read them. The
// harness's records go through the same JSON text and checks as a real run's
// (tests/e2e/protocol.sh runs the controller against a misbehaving agent).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "benchmarks/benchmark.h"
#include "benchmarks/harness.h"
#include "common/errors.h"
#include "common/records.h"
#include "runner/agent_invocation.h"
#include "runner/run_stream.h"
#include "support/error_text.h"

namespace {

using nlohmann::json;
namespace records = kbench::records;
namespace bench = kbench::bench;
namespace runner = kbench::runner;
using kbench::Better;
using kbench::ResultClass;

const ResultClass kMean{"mean", "ns", Better::Lower};
const ResultClass kRate{"rate", "ops/sec", Better::Higher};

records::BenchmarkStart start_record() {
  records::BenchmarkStart start;
  start.benchmark = "test/bench";
  start.params = {{"calls", "10"}};
  start.size = "quick";
  start.cpu = 1;
  start.warmups = 0;
  start.repeats = 2;
  start.result_classes = {kMean, kRate};
  return start;
}

// The text a record travels as, and back.
records::Record round_trip(const records::Record& record) {
  return records::record_from_json(json::parse(records::to_json(record).dump()));
}

std::string bad_record_message(const json& record) {
  return kbench::testing::error_of<records::BadRecord>([&] { records::record_from_json(record); }, "(accepted)");
}

json sample_json(double value, const std::string& unit = "ns") {
  return records::to_json(records::Sample{"test/bench", {"mean", unit, Better::Lower}, 0, value});
}

}  // namespace

TEST(Records, EveryRecordSurvivesItsJsonText) {
  const auto start = std::get<records::BenchmarkStart>(round_trip(start_record()));
  EXPECT_EQ(start.benchmark, "test/bench");
  EXPECT_EQ(start.params, (kbench::Params{{"calls", "10"}}));
  EXPECT_EQ(start.size, "quick");
  EXPECT_EQ(start.cpu, 1);
  EXPECT_EQ(start.repeats, 2);
  EXPECT_EQ(start.result_classes, (std::vector<ResultClass>{kMean, kRate}));

  auto unpinned = start_record();
  unpinned.cpu.reset();
  EXPECT_FALSE(std::get<records::BenchmarkStart>(round_trip(unpinned)).cpu.has_value());

  const auto sample = std::get<records::Sample>(round_trip(records::Sample{"test/bench", kRate, 1, 2.5}));
  EXPECT_EQ(sample.result_class, kRate);
  EXPECT_EQ(sample.repeat, 1);
  EXPECT_EQ(sample.value, 2.5);

  const auto end_of_repeat = std::get<records::RepeatEnd>(round_trip(records::RepeatEnd{"test/bench", 1, 0.5, 7}));
  EXPECT_EQ(end_of_repeat.repeat, 1);
  EXPECT_EQ(end_of_repeat.involuntary_switches, 7);

  const auto info = std::get<records::Info>(round_trip(records::Info{"test/bench", "affinity", json::array({0, 1})}));
  EXPECT_EQ(info.value, json::array({0, 1}));
  EXPECT_EQ(std::get<records::Skipped>(round_trip(records::Skipped{"test/bench", "no perf"})).reason, "no perf");
  EXPECT_EQ(std::get<records::Error>(round_trip(records::Error{"test/bench", "boom"})).message, "boom");
  EXPECT_EQ(std::get<records::End>(round_trip(records::End{"test/bench", records::EndStatus::Skipped})).status,
            records::EndStatus::Skipped);
  const auto fingerprint = std::get<records::Fingerprint>(round_trip(records::Fingerprint{{{"hostname", "h"}}}));
  EXPECT_EQ(fingerprint.data.at("hostname"), "h");
}

TEST(Records, TypeWordsAreTheDocumentedOnes) {
  EXPECT_EQ(records::to_json(start_record()).at("type"), "benchmark");
  EXPECT_EQ(records::to_json(records::RepeatEnd{}).at("type"), "repeat_end");
  EXPECT_EQ(records::type_of(records::Record{records::End{}}), "end");
  EXPECT_EQ(records::to_json(records::End{"b", records::EndStatus::Error}).at("status"), "error");
}

TEST(Records, ABadRecordIsRefusedNamingTheField) {
  EXPECT_EQ(bad_record_message(sample_json(-1)),
            "'sample' record: field 'value': expected a value >= 0 for a quantity in ns, not -1.0");
  EXPECT_EQ(bad_record_message(sample_json(std::numeric_limits<double>::infinity())),
            "'sample' record: field 'value': expected a finite number");
  json no_value = sample_json(1);
  no_value.erase("value");
  EXPECT_EQ(bad_record_message(no_value), "'sample' record: field 'value': expected a number");
  json text_value = sample_json(1);
  text_value["value"] = "12";
  EXPECT_EQ(bad_record_message(text_value), "'sample' record: field 'value': expected a number");
  json negative_repeat = sample_json(1);
  negative_repeat["repeat"] = -1;
  EXPECT_NE(bad_record_message(negative_repeat).find("field 'repeat'"), std::string::npos);
  json huge_repeat = sample_json(1);
  huge_repeat["repeat"] = std::numeric_limits<unsigned long long>::max();
  EXPECT_NE(bad_record_message(huge_repeat).find("field 'repeat'"), std::string::npos);
  json sideways = sample_json(1);
  sideways["better"] = "sideways";
  EXPECT_EQ(bad_record_message(sideways), "'sample' record: field 'better': expected \"higher\" or \"lower\"");
  json newline_name = sample_json(1);
  newline_name["resultclass"] = "mean\n";
  EXPECT_NE(bad_record_message(newline_name).find("without control characters"), std::string::npos);
  json bracketed_unit = sample_json(1);
  bracketed_unit["unit"] = "n)s";
  EXPECT_NE(bad_record_message(bracketed_unit).find("field 'unit'"), std::string::npos);

  json twice = records::to_json(start_record());
  twice["result_classes"].push_back(twice["result_classes"][0]);
  EXPECT_NE(bad_record_message(twice).find("'mean (ns)' is twice"), std::string::npos);
  json no_classes = records::to_json(start_record());
  no_classes.erase("result_classes");
  EXPECT_EQ(bad_record_message(no_classes), "'benchmark' record: field 'result_classes': expected an array of result classes");
  json number_param = records::to_json(start_record());
  number_param["params"]["calls"] = 10;
  EXPECT_NE(bad_record_message(number_param).find("field 'params'"), std::string::npos);

  json backwards = records::to_json(records::RepeatEnd{"test/bench", 0, 1.0, 0});
  backwards["seconds"] = -0.5;
  EXPECT_EQ(bad_record_message(backwards), "'repeat_end' record: field 'seconds': expected a duration >= 0");
  EXPECT_EQ(bad_record_message(json{{"type", "end"}, {"benchmark", "b"}, {"status", "fine"}}),
            "'end' record: field 'status': expected \"ok\", \"skipped\" or \"error\"");
  EXPECT_EQ(bad_record_message(json{{"type", "telemetry"}}), "a record of unknown type \"telemetry\"");
  EXPECT_EQ(bad_record_message(json{{"type", std::string(1000, 'x')}}),
            "a record of unknown type \"" + std::string(40, 'x') + "\"...");
  EXPECT_EQ(bad_record_message(json::array()), "a record must be a JSON object");
  EXPECT_EQ(bad_record_message(json{{"kind", "sample"}}), "a record without a string \"type\"");
}

TEST(Records, FieldsANewerAgentAddsAreIgnored) {
  json sample = sample_json(3);
  sample["cpu_of_sample"] = 2;
  EXPECT_EQ(records::sample_from_json(sample).value, 3);
}

TEST(Records, NegativeValuesAreRefusedOnlyForTimesRatesAndSizes) {
  for (const char* unit : {"ns", "usec", "ms", "sec", "seconds", "ticks", "ops/sec", "ops/second", "bytes/sec",
                           "msg/sec", "Mbps", "bytes", "MB", "KiB"}) {
    EXPECT_TRUE(records::unit_cannot_be_negative(unit)) << unit;
  }
  for (const char* unit : {"%", "score", "ratio", "delta ns"}) EXPECT_FALSE(records::unit_cannot_be_negative(unit)) << unit;
  EXPECT_EQ(records::sample_from_json(sample_json(-3, "%")).value, -3);
}

TEST(Records, EveryUnitTheBenchmarksDeclareIsKnown) {
  // A benchmark with a unit the sign check does not know would let negative
  // times through: name the unit in unit_cannot_be_negative (or here, when it
  // can truly be negative).
  const auto& registry = bench::Registry::instance();
  ASSERT_FALSE(registry.names().empty());
  for (const auto& name : registry.names()) {
    const auto benchmark = registry.create(name);
    const auto params = bench::resolve_params(*benchmark, bench::Size::Default, {});
    for (const auto& rc : benchmark->result_classes(params)) {
      // A relative difference of two loop times: noise can make it negative.
      if (name.rfind("kfunc/", 0) == 0 && rc.label() == "tracer overhead per switch (%)") continue;
      EXPECT_TRUE(records::unit_cannot_be_negative(rc.unit)) << name << ": " << rc.label();
    }
  }
}

namespace {

// A benchmark whose repeats report what the test tells it to.
class ScriptedBenchmark : public bench::Benchmark {
 public:
  std::vector<std::vector<bench::Measurement>> repeats;  // one per run_repeat call
  bool skip = false;
  bool bad_parameter = false;
  bool finished = false;

  std::string name() const override { return "test/bench"; }
  std::string description() const override { return "scripted"; }
  std::vector<bench::ParamSpec> params() const override { return {{"calls", "100", "10", "calls"}}; }
  std::vector<ResultClass> result_classes(const kbench::Params&) const override { return {kMean, kRate}; }
  void prepare(const kbench::Params&, const bench::Placement&) override {
    if (bad_parameter) throw kbench::InputError("calls 'x': expected a number");
    if (skip) throw kbench::SkipBenchmark("needs a\nfrobnicator");
  }
  std::vector<bench::Measurement> run_repeat(const kbench::Params&, const bench::Placement&) override {
    return repeats.at(next_++);
  }
  void finish() override { finished = true; }
  std::map<std::string, std::string> notes() const override { return {{"placement", "cpu0"}}; }

 private:
  std::size_t next_ = 0;
};

struct HarnessRun {
  int exit_status = -1;
  std::vector<json> lines;  // as the agent's writer would print them
};

HarnessRun run_harness(ScriptedBenchmark& benchmark, int warmups, int repeats) {
  HarnessRun run;
  bench::RunSettings settings;
  settings.size = "quick";
  settings.warmups = warmups;
  settings.repeats = repeats;
  run.exit_status = bench::run_benchmark(benchmark, "test/bench", {{"calls", "10"}}, settings,
                                         [&](const records::Record& r) { run.lines.push_back(records::to_json(r)); });
  return run;
}

// The record types in order, info records left out: which facts there are
// depends on the machine (a busy one adds "busy").
std::vector<std::string> types_of(const std::vector<json>& lines) {
  std::vector<std::string> types;
  for (const auto& line : lines) {
    if (line.at("type") != "info") types.push_back(line.at("type"));
  }
  return types;
}

std::vector<std::string> info_keys(const std::vector<json>& lines) {
  std::vector<std::string> keys;
  for (const auto& line : lines) {
    if (line.at("type") == "info") keys.push_back(line.at("key"));
  }
  return keys;
}

runner::ExpectedRun expected_run(int warmups, int repeats) {
  return {"test/bench", {{"calls", "10"}}, "quick", warmups, repeats, {kMean, kRate}};
}

}  // namespace

TEST(Harness, WritesWhatTheControllerAccepts) {
  ScriptedBenchmark benchmark;
  benchmark.repeats = {{{kMean, 1}, {kRate, 5}}, {{kRate, 6}, {kMean, 2}}, {{kMean, 3}, {kRate, 7}}};
  const auto run = run_harness(benchmark, 1, 2);
  EXPECT_EQ(run.exit_status, kbench::kExitOk);
  EXPECT_TRUE(benchmark.finished);
  EXPECT_EQ(types_of(run.lines), (std::vector<std::string>{"benchmark", "sample", "sample", "repeat_end", "sample",
                                                           "sample", "repeat_end", "end"}));
  const auto keys = info_keys(run.lines);
  EXPECT_EQ(keys.front(), "affinity");
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "placement"), 1) << "a note is sent again only when it changed";

  std::map<int, std::vector<double>> committed;
  runner::RunStream stream(expected_run(1, 2), [&](int repeat, const std::vector<records::Sample>& samples) {
    for (const auto& s : samples) committed[repeat].push_back(s.value);
  });
  for (const auto& line : run.lines) stream.on_record(json::parse(line.dump()));
  stream.check_complete();
  EXPECT_FALSE(stream.fault()) << *stream.fault();
  EXPECT_EQ(stream.repeats_committed(), 2);
  // The warmup's values are not reported; each repeat's come in declared order.
  EXPECT_EQ(committed, (std::map<int, std::vector<double>>{{0, {2, 6}}, {1, {3, 7}}}));
}

TEST(Harness, ANegativeLatencyFailsTheBenchmarkInTheAgent) {
  ScriptedBenchmark benchmark;
  benchmark.repeats = {{{kMean, 1}, {kRate, 5}}, {{kMean, -2}, {kRate, 5}}};
  const auto run = run_harness(benchmark, 0, 2);
  EXPECT_EQ(run.exit_status, kbench::kExitFailure);
  ASSERT_GE(run.lines.size(), 2u);
  EXPECT_EQ(run.lines[run.lines.size() - 2].at("message"),
            "result class 'mean (ns)' has the negative value -2, impossible in ns");
  EXPECT_EQ(run.lines.back().at("status"), "error");
  EXPECT_TRUE(benchmark.finished);
}

TEST(Harness, UndeclaredMissingAndNonFiniteValuesAreFaults) {
  EXPECT_THROW(bench::checked({{kMean, 1}}, {kMean, kRate}), kbench::RunError);
  EXPECT_THROW(bench::checked({{kMean, 1}, {kRate, 1}, {{"extra", "ns", Better::Lower}, 1}}, {kMean, kRate}),
               kbench::RunError);
  EXPECT_THROW(bench::checked({{kMean, 1}, {kMean, 1}, {kRate, 1}}, {kMean, kRate}), kbench::RunError);
  EXPECT_THROW(bench::checked({{kMean, NAN}, {kRate, 1}}, {kMean, kRate}), kbench::RunError);
  EXPECT_EQ(bench::checked({{kRate, 2}, {kMean, 1}}, {kMean, kRate}).front().value, 1);
}

TEST(Harness, ABadParameterInPrepareWritesNothing) {
  ScriptedBenchmark benchmark;
  benchmark.bad_parameter = true;
  std::vector<json> lines;
  EXPECT_THROW(bench::run_benchmark(benchmark, "test/bench", {}, {},
                                    [&](const records::Record& r) { lines.push_back(records::to_json(r)); }),
               kbench::InputError);
  EXPECT_TRUE(lines.empty());
  EXPECT_TRUE(benchmark.finished);
}

TEST(Harness, ASkipIsOneLineWithItsEnd) {
  ScriptedBenchmark benchmark;
  benchmark.skip = true;
  const auto run = run_harness(benchmark, 0, 1);
  EXPECT_EQ(run.exit_status, kbench::kExitOk);
  EXPECT_EQ(types_of(run.lines), (std::vector<std::string>{"benchmark", "skipped", "end"}));
  EXPECT_EQ(run.lines[1].at("reason"), "needs a frobnicator");
  EXPECT_EQ(run.lines[2].at("status"), "skipped");
}

namespace {

struct StreamUnderTest {
  std::vector<int> committed;
  runner::RunStream stream;
  explicit StreamUnderTest(runner::ExpectedRun expected = expected_run(0, 2))
      : stream(std::move(expected), [this](int repeat, const std::vector<records::Sample>&) {
          committed.push_back(repeat);
        }) {}
  void feed(const records::Record& record) { stream.on_record(records::to_json(record)); }
  void feed_repeat(int repeat) {
    feed(records::Sample{"test/bench", kMean, repeat, 1});
    feed(records::Sample{"test/bench", kRate, repeat, 2});
    feed(records::RepeatEnd{"test/bench", repeat, 0.1, 0});
  }
};

}  // namespace

TEST(RunStream, TheFirstFaultIsTheReasonAndNothingAfterItIsStored) {
  StreamUnderTest t;
  t.feed(start_record());
  t.feed_repeat(0);
  t.feed(records::Sample{"test/bench", kMean, 1, 1});
  t.feed(records::Sample{"other/bench", kRate, 1, 2});
  t.feed(records::RepeatEnd{"test/bench", 1, 0.1, 0});
  t.feed(records::Info{"test/bench", "k", "v"});
  t.stream.on_record(json{{"type", "nonsense"}});
  t.stream.check_complete();
  EXPECT_EQ(t.committed, std::vector<int>{0});
  ASSERT_TRUE(t.stream.fault());
  EXPECT_EQ(*t.stream.fault(), "agent wrote a 'sample' record for benchmark 'other/bench' while running 'test/bench'");
}

TEST(RunStream, AnEndWithoutItsRecordsIsAFault) {
  StreamUnderTest skipped;
  skipped.feed(start_record());
  skipped.feed(records::End{"test/bench", records::EndStatus::Skipped});
  EXPECT_EQ(skipped.stream.fault(), "agent ended with status skipped without a 'skipped' record");

  StreamUnderTest after_end;
  after_end.feed(start_record());
  after_end.feed_repeat(0);
  after_end.feed_repeat(1);
  after_end.feed(records::End{"test/bench", records::EndStatus::Ok});
  EXPECT_FALSE(after_end.stream.fault());
  after_end.feed(records::Info{"test/bench", "late", "v"});
  EXPECT_EQ(after_end.stream.fault(), "agent wrote a 'info' record after its 'end' record");

  StreamUnderTest no_start;
  no_start.feed(records::Sample{"test/bench", kMean, 0, 1});
  EXPECT_EQ(no_start.stream.fault(), "agent wrote a 'sample' record before the 'benchmark' record");

  StreamUnderTest silent;
  silent.stream.check_complete();
  EXPECT_EQ(silent.stream.fault(), "agent exited with status 0 without writing a 'benchmark' record");
}

TEST(RunStream, AnErrorDropsTheRepeatInFlight) {
  StreamUnderTest t;
  t.feed(start_record());
  t.feed(records::Sample{"test/bench", kMean, 0, 1});
  t.feed(records::Error{"test/bench", "it broke"});
  t.feed(records::End{"test/bench", records::EndStatus::Error});
  EXPECT_FALSE(t.stream.fault());
  EXPECT_EQ(t.stream.agent_error(), "it broke");
  EXPECT_TRUE(t.committed.empty());
}

TEST(RunStream, TheCatalogueHoldsUnitsAndDirections) {
  StreamUnderTest t;
  auto start = start_record();
  start.result_classes = {{"mean", "ns", Better::Higher}};
  t.feed(start);
  EXPECT_EQ(t.stream.fault(),
            "agent declares the result class 'mean (ns)' (higher is better), unlike every result class of test/bench "
            "in the catalogue");
}

TEST(RunStream, AStoreThatRefusesARepeatFailsTheBenchmark) {
  runner::RunStream stream(expected_run(0, 2), [](int, const std::vector<records::Sample>&) {
    throw kbench::RunError("store: disk full");
  });
  stream.on_record(records::to_json(start_record()));
  stream.on_record(records::to_json(records::Sample{"test/bench", kMean, 0, 1}));
  stream.on_record(records::to_json(records::Sample{"test/bench", kRate, 0, 1}));
  stream.on_record(records::to_json(records::RepeatEnd{"test/bench", 0, 0.1, 0}));
  EXPECT_EQ(stream.fault(), "store: disk full");
  EXPECT_EQ(stream.repeats_committed(), 0);
}

namespace {

struct ReaderUnderTest {
  std::vector<json> records;
  runner::RecordLineReader reader{[this](const json& record) { records.push_back(record); }};
  void feed(const std::string& text, std::size_t chunk = 65536) {
    for (std::size_t at = 0; at < text.size(); at += chunk) {
      const std::string piece = text.substr(at, chunk);
      reader.feed(piece.data(), piece.size());
    }
  }
};

// A record line of exactly `bytes` bytes (without its newline).
std::string record_line_of(std::size_t bytes) {
  json record = records::to_json(records::Info{"test/bench", "pad", ""});
  const std::size_t bare = record.dump().size();
  record["value"] = std::string(bytes - bare, 'p');
  return record.dump();
}

}  // namespace

TEST(RecordLineReader, ALineUpTo1MiBIsARecordAndALongerOneIsDiscarded) {
  ReaderUnderTest fits;
  fits.feed(record_line_of(runner::kMaxRecordLineBytes) + "\n");
  EXPECT_FALSE(fits.reader.fault());
  ASSERT_EQ(fits.records.size(), 1u);

  ReaderUnderTest too_long;
  too_long.feed(R"({"type":"info"})" "\n" + record_line_of(runner::kMaxRecordLineBytes + 1) + "\n" +
                R"({"type":"end"})" "\n");
  EXPECT_EQ(too_long.reader.fault(), "agent wrote a line of more than 1 MiB");
  // Nothing after the fault is trusted.
  EXPECT_EQ(too_long.records.size(), 1u);
}

TEST(RecordLineReader, LinesSplitAcrossReadsAndALastLineWithoutNewline) {
  ReaderUnderTest t;
  t.feed(R"({"type":"a"})" "\n\n" R"({"type":"b"})" "\n" R"({"type":"c"})", 3);
  EXPECT_EQ(t.records.size(), 2u);
  t.reader.finish();
  ASSERT_EQ(t.records.size(), 3u);
  EXPECT_EQ(t.records[2].at("type"), "c");
}

TEST(RecordLineReader, ALineThatIsNoRecordIsQuotedShortAndPrintable) {
  ReaderUnderTest t;
  t.feed("\x1b[2Jnot json " + std::string(500, 'y') + "\n" + R"({"type":"end"})" "\n");
  EXPECT_EQ(t.reader.fault(),
            "agent wrote a line that is not a JSON record: \\x1b[2Jnot json " + std::string(47, 'y') +
                "... (513 bytes)");
  EXPECT_TRUE(t.records.empty());
  ReaderUnderTest array;
  array.feed("[1,2]\n");
  EXPECT_EQ(array.reader.fault(), "agent wrote a line that is not a JSON record: [1,2]");
}
