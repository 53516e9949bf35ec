// The resultstore against real files in a temporary directory, and what
// does not depend on files against both backends (PostgreSQL on the server
// scripts/pg-test-server.sh starts).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>

#include "common/errors.h"
#include "store/result_store.h"
#include "support/postgres_test_db.h"
#include "support/sqlite_sql.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

namespace kbench::store {
namespace {

using kbench::testing::ScopedEnv;
using kbench::testing::TempDir;
using kbench::testing::read_file;
using kbench::testing::run_sql;

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::set<std::string> directory_entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

Sut lab_machine() {
  Sut sut;
  sut.name = "lab-1";
  sut.hostname = "lab-1.example";
  sut.arch = "x86_64";
  sut.cpu_model = "Test CPU";
  sut.cpu_count = 2;
  sut.memory_gib = 8;
  sut.product_name = "VM";
  return sut;
}

SessionStart start_of(const std::string& swprofile, const std::string& kernel = "6.1.0-test") {
  SessionStart start;
  start.sut = lab_machine();
  start.swprofile = swprofile;
  start.fingerprint = {{"kernel_release", kernel}, {"hostname", "lab-1.example"}};
  start.started_at = "2026-11-29T12:00:00Z";
  return start;
}

const ResultClass kMean{"mean", "ns", Better::Lower};
const ResultClass kP99{"p99", "ns", Better::Lower};
const ResultClass kBasic{"basic", "ops/sec", Better::Higher};

records::Sample sample(const ResultClass& rc, double value) {
  return records::Sample{"", rc, 0, value};
}

const BenchmarkKey kGetpid{"syscall/getpid", {{"calls", "1000000"}}};
const BenchmarkKey kPerfSyscall{"perf/syscall", {}};

class StoreTest : public ::testing::Test {
 protected:
  std::string url() const { return "sqlite://" + (dir.path() / "nested" / "results.db").string(); }
  fs::path file() const { return dir.path() / "nested" / "results.db"; }

  TempDir dir;
};

class StoreBackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string url() {
    if (sqlite()) return "sqlite://" + (dir_.path() / "results.db").string();
    if (!database_) database_ = std::make_unique<kbench::testing::PostgresTestDatabase>();
    if (!database_->ok()) throw std::runtime_error("no PostgreSQL test database");
    return database_->url();
  }
  // PostgreSQL commits the benchmark and result-class rows a repeat needs
  // before the repeat's transaction (other controllers share them), so a
  // failed repeat leaves those behind there.
  bool sqlite() const { return GetParam() == "sqlite"; }

 private:
  TempDir dir_;
  std::unique_ptr<kbench::testing::PostgresTestDatabase> database_;
};

TEST_F(StoreTest, CreatesParentDirectoriesAndRoundTripsSamples) {
  {
    auto store = open_store(url(), OpenMode::CreateIfMissing);
    const auto base0 = store->begin_session(start_of("base", "6.1.0-a"));
    const auto patched0 = store->begin_session(start_of("patched"));
    const auto base1 = store->begin_session(start_of("base", "6.1.0-b"));
    EXPECT_NE(base0, base1);  // a second run of a swprofile is a new session

    store->add_repeat(base0, kGetpid, 0, {sample(kMean, 100.0), sample(kP99, 150.0)});
    store->add_repeat(base0, kGetpid, 1, {sample(kMean, 101.0), sample(kP99, 151.0)});
    store->add_repeat(base1, kGetpid, 0, {sample(kMean, 102.0), sample(kP99, 152.0)});
    store->add_repeat(patched0, kGetpid, 0, {sample(kMean, 90.0), sample(kP99, 140.0)});
    store->add_repeat(patched0, kPerfSyscall, 0, {sample(kBasic, 1.5e7)});
  }
  ASSERT_TRUE(fs::exists(file()));

  auto store = open_store(url(), OpenMode::MustExist);
  SampleQuery base;
  base.swprofiles = {"base"};
  const auto rows = store->samples(base);
  ASSERT_EQ(rows.size(), 6u);
  // Ordered by session, result class, repeat.
  EXPECT_EQ(rows[0].session_index, 0);
  EXPECT_EQ(rows[0].result_class, kMean);
  EXPECT_EQ(rows[0].repeat, 0);
  EXPECT_DOUBLE_EQ(rows[0].value, 100.0);
  EXPECT_EQ(rows[1].result_class, kMean);
  EXPECT_EQ(rows[1].repeat, 1);
  EXPECT_DOUBLE_EQ(rows[1].value, 101.0);
  EXPECT_EQ(rows[2].result_class, kP99);
  EXPECT_DOUBLE_EQ(rows[3].value, 151.0);
  EXPECT_EQ(rows[4].session_index, 1);
  EXPECT_DOUBLE_EQ(rows[4].value, 102.0);
  EXPECT_EQ(rows[5].session_index, 1);
  EXPECT_DOUBLE_EQ(rows[5].value, 152.0);
  for (const auto& row : rows) {
    EXPECT_EQ(row.sut, "lab-1");
    EXPECT_EQ(row.swprofile, "base");
    EXPECT_EQ(row.benchmark, "syscall/getpid");
    EXPECT_EQ(row.params, kGetpid.params);
  }
  EXPECT_NE(rows[0].session, rows[4].session);

  SampleQuery patched;
  patched.swprofiles = {"patched"};
  const auto patched_rows = store->samples(patched);
  ASSERT_EQ(patched_rows.size(), 3u);
  EXPECT_EQ(patched_rows[0].session_index, 0);
  EXPECT_EQ(patched_rows[2].benchmark, "perf/syscall");
  EXPECT_EQ(patched_rows[2].result_class, kBasic);
  EXPECT_EQ(patched_rows[2].result_class.better, Better::Higher);
  EXPECT_DOUBLE_EQ(patched_rows[2].value, 1.5e7);

  EXPECT_EQ(store->samples(SampleQuery{}).size(), 9u);

  const auto suts = store->list_suts("*");
  ASSERT_EQ(suts.size(), 1u);
  EXPECT_EQ(suts[0].sut.cpu_model, "Test CPU");
  EXPECT_EQ(suts[0].sut.memory_gib, 8);
  EXPECT_EQ(suts[0].sessions, 3);

  const auto profiles = store->list_swprofiles("*");
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles[0].name, "base");
  EXPECT_EQ(profiles[0].sessions, 2);
  EXPECT_EQ(profiles[0].samples, 6);
  EXPECT_EQ(profiles[0].kernel_release, "6.1.0-b");  // of the newest session
  EXPECT_THAT(profiles[0].suts, ElementsAre("lab-1"));
  EXPECT_EQ(profiles[1].name, "patched");
  EXPECT_EQ(profiles[1].samples, 3);

  const auto benchmarks = store->list_benchmarks("*");
  ASSERT_EQ(benchmarks.size(), 2u);
  EXPECT_EQ(benchmarks[0].name, "perf/syscall");
  EXPECT_EQ(benchmarks[0].samples, 1);
  EXPECT_EQ(benchmarks[1].name, "syscall/getpid");
  EXPECT_THAT(benchmarks[1].result_classes, ElementsAre(kMean, kP99));
  EXPECT_EQ(benchmarks[1].samples, 8);

  EXPECT_TRUE(store->has_swprofile("base"));
  EXPECT_FALSE(store->has_swprofile("nonexistent"));

  const auto sessions = store->list_sessions({"base"});
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].session_index, 0);
  EXPECT_EQ(sessions[0].kernel_release, "6.1.0-a");
  EXPECT_EQ(sessions[1].session_index, 1);
  EXPECT_EQ(sessions[1].started_at, "2026-11-29T12:00:00Z");
  EXPECT_EQ(store->list_sessions({}).size(), 3u);

  EXPECT_TRUE(store->integrity_check().empty());
}

TEST_P(StoreBackendTest, SameSwprofileOnAnotherSutCountsItsOwnSessions) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  SessionStart other = start_of("base");
  other.sut.name = "lab-2";
  store->begin_session(start_of("base"));
  const auto second_machine = store->begin_session(other);
  store->add_repeat(second_machine, kGetpid, 0, {sample(kMean, 1.0)});
  const auto rows = store->samples(SampleQuery{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].sut, "lab-2");
  EXPECT_EQ(rows[0].session_index, 0);
  EXPECT_EQ(store->list_suts("*").size(), 2u);
  EXPECT_THAT(store->list_swprofiles("base")[0].suts, ElementsAre("lab-1", "lab-2"));
}

TEST_P(StoreBackendTest, NonFiniteValueLeavesNothingOfTheRepeat) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto session = store->begin_session(start_of("base"));
  EXPECT_THROW(store->add_repeat(session, kGetpid, 0,
                                 {sample(kMean, 1.0), sample(kP99, std::numeric_limits<double>::infinity())}),
               RunError);
  EXPECT_THROW(store->add_repeat(session, kGetpid, 0,
                                 {sample(kMean, 1.0), sample(kP99, std::numeric_limits<double>::quiet_NaN())}),
               RunError);
  EXPECT_TRUE(store->samples(SampleQuery{}).empty());
  EXPECT_TRUE(store->stored_repeats(session, kGetpid).empty());
  // The store stays usable after the rollback.
  store->add_repeat(session, kGetpid, 0, {sample(kMean, 1.0), sample(kP99, 2.0)});
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 2u);
}

// SQLite keeps what it cannot read as a number in the REAL column as it came,
// and reading such a value as a double gives 0.0: a measurement of 0 that was
// never made. Every reader refuses it, naming where it is.
TEST_F(StoreTest, AStoredValueThatIsNotANumberIsRefusedNeverReadAsZero) {
  std::int64_t session = 0;
  {
    auto store = open_store(url(), OpenMode::CreateIfMissing);
    session = store->begin_session(start_of("base"));
    store->add_repeat(session, kGetpid, 0, {sample(kMean, 1.0)});
    store->add_repeat(session, kGetpid, 1, {sample(kMean, 2.0)});
  }
  for (const auto& [planted, described] : {std::pair{"'NaN'", "the text 'NaN'"}, std::pair{"X'00FF'", "a blob of 2 bytes"}}) {
    run_sql(file(), std::string("UPDATE result SET value = ") + planted + " WHERE repeat = 1");
    auto store = open_store(url(), OpenMode::MustExist);
    // Copied in: clang before 16 cannot capture a structured binding.
    const auto refused = [&, planted = planted, described = described](const std::function<void()>& read) {
      try {
        read();
        ADD_FAILURE() << planted << " was read";
      } catch (const InputError& error) {
        EXPECT_THAT(error.what(), HasSubstr("syscall/getpid mean (ns) repeat 1: the stored value is " +
                                            std::string(described) + ", not a number"));
      }
    };
    refused([&] { store->samples(SampleQuery{}); });
    refused([&] { store->read_session(session); });
  }
}

TEST_P(StoreBackendTest, FailingInsertMidRepeatRollsBackTheWholeRepeat) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto session = store->begin_session(start_of("base"));
  store->add_repeat(session, kGetpid, 0, {sample(kMean, 1.0)});

  // The same result class twice in one repeat violates the primary key on
  // the third insert; the new class created by the first insert goes too.
  const ResultClass fresh{"p99.9", "ns", Better::Lower};
  try {
    store->add_repeat(session, kGetpid, 1, {sample(fresh, 5.0), sample(kMean, 2.0), sample(kMean, 3.0)});
    FAIL() << "a duplicate result class in one repeat was accepted";
  } catch (const RunError& error) {
    EXPECT_THAT(error.what(), HasSubstr("mean (ns)"));
  }
  EXPECT_THAT(store->stored_repeats(session, kGetpid), ElementsAre(0));
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 1u);
  if (sqlite()) {
    EXPECT_THAT(store->list_benchmarks("*")[0].result_classes, ElementsAre(kMean));
  }

  // A direction that contradicts the stored one is refused mid-repeat.
  const ResultClass flipped{"mean", "ns", Better::Higher};
  EXPECT_THROW(store->add_repeat(session, kGetpid, 1, {sample(kP99, 9.0), sample(flipped, 2.0)}), RunError);
  EXPECT_THAT(store->stored_repeats(session, kGetpid), ElementsAre(0));

  // Storing a repeat that is already stored is refused, the first copy kept.
  EXPECT_THROW(store->add_repeat(session, kGetpid, 0, {sample(kMean, 7.0)}), RunError);
  const auto rows = store->samples(SampleQuery{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].value, 1.0);

  // The class rolled back above can be created afresh (no stale cached id).
  store->add_repeat(session, kGetpid, 1, {sample(fresh, 5.0), sample(kMean, 2.0)});
  EXPECT_THAT(store->stored_repeats(session, kGetpid), ElementsAre(0, 1));
  // PostgreSQL's check reports a repeat with fewer samples than another, as
  // repeat 0 here has.
  if (sqlite()) {
    EXPECT_TRUE(store->integrity_check().empty());
  }
}

TEST_P(StoreBackendTest, LargeRepeatsRoundTripAndRollBackAsOne) {
  // More samples than one batched insert statement takes, plus a remainder.
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto session = store->begin_session(start_of("base"));
  std::vector<records::Sample> many;
  for (int i = 0; i < 101; ++i) {
    many.push_back(sample(ResultClass{"size:" + std::to_string(i) + "KB lat", "ns", Better::Lower}, 0.5 * i));
  }
  store->add_repeat(session, kGetpid, 0, many);
  store->add_repeat(session, kGetpid, 1, many);
  auto rows = store->samples(SampleQuery{});
  ASSERT_EQ(rows.size(), 202u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].result_class, many[i / 2].result_class);  // class, then repeat
    EXPECT_EQ(rows[i].repeat, static_cast<int>(i % 2));
    EXPECT_DOUBLE_EQ(rows[i].value, many[i / 2].value);
  }

  // A duplicate inside the second batch: the first batch, already executed,
  // is rolled back with it.
  auto broken = many;
  broken[40] = broken[35];
  try {
    store->add_repeat(session, kGetpid, 2, broken);
    FAIL() << "a duplicate result class in one repeat was accepted";
  } catch (const RunError& error) {
    EXPECT_THAT(error.what(), HasSubstr(broken[40].result_class.label()));
  }
  EXPECT_THAT(store->stored_repeats(session, kGetpid), ElementsAre(0, 1));
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 202u);
  // The same repeat again in a different class order is still one copy too many.
  std::reverse(many.begin(), many.end());
  EXPECT_THROW(store->add_repeat(session, kGetpid, 1, many), RunError);
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 202u);
  store->add_repeat(session, kGetpid, 2, many);
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 303u);
}

TEST_P(StoreBackendTest, UnknownSessionIsRefused) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  EXPECT_THROW(store->add_repeat(4242, kGetpid, 0, {sample(kMean, 1.0)}), RunError);
  EXPECT_THROW(store->record_outcome(4242, kGetpid, Outcome{}), RunError);
  if (sqlite()) {
    EXPECT_TRUE(store->list_benchmarks("*").empty());
  }
  EXPECT_TRUE(store->samples(SampleQuery{}).empty());
}

TEST_P(StoreBackendTest, GlobsFilterSutBenchmarkAndResultClassLabel) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto session = store->begin_session(start_of("base"));
  store->add_repeat(session, kGetpid, 0, {sample(kMean, 1.0), sample(kP99, 2.0)});
  store->add_repeat(session, kPerfSyscall, 0, {sample(kBasic, 3.0)});

  SampleQuery query;
  query.benchmark_glob = "syscall/*";
  EXPECT_EQ(store->samples(query).size(), 2u);
  query.resultclass_glob = "p99*";
  auto rows = store->samples(query);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].result_class, kP99);
  query.resultclass_glob = "mean (ns)";
  EXPECT_EQ(store->samples(query).size(), 1u);
  query.resultclass_glob = "mean";  // the label includes the unit
  EXPECT_TRUE(store->samples(query).empty());

  SampleQuery by_unit;
  by_unit.resultclass_glob = "*(ops/sec)";
  rows = store->samples(by_unit);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].benchmark, "perf/syscall");

  SampleQuery by_sut;
  by_sut.sut_glob = "lab-?";
  EXPECT_EQ(store->samples(by_sut).size(), 3u);
  by_sut.sut_glob = "other*";
  EXPECT_TRUE(store->samples(by_sut).empty());

  SampleQuery unknown_profile;
  unknown_profile.swprofiles = {"patched"};
  EXPECT_TRUE(store->samples(unknown_profile).empty());

  EXPECT_EQ(store->list_benchmarks("perf/*").size(), 1u);
  EXPECT_EQ(store->list_suts("lab*").size(), 1u);
  EXPECT_TRUE(store->list_suts("LAB*").empty());  // GLOB is case-sensitive
  EXPECT_EQ(store->list_swprofiles("b*").size(), 1u);
  EXPECT_TRUE(store->list_swprofiles("p*").empty());
}

TEST_P(StoreBackendTest, OutcomesAreRecordedReplacedAndListed) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto base = store->begin_session(start_of("base"));
  const auto patched = store->begin_session(start_of("patched"));
  store->record_outcome(base, kGetpid, Outcome{OutcomeStatus::Ok, "", ""});
  store->record_outcome(base, kPerfSyscall, Outcome{OutcomeStatus::Skipped, "needs root", ""});
  store->record_outcome(patched, kPerfSyscall, Outcome{OutcomeStatus::Failed, "timeout", "line 1"});
  // A rerun of the same benchmark in the same session replaces its outcome.
  store->record_outcome(patched, kPerfSyscall, Outcome{OutcomeStatus::Failed, "exit status 3", "tail"});

  const auto failed = store->list_outcomes({}, OutcomeStatus::Failed);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].swprofile, "patched");
  EXPECT_EQ(failed[0].benchmark, "perf/syscall");
  EXPECT_EQ(failed[0].session, patched);
  EXPECT_EQ(failed[0].outcome.reason, "exit status 3");
  EXPECT_EQ(failed[0].outcome.stderr_tail, "tail");

  EXPECT_EQ(store->list_outcomes({"base"}, OutcomeStatus::Skipped).size(), 1u);
  EXPECT_TRUE(store->list_outcomes({"patched"}, OutcomeStatus::Skipped).empty());
  EXPECT_EQ(store->list_outcomes({"base", "patched"}, OutcomeStatus::Ok).size(), 1u);

  const auto outcome = store->outcome_of(base, kPerfSyscall);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->status, OutcomeStatus::Skipped);
  EXPECT_EQ(outcome->reason, "needs root");
  EXPECT_FALSE(store->outcome_of(patched, kGetpid).has_value());
  // Parameters are part of the benchmark's identity.
  EXPECT_FALSE(store->outcome_of(base, BenchmarkKey{"syscall/getpid", {}}).has_value());
}

TEST_P(StoreBackendTest, DiscardBenchmarkRemovesItsSamplesAndOutcomeInOneSession) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto first = store->begin_session(start_of("base"));
  const auto second = store->begin_session(start_of("base"));
  for (int repeat = 0; repeat < 3; ++repeat) {
    store->add_repeat(first, kGetpid, repeat, {sample(kMean, repeat)});
    store->add_repeat(second, kGetpid, repeat, {sample(kMean, repeat)});
  }
  store->add_repeat(first, kPerfSyscall, 0, {sample(kBasic, 1.0)});
  store->record_outcome(first, kGetpid, Outcome{});
  EXPECT_THAT(store->stored_repeats(first, kGetpid), ElementsAre(0, 1, 2));

  store->discard_benchmark(first, kGetpid);
  EXPECT_TRUE(store->stored_repeats(first, kGetpid).empty());
  EXPECT_FALSE(store->outcome_of(first, kGetpid).has_value());
  EXPECT_THAT(store->stored_repeats(second, kGetpid), ElementsAre(0, 1, 2));
  EXPECT_THAT(store->stored_repeats(first, kPerfSyscall), ElementsAre(0));
  // The discarded repeats can be stored again.
  store->add_repeat(first, kGetpid, 0, {sample(kMean, 9.0)});
  EXPECT_THAT(store->stored_repeats(first, kGetpid), ElementsAre(0));
}

TEST_P(StoreBackendTest, ExportStreamsEveryColumn) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto session = store->begin_session(start_of("base"));
  store->add_repeat(session, kPerfSyscall, 3, {sample(kBasic, 42.5)});
  std::vector<SampleRow> exported;
  store->for_each_sample(SampleQuery{}, [&](const SampleRow& row) { exported.push_back(row); });
  ASSERT_EQ(exported.size(), 1u);
  EXPECT_EQ(exported[0].sut, "lab-1");
  EXPECT_EQ(exported[0].swprofile, "base");
  EXPECT_EQ(exported[0].session, session);
  EXPECT_EQ(exported[0].benchmark, "perf/syscall");
  EXPECT_EQ(exported[0].result_class.unit, "ops/sec");
  EXPECT_EQ(exported[0].result_class.better, Better::Higher);
  EXPECT_EQ(exported[0].repeat, 3);
  EXPECT_DOUBLE_EQ(exported[0].value, 42.5);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreBackendTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

TEST_F(StoreTest, MissingStoreWithMustExistIsInputErrorAndCreatesNothing) {
  try {
    open_store(url(), OpenMode::MustExist);
    FAIL() << "a missing store was opened";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr(file().string()));
    EXPECT_THAT(error.what(), HasSubstr("does not exist"));
  }
  EXPECT_FALSE(fs::exists(file().parent_path()));
}

TEST_F(StoreTest, EmptyFileIsInitialisedOnlyWhenCreating) {
  fs::create_directories(file().parent_path());
  std::ofstream(file()).close();
  EXPECT_THROW(open_store(url(), OpenMode::MustExist), InputError);
  EXPECT_EQ(fs::file_size(file()), 0u);
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  EXPECT_NO_THROW(store->begin_session(start_of("base")));
}

TEST_F(StoreTest, TextFileIsNotAStoreAndStaysUntouched) {
  const fs::path text = dir.path() / "notes.txt";
  std::ofstream(text) << "these are my notes, not a database\n";
  const std::string before = read_file(text);
  const auto entries_before = directory_entries(dir.path());
  for (const auto mode : {OpenMode::MustExist, OpenMode::CreateIfMissing}) {
    try {
      open_store("sqlite://" + text.string(), mode);
      FAIL() << "a text file was opened as a store";
    } catch (const InputError& error) {
      EXPECT_THAT(error.what(), HasSubstr(text.string()));
      EXPECT_THAT(error.what(), HasSubstr("is not a kbench store"));
    }
  }
  EXPECT_EQ(read_file(text), before);
  EXPECT_EQ(directory_entries(dir.path()), entries_before);
}

TEST_F(StoreTest, ForeignSqliteDatabaseIsNotAStoreAndStaysUntouched) {
  const fs::path other = dir.path() / "other.db";
  run_sql(other, "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos(name) VALUES('cat');");
  const std::string before = read_file(other);
  const auto entries_before = directory_entries(dir.path());
  for (const auto mode : {OpenMode::MustExist, OpenMode::CreateIfMissing}) {
    try {
      open_store(other.string(), mode);  // a plain path is an SQLite file too
      FAIL() << "a foreign SQLite database was opened as a store";
    } catch (const InputError& error) {
      EXPECT_THAT(error.what(), HasSubstr(other.string()));
      EXPECT_THAT(error.what(), HasSubstr("is not a kbench store"));
    }
  }
  EXPECT_EQ(read_file(other), before);
  EXPECT_EQ(directory_entries(dir.path()), entries_before);
}

TEST_F(StoreTest, NewerSchemaVersionIsRefusedAndStaysUntouched) {
  {
    auto store = open_store(url(), OpenMode::CreateIfMissing);
    store->begin_session(start_of("base"));
  }
  const std::string newer = std::to_string(kSchemaVersion + 1);
  run_sql(file(), "UPDATE kbench_meta SET value = '" + newer + "' WHERE key = 'schema_version'");
  // Fold the WAL into the file so that the bytes compared are the whole store.
  run_sql(file(), "PRAGMA wal_checkpoint(TRUNCATE)");
  const std::string before = read_file(file());
  for (const auto mode : {OpenMode::MustExist, OpenMode::CreateIfMissing}) {
    try {
      open_store(url(), mode);
      FAIL() << "a store of a newer schema version was opened";
    } catch (const InputError& error) {
      EXPECT_THAT(error.what(), HasSubstr("schema version " + newer));
      EXPECT_THAT(error.what(), HasSubstr("schema version " + std::to_string(kSchemaVersion)));
    }
  }
  EXPECT_EQ(read_file(file()), before);
}

TEST_F(StoreTest, StoreReopensAfterKilledWriterLeftItsWal) {
  // A kill -9 skips the close that folds the WAL back: model it by copying
  // the files while the writer is still open.
  const fs::path copy_dir = dir.path() / "copy";
  fs::create_directories(copy_dir);
  {
    auto store = open_store(url(), OpenMode::CreateIfMissing);
    const auto session = store->begin_session(start_of("base"));
    store->add_repeat(session, kGetpid, 0, {sample(kMean, 1.0)});
    for (const auto& entry : fs::directory_iterator(file().parent_path())) {
      fs::copy_file(entry.path(), copy_dir / entry.path().filename());
    }
  }
  auto store = open_store((copy_dir / "results.db").string(), OpenMode::MustExist);
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 1u);
  EXPECT_TRUE(store->integrity_check().empty());
}

TEST(StoreUrl, SchemesAndPaths) {
  EXPECT_EQ(parse_store_url("sqlite:///var/lib/kbench/r.db").path, "/var/lib/kbench/r.db");
  EXPECT_EQ(parse_store_url("sqlite://results/r.db").path, "results/r.db");
  EXPECT_EQ(parse_store_url("/tmp/r.db").scheme, "sqlite");
  EXPECT_EQ(parse_store_url("/tmp/r.db").path, "/tmp/r.db");
  EXPECT_EQ(parse_store_url("r.db").path, "r.db");
  EXPECT_THROW(parse_store_url(""), InputError);
  EXPECT_THROW(parse_store_url("sqlite://"), InputError);
  try {
    parse_store_url("mysql://db.example/kbench");
    FAIL() << "an unknown scheme was accepted";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("mysql://db.example/kbench"));
    EXPECT_THAT(error.what(), HasSubstr("sqlite://"));
  }
  try {
    open_store("csv:///tmp/kbench-results", OpenMode::MustExist);
    FAIL() << "csv was accepted";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("has unknown scheme 'csv://'"));
  }
}

TEST(DefaultStoreUrl, KbenchStoreThenXdgDataHomeThenHome) {
  ScopedEnv home("HOME", "/home/tester");
  {
    ScopedEnv store("KBENCH_STORE", "sqlite:///srv/kbench.db");
    ScopedEnv xdg("XDG_DATA_HOME", "/data");
    EXPECT_EQ(default_store_url(), "sqlite:///srv/kbench.db");
  }
  {
    ScopedEnv store("KBENCH_STORE", "");
    ScopedEnv xdg("XDG_DATA_HOME", "/data");
    EXPECT_EQ(default_store_url(), "sqlite:///data/kbench/results.db");
  }
  {
    ScopedEnv store("KBENCH_STORE", nullptr);
    ScopedEnv xdg("XDG_DATA_HOME", nullptr);
    EXPECT_EQ(default_store_url(), "sqlite:///home/tester/.local/share/kbench/results.db");
  }
  {
    ScopedEnv store("KBENCH_STORE", nullptr);
    ScopedEnv xdg("XDG_DATA_HOME", "relative/dir");  // invalid per the XDG spec
    EXPECT_EQ(default_store_url(), "sqlite:///home/tester/.local/share/kbench/results.db");
  }
  {
    ScopedEnv store("KBENCH_STORE", nullptr);
    ScopedEnv xdg("XDG_DATA_HOME", "");
    EXPECT_EQ(parse_store_url(default_store_url()).path, "/home/tester/.local/share/kbench/results.db");
  }
}

TEST(OutcomeStatusWords, RoundTrip) {
  for (const auto status : {OutcomeStatus::Ok, OutcomeStatus::Skipped, OutcomeStatus::Failed}) {
    EXPECT_EQ(parse_outcome_status(to_string(status)), status);
  }
  EXPECT_FALSE(parse_outcome_status("error").has_value());
}

}  // namespace
}  // namespace kbench::store
