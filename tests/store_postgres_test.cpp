// The PostgreSQL resultstore against a real server (scripts/pg-test-server.sh;
// make test starts one): the store contract, run on both backends so they
// cannot drift apart, then what only PostgreSQL has: password and connection
// refusals, schema creation by concurrent first writers, and four controller
// processes writing into one database, one of them killed mid-repeat.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "common/errors.h"
#include "store/result_store.h"
#include "support/postgres_test_db.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

namespace kbench::store {
namespace {

using kbench::testing::PostgresTestDatabase;
using kbench::testing::query_postgres;
using kbench::testing::run_postgres;
using kbench::testing::ScopedEnv;
using kbench::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const ResultClass kMean{"mean", "ns", Better::Lower};
const ResultClass kP99{"p99", "ns", Better::Lower};
const ResultClass kBasic{"basic", "ops/sec", Better::Higher};
const BenchmarkKey kGetpid{"syscall/getpid", {{"calls", "1000000"}}};
const BenchmarkKey kPerfSyscall{"perf/syscall", {}};

records::Sample sample(const ResultClass& rc, double value) { return records::Sample{"", rc, 0, value}; }

SessionStart start_of(const std::string& sut_name, const std::string& swprofile) {
  SessionStart start;
  start.sut.name = sut_name;
  start.sut.hostname = sut_name + ".example";
  start.sut.arch = "x86_64";
  start.sut.cpu_model = "Test CPU";
  start.sut.cpu_count = 2;
  start.sut.memory_gib = 8;
  start.swprofile = swprofile;
  start.fingerprint = {{"kernel_release", "6.1.0-" + swprofile}, {"hostname", start.sut.hostname}};
  start.started_at = "2026-12-01T12:00:00Z";
  return start;
}

// --- the contract, on both backends -------------------------------------------

class StoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  std::string url() {
    if (GetParam() == "sqlite") return "sqlite://" + (dir_.path() / "results.db").string();
    if (!database_) database_ = std::make_unique<PostgresTestDatabase>();
    if (!database_->ok()) throw std::runtime_error("no PostgreSQL test database");
    return database_->url();
  }

 private:
  TempDir dir_;
  std::unique_ptr<PostgresTestDatabase> database_;
};

TEST_P(StoreContract, RoundTripsSamplesExactlyWithSessionNumbersPerSutAndSwprofile) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto a1 = store->begin_session(start_of("lab-1", "base"));
  const auto a2 = store->begin_session(start_of("lab-1", "base"));
  const auto b1 = store->begin_session(start_of("lab-2", "base"));
  const auto c1 = store->begin_session(start_of("lab-1", "changed"));
  store->add_repeat(a1, kGetpid, 0, {sample(kMean, 0.1), sample(kP99, 1e-300)});
  store->add_repeat(a1, kGetpid, 1, {sample(kMean, 123456789.123456789), sample(kP99, 2.5)});
  store->add_repeat(a2, kGetpid, 0, {sample(kMean, 3.0), sample(kP99, 4.0)});
  store->add_repeat(b1, kPerfSyscall, 0, {sample(kBasic, 7.0)});
  store->add_repeat(c1, kGetpid, 0, {sample(kMean, 5.0), sample(kP99, 6.0)});

  const auto sessions = store->list_sessions({});
  ASSERT_EQ(sessions.size(), 4u);
  EXPECT_EQ(sessions[0].number(), 1);
  EXPECT_EQ(sessions[1].number(), 2);
  EXPECT_EQ(sessions[2].number(), 1);  // another SUT counts its own
  EXPECT_EQ(sessions[3].number(), 1);  // another swprofile too
  EXPECT_EQ(sessions[0].kernel_release, "6.1.0-base");
  EXPECT_EQ(sessions[0].samples, 4);

  const auto rows = store->samples(SampleQuery{{"base"}});
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0].sut, "lab-1");
  EXPECT_EQ(rows[0].benchmark, "syscall/getpid");
  EXPECT_EQ(rows[0].params, (Params{{"calls", "1000000"}}));
  EXPECT_EQ(rows[0].result_class.label(), "mean (ns)");
  EXPECT_EQ(rows[0].value, 0.1);  // bit for bit
  EXPECT_EQ(rows[1].value, 123456789.123456789);
  EXPECT_EQ(rows[1].repeat, 1);
  EXPECT_EQ(rows[3].value, 2.5);
  EXPECT_EQ(rows[2].value, 1e-300);
  EXPECT_EQ(rows[6].result_class.better, Better::Higher);

  const auto suts = store->list_suts("*");
  ASSERT_EQ(suts.size(), 2u);
  EXPECT_EQ(suts[0].sut.hostname, "lab-1.example");
  EXPECT_EQ(suts[0].sessions, 3);
  const auto profiles = store->list_swprofiles("*");
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles[0].name, "base");
  EXPECT_THAT(profiles[0].suts, ElementsAre("lab-1", "lab-2"));
  EXPECT_EQ(profiles[0].sessions, 3);
  EXPECT_EQ(profiles[0].samples, 7);
  const auto benchmarks = store->list_benchmarks("*");
  ASSERT_EQ(benchmarks.size(), 2u);
  EXPECT_EQ(benchmarks[0].name, "perf/syscall");
  EXPECT_EQ(benchmarks[1].samples, 8);
  EXPECT_TRUE(store->has_swprofile("changed"));
  EXPECT_FALSE(store->has_swprofile("Changed"));
}

TEST_P(StoreContract, GlobsAreCaseSensitiveWithStarQuestionMarkAndSets) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto s1 = store->begin_session(start_of("lab-1", "base"));
  const auto s2 = store->begin_session(start_of("Lab.2", "base"));
  store->add_repeat(s1, kGetpid, 0, {sample(kMean, 1), sample(kP99, 2)});
  store->add_repeat(s2, kPerfSyscall, 0, {sample(kBasic, 3)});
  auto count = [&](SampleQuery query) { return store->samples(query).size(); };
  SampleQuery q;
  q.sut_glob = "lab-?";
  EXPECT_EQ(count(q), 2u);
  q.sut_glob = "[lL]ab?[12]";
  EXPECT_EQ(count(q), 3u);
  q.sut_glob = "[^l]*";
  EXPECT_EQ(count(q), 1u);
  q.sut_glob = "Lab.*";  // '.' is literal
  EXPECT_EQ(count(q), 1u);
  q.sut_glob = "LAB*";
  EXPECT_EQ(count(q), 0u);
  q.sut_glob = "lab[";  // an unclosed set matches nothing, as SQLite's GLOB
  EXPECT_EQ(count(q), 0u);
  q = SampleQuery{};
  q.benchmark_glob = "syscall/*";
  q.resultclass_glob = "p99 (*)";
  const auto rows = store->samples(q);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].value, 2);
  EXPECT_EQ(store->list_suts("l*").size(), 1u);
  EXPECT_EQ(store->list_benchmarks("perf/*").size(), 1u);
  EXPECT_EQ(store->list_swprofiles("b?se").size(), 1u);
}

TEST_P(StoreContract, RefusedRepeatsLeaveNothingAndMismatchedDirectionIsRefused) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto s = store->begin_session(start_of("lab-1", "base"));
  store->add_repeat(s, kGetpid, 0, {sample(kMean, 1), sample(kP99, 2)});
  try {
    store->add_repeat(s, kGetpid, 0, {sample(kMean, 1), sample(kP99, 2)});
    ADD_FAILURE() << "a repeat stored twice was accepted";
  } catch (const RunError& error) {
    EXPECT_THAT(error.what(), HasSubstr("already stored"));
  }
  EXPECT_THROW(store->add_repeat(s, kGetpid, 1, {sample(kMean, 1), sample(kMean, 2)}), RunError);
  EXPECT_THROW(store->add_repeat(s, kGetpid, 2, {sample(kMean, 1), sample(kP99, std::nan(""))}), RunError);
  EXPECT_THROW(store->add_repeat(s, kGetpid, 3, {sample(ResultClass{"mean", "ns", Better::Higher}, 1)}), RunError);
  EXPECT_THROW(store->add_repeat(s + 1000, kGetpid, 0, {sample(kMean, 1)}), RunError);
  EXPECT_THROW(store->record_outcome(s + 1000, kGetpid, Outcome{}), RunError);
  EXPECT_THROW(store->finish_session(s + 1000), RunError);
  EXPECT_THROW(store->delete_session(s + 1000), RunError);
  EXPECT_THAT(store->stored_repeats(s, kGetpid), ElementsAre(0));
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 2u);
}

TEST_P(StoreContract, OutcomesGapsFinishingAndDeleting) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  auto start = start_of("lab-1", "base");
  start.planned = {kGetpid, kPerfSyscall};
  start.fingerprint["plan"] = {{"key", "k1"}, {"run", "r1"}, {"session", 0}};
  const auto s = store->begin_session(start);
  store->add_repeat(s, kGetpid, 0, {sample(kMean, 1)});
  store->add_repeat(s, kPerfSyscall, 0, {sample(kBasic, 2)});
  store->record_outcome(s, kGetpid, Outcome{OutcomeStatus::Failed, "crashed", "tail"});
  store->record_outcome(s, kGetpid, Outcome{OutcomeStatus::Ok, "", ""});  // replaces
  auto listing = store->session(s);
  ASSERT_TRUE(listing);
  EXPECT_FALSE(listing->finished);
  ASSERT_EQ(listing->gaps.size(), 1u);
  EXPECT_EQ(listing->gaps[0].benchmark, "perf/syscall");
  EXPECT_EQ(listing->gaps[0].repeats_stored, 1);
  EXPECT_EQ(store->outcome_of(s, kGetpid)->status, OutcomeStatus::Ok);
  EXPECT_TRUE(store->list_outcomes({}, OutcomeStatus::Failed).empty());
  EXPECT_EQ(store->list_outcomes({"base"}, OutcomeStatus::Ok).size(), 1u);

  SampleQuery settled;
  settled.settled_only = true;
  EXPECT_EQ(store->samples(settled).size(), 1u);  // perf/syscall has no outcome

  store->discard_outcome(s, kGetpid);
  EXPECT_FALSE(store->outcome_of(s, kGetpid));
  EXPECT_THAT(store->stored_repeats(s, kGetpid), ElementsAre(0));
  store->record_outcome(s, kPerfSyscall, Outcome{OutcomeStatus::Skipped, "no perf", ""});
  store->discard_benchmark(s, kPerfSyscall);
  EXPECT_TRUE(store->stored_repeats(s, kPerfSyscall).empty());
  EXPECT_FALSE(store->outcome_of(s, kPerfSyscall));

  store->record_outcome(s, kGetpid, Outcome{});
  store->record_outcome(s, kPerfSyscall, Outcome{});
  store->finish_session(s, {{"loadavg_end", 0.5}});
  listing = store->session(s);
  EXPECT_TRUE(listing->complete());
  EXPECT_EQ(listing->fingerprint["loadavg_end"], 0.5);
  EXPECT_EQ(listing->fingerprint["kernel_release"], "6.1.0-base");
  const auto benchmarks = store->session_benchmarks(s);
  ASSERT_EQ(benchmarks.size(), 2u);
  EXPECT_EQ(benchmarks[0].benchmark, "syscall/getpid");
  EXPECT_EQ(benchmarks[0].samples, 1);

  const auto plan = store->latest_plan("k1", {});
  ASSERT_TRUE(plan);
  EXPECT_EQ((*plan)["run"], "r1");
  EXPECT_EQ(store->find_plan_session("base", "k1", "r1", 0), s);
  EXPECT_FALSE(store->find_plan_session("base", "k1", "r1", 1));
  EXPECT_FALSE(store->latest_plan("k2", {}));

  BootRecord boot;
  boot.sut = "lab-1";
  boot.swprofile = "base";
  boot.plan_key = "k1";
  boot.run = "r1";
  boot.method = "kexec";
  boot.seconds = 12.5;
  boot.ok = true;
  boot.session = s;
  store->record_boot(boot);
  boot.ok = false;
  boot.session.reset();
  boot.reason = "timeout";
  store->record_boot(boot);
  const auto boots = store->list_boots("k1", "");
  ASSERT_EQ(boots.size(), 2u);
  EXPECT_EQ(boots[0].session, s);
  EXPECT_EQ(boots[0].seconds, 12.5);
  EXPECT_FALSE(boots[1].session);
  EXPECT_EQ(boots[1].reason, "timeout");

  store->delete_session(s);
  EXPECT_FALSE(store->session(s));
  EXPECT_TRUE(store->samples(SampleQuery{}).empty());
  EXPECT_FALSE(store->list_boots("k1", "")[0].session);  // the boot stays, without its session
  EXPECT_TRUE(store->integrity_check().empty());
}

TEST_P(StoreContract, ReadOnlyStoreRefusesWritesAndMissingStoreIsBadInput) {
  const std::string location = url();
  EXPECT_THROW(open_store(location, OpenMode::MustExist), InputError);
  EXPECT_THROW(open_store(location, OpenMode::ReadOnly), InputError);
  {
    auto store = open_store(location, OpenMode::CreateIfMissing);
    store->begin_session(start_of("lab-1", "base"));
  }
  auto reader = open_store(location, OpenMode::ReadOnly);
  EXPECT_EQ(reader->list_sessions({}).size(), 1u);
  EXPECT_THROW(reader->begin_session(start_of("lab-1", "base")), RunError);
}

TEST_P(StoreContract, LogsKeepTheirTextExactlyOldestFirstByKind) {
  const std::string location = url();
  // Text as a bisect writes it: several lines, a quote, non-ASCII, a tab.
  const std::string bisect_log = "step 1: 1a2b3c4d good (p=0.001)\n\tbuilt in 41 s, 'cached'\n\u00b5s: \u00e9\n";
  {
    auto store = open_store(location, OpenMode::CreateIfMissing);
    EXPECT_TRUE(store->logs("").empty());
    const auto first = store->add_log("bisect", "v6.1..v6.2", bisect_log);
    const auto second = store->add_log("build", "gcc", "one line");
    const auto third = store->add_log("bisect", "a..b", "");
    EXPECT_LT(first, second);
    EXPECT_LT(second, third);
  }
  auto reader = open_store(location, OpenMode::ReadOnly);
  const auto bisects = reader->logs("bisect");
  ASSERT_EQ(bisects.size(), 2u);
  EXPECT_EQ(bisects[0].kind, "bisect");
  EXPECT_EQ(bisects[0].name, "v6.1..v6.2");
  EXPECT_EQ(bisects[0].text, bisect_log);
  EXPECT_THAT(bisects[0].created_utc, ::testing::MatchesRegex("20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z"));
  EXPECT_EQ(bisects[1].name, "a..b");
  EXPECT_EQ(bisects[1].text, "");
  const auto every = reader->logs("");
  ASSERT_EQ(every.size(), 3u);
  EXPECT_EQ(every[1].kind, "build");
  EXPECT_EQ(every[1].id, bisects[0].id + 1);
  EXPECT_TRUE(reader->logs("Bisect").empty()) << "kinds are matched exactly";
  EXPECT_THROW(reader->add_log("bisect", "x", "y"), RunError) << "a read-only store is never written";
  EXPECT_EQ(reader->logs("").size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreContract, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

// --- PostgreSQL only ------------------------------------------------------------

TEST(PostgresStoreUrl, PasswordInTheUrlIsRefusedWithoutEchoingIt) {
  for (const std::string url : {"postgresql://kbench:s3cret-pw@db.example:5432/results",
                                "postgres://kbench@db.example/results?sslmode=require&password=s3cret-pw",
                                "postgresql://kbench:s3cret/pw@db.example/results"}) {
    try {
      parse_store_url(url);
      ADD_FAILURE() << "accepted a password in the URL";
    } catch (const InputError& error) {
      EXPECT_THAT(error.what(), Not(HasSubstr("s3cret"))) << error.what();
      EXPECT_THAT(error.what(), HasSubstr("***"));
      EXPECT_THAT(error.what(), HasSubstr("PGPASSWORD"));
    }
  }
  const auto parsed = parse_store_url("postgresql://kbench@db.example:5432/results?sslmode=require");
  EXPECT_EQ(parsed.scheme, "postgresql");
  EXPECT_EQ(parse_store_url("postgres://db.example/results").scheme, "postgresql");
}

TEST(PostgresStore, UnreachableServerIsAFailureNamingTheUrlAndTheReason) {
  // Port 1 on loopback: nothing listens there, so the refusal is immediate.
  // Not bad input: the same URL works once the server is up.
  try {
    open_store("postgresql://kbench@127.0.0.1:1/results", OpenMode::CreateIfMissing);
    ADD_FAILURE() << "connected to nothing";
  } catch (const RunError& error) {
    EXPECT_THAT(error.what(), HasSubstr("postgresql://kbench@127.0.0.1:1/results"));
    EXPECT_THAT(error.what(), HasSubstr("cannot connect"));
    EXPECT_THAT(error.what(), HasSubstr("refused"));
    EXPECT_THAT(std::string(error.what()), Not(HasSubstr("\n")));
  }
}

TEST(PostgresStore, MissingDatabaseIsBadInputNamingIt) {
  // The server answers and refuses the URL: what it names is wrong.
  const std::string server = kbench::testing::postgres_server_url();
  ASSERT_FALSE(server.empty());
  const std::string url = kbench::testing::with_database(server, "kbench_test_no_such_database");
  try {
    open_store(url, OpenMode::CreateIfMissing);
    ADD_FAILURE() << "connected to a database that does not exist";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot connect"));
    EXPECT_THAT(error.what(), HasSubstr("kbench_test_no_such_database"));
  }
}

TEST(PostgresStore, NewerSchemaVersionIsRefusedAndLeftAlone) {
  PostgresTestDatabase database;
  ASSERT_TRUE(database.ok());
  open_store(database.url(), OpenMode::CreateIfMissing)->begin_session(start_of("lab-1", "base"));
  ASSERT_EQ(run_postgres(database.url(), "UPDATE kbench_meta SET value = '99' WHERE key = 'schema_version'"), "");
  for (const auto mode : {OpenMode::CreateIfMissing, OpenMode::ReadOnly}) {
    try {
      open_store(database.url(), mode);
      ADD_FAILURE() << "opened a version-99 store";
    } catch (const InputError& error) {
      EXPECT_THAT(error.what(), HasSubstr("schema version 99"));
    }
  }
  EXPECT_EQ(query_postgres(database.url(), "SELECT value FROM kbench_meta WHERE key = 'schema_version'"), "99");
  EXPECT_EQ(query_postgres(database.url(), "SELECT count(*) FROM session"), "1");
}

TEST(PostgresStore, WrongPasswordFileIsBadInputWithoutTheServerPassword) {
  PostgresTestDatabase database;
  ASSERT_TRUE(database.ok());
  TempDir dir;
  const auto pgpass = dir.path() / "pgpass";
  {
    std::ofstream out(pgpass);
    out << "*:*:*:*:wrong-password\n";
  }
  std::filesystem::permissions(pgpass, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ScopedEnv pgpassfile("PGPASSFILE", pgpass.c_str());
  try {
    open_store(database.url(), OpenMode::CreateIfMissing);
    ADD_FAILURE() << "connected with a wrong password";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("password authentication failed"));
    EXPECT_THAT(error.what(), Not(HasSubstr("wrong-password")));
  }
}

TEST(PostgresStore, FirstWritersCreatingTheSchemaAtOnceAllSucceed) {
  PostgresTestDatabase database;
  ASSERT_TRUE(database.ok());
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back([&, i] {
      try {
        open_store(database.url(), OpenMode::CreateIfMissing)->begin_session(start_of("lab-" + std::to_string(i), "base"));
      } catch (const std::exception& error) {
        ++failures;
        ADD_FAILURE() << error.what();
      }
    });
  }
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(query_postgres(database.url(), "SELECT value FROM kbench_meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(query_postgres(database.url(), "SELECT count(*) FROM session"), "4");
}

// --- schema version 4: session identity across stores ------------------------------

TEST(PostgresStoreV4, SessionsReadWholeImportElsewhereWithTheirUidAndIndex) {
  PostgresTestDatabase source_db, target_db;
  ASSERT_TRUE(source_db.ok() && target_db.ok());
  auto source = open_store(source_db.url(), OpenMode::CreateIfMissing);
  auto start = start_of("lab-1", "base");
  start.fingerprint["sut_class"] = "aws-m7g";
  start.planned = {kGetpid};
  source->begin_session(start_of("lab-1", "base"));
  const auto s = source->begin_session(start);
  source->add_repeat(s, kGetpid, 0, {sample(kMean, 0.1), sample(kP99, 2)});
  source->add_repeat(s, kGetpid, 1, {sample(kMean, 0.3), sample(kP99, 4)});
  source->record_outcome(s, kGetpid, Outcome{OutcomeStatus::Ok, "", ""});
  source->finish_session(s);

  const auto content = source->read_session(s);
  EXPECT_EQ(content.uid.size(), 32u);
  EXPECT_EQ(source->find_session_by_uid(content.uid), s);
  EXPECT_FALSE(source->find_session_by_uid("0123"));
  EXPECT_EQ(content.session_index, 1);
  EXPECT_TRUE(content.finished_at);
  ASSERT_TRUE(content.planned);
  EXPECT_EQ(content.planned->size(), 1u);
  ASSERT_EQ(content.results.size(), 4u);
  EXPECT_EQ(content.results[0].result_class.name, "mean");
  EXPECT_EQ(content.results[0].value, 0.1);
  EXPECT_EQ(content.results[1].repeat, 1);
  ASSERT_EQ(content.outcomes.size(), 1u);
  EXPECT_EQ(source->session(s)->sut_class, "aws-m7g");
  SampleQuery by_class;
  by_class.class_glob = "aws-*";
  const auto rows = source->samples(by_class);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].sut_class, "aws-m7g");

  auto target = open_store(target_db.url(), OpenMode::CreateIfMissing);
  const auto imported = target->import_session(content);  // index 1 is free there: kept
  auto again = target->read_session(imported);
  EXPECT_EQ(again.uid, content.uid);
  EXPECT_EQ(again.session_index, 1);
  EXPECT_EQ(again.started_at, content.started_at);
  EXPECT_EQ(again.finished_at, content.finished_at);
  ASSERT_EQ(again.results.size(), content.results.size());
  for (std::size_t i = 0; i < again.results.size(); ++i) {
    EXPECT_EQ(again.results[i].value, content.results[i].value);
    EXPECT_EQ(again.results[i].recorded_at, content.results[i].recorded_at);
  }
  EXPECT_EQ(again.outcomes[0].recorded_at, content.outcomes[0].recorded_at);
  EXPECT_TRUE(target->session(imported)->complete());

  auto second = content;  // a taken index: the next free one
  second.uid = "00000000000000000000000000000002";
  EXPECT_EQ(target->read_session(target->import_session(second)).session_index, 2);
  auto conflicting = content;
  conflicting.uid = "00000000000000000000000000000003";
  conflicting.results[0].result_class.better = Better::Higher;
  try {
    target->import_session(conflicting);
    ADD_FAILURE() << "imported a class with the other direction";
  } catch (const RunError& error) {
    EXPECT_THAT(error.what(), HasSubstr("mean (ns)"));
  }
  EXPECT_EQ(target->list_sessions({}).size(), 2u);  // nothing of the refused one
  EXPECT_FALSE(target->find_session_by_uid(conflicting.uid));
}

TEST(PostgresStoreV4, VersionThreeStoreIsMigratedWithUidsAndClasses) {
  PostgresTestDatabase database;
  ASSERT_TRUE(database.ok());
  auto start = start_of("lab-1", "base");
  start.fingerprint["sut_class"] = "ampere-one";
  open_store(database.url(), OpenMode::CreateIfMissing)->begin_session(start);
  // Back to version 3: without the columns version 4 added (and the tables of versions 5 and 6).
  ASSERT_EQ(run_postgres(database.url(), "DROP TABLE kernel_profile_function; DROP TABLE kernel_profile; DROP TABLE log; DROP INDEX session_by_uid; ALTER TABLE session DROP COLUMN uid, "
                                         "DROP COLUMN sut_class; UPDATE kbench_meta SET value = '3' "
                                         "WHERE key = 'schema_version'"),
            "");
  EXPECT_THROW(open_store(database.url(), OpenMode::ReadOnly), InputError);
  auto store = open_store(database.url(), OpenMode::CreateIfMissing);
  const auto sessions = store->list_sessions({});
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].uid.size(), 32u);
  EXPECT_EQ(sessions[0].sut_class, "ampere-one");
  EXPECT_EQ(query_postgres(database.url(), "SELECT value FROM kbench_meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
}

// --- schema version 5: stored logs ---------------------------------------------------

TEST(PostgresStoreV5, VersionFourStoreIsMigratedKeepingItsSessionsAndGetsLogs) {
  PostgresTestDatabase database;
  ASSERT_TRUE(database.ok());
  {
    auto store = open_store(database.url(), OpenMode::CreateIfMissing);
    const auto s = store->begin_session(start_of("lab-1", "base"));
    store->add_repeat(s, kGetpid, 0, {sample(kMean, 0.25)});
    store->finish_session(s);
  }
  // Back to version 4: without the tables versions 5 and 6 added.
  ASSERT_EQ(run_postgres(database.url(),
                         "DROP TABLE kernel_profile_function; DROP TABLE kernel_profile; DROP TABLE log; UPDATE kbench_meta SET value = '4' WHERE key = 'schema_version'"),
            "");
  const std::string uid = query_postgres(database.url(), "SELECT uid FROM session");
  EXPECT_THROW(open_store(database.url(), OpenMode::ReadOnly), InputError) << "a reader never migrates";
  auto store = open_store(database.url(), OpenMode::CreateIfMissing);
  EXPECT_EQ(query_postgres(database.url(), "SELECT value FROM kbench_meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  const auto sessions = store->list_sessions({});
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].uid, uid);
  const auto samples = store->samples(SampleQuery{});
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].value, 0.25);
  EXPECT_TRUE(store->logs("").empty());
  store->add_log("bisect", "a..b", "text");
  ASSERT_EQ(store->logs("bisect").size(), 1u);
}

// --- schema version 6: kernel profiles ----------------------------------------------

TEST(PostgresStoreV6, VersionFiveStoreIsMigratedAndKeepsKernelProfiles) {
  PostgresTestDatabase database;
  ASSERT_TRUE(database.ok());
  std::int64_t s = 0;
  {
    auto store = open_store(database.url(), OpenMode::CreateIfMissing);
    s = store->begin_session(start_of("lab-1", "base"));
    store->add_repeat(s, kGetpid, 0, {sample(kMean, 0.25)});
    store->finish_session(s);
  }
  ASSERT_EQ(run_postgres(database.url(), "DROP TABLE kernel_profile_function; DROP TABLE kernel_profile; "
                                         "UPDATE kbench_meta SET value = '5' WHERE key = 'schema_version'"),
            "");
  EXPECT_THROW(open_store(database.url(), OpenMode::ReadOnly), InputError) << "a reader never migrates";
  auto store = open_store(database.url(), OpenMode::CreateIfMissing);
  EXPECT_EQ(query_postgres(database.url(), "SELECT value FROM kbench_meta WHERE key = 'schema_version'"), "6");
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 1u);
  records::KernelProfile profile;
  profile.benchmark = kGetpid.name;
  profile.period_ns = 250000;
  profile.functions = {{"__task_pid_nr_ns", 40}, {"Do_Syscall_64", 2}};
  profile.samples = 42;
  store->add_kernel_profile(s, kGetpid, profile);
  const auto profiles = store->kernel_profiles("base", kGetpid.name);
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles[0].profile.functions, profile.functions);
  EXPECT_EQ(profiles[0].profile.samples, 42u);
  store->delete_session(s);
  EXPECT_TRUE(store->kernel_profiles("base", kGetpid.name).empty());
}

// --- four controllers at once ------------------------------------------------------

constexpr int kSessionsPerWriter = 3;
constexpr int kRepeatsPerBenchmark = 5;
constexpr int kClassesPerRepeat = 200;

std::vector<records::Sample> repeat_samples(int writer, int repeat) {
  std::vector<records::Sample> samples;
  for (int c = 0; c < kClassesPerRepeat; ++c) {
    samples.push_back(sample(ResultClass{"metric-" + std::to_string(c), "ns", Better::Lower},
                             writer * 1e6 + repeat * 1e3 + c));
  }
  return samples;
}

// A controller: its sessions on the shared SUT and swprofile, every repeat
// one transaction. Runs in a forked child; exits 0 when all is stored.
[[noreturn]] void controller(const std::string& url, int writer, bool endless) {
  int status = 0;
  try {
    auto store = open_store(url, OpenMode::CreateIfMissing);
    for (int s = 0; s < kSessionsPerWriter; ++s) {
      const auto session = store->begin_session(start_of(endless ? "victim" : "shared", "base"));
      for (const auto& key : {kGetpid, kPerfSyscall}) {
        for (int r = 0; endless || r < kRepeatsPerBenchmark; ++r) store->add_repeat(session, key, r, repeat_samples(writer, r));
        store->record_outcome(session, key, Outcome{});
      }
      store->finish_session(session);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "writer %d: %s\n", writer, error.what());
    status = 1;
  }
  _exit(status);
}

TEST(PostgresConcurrentWriters, FourControllersOneKilledMidRepeatLoseNothingAndLeaveNothingPartial) {
  PostgresTestDatabase database;
  ASSERT_TRUE(database.ok());
  const std::string url = database.url();
  open_store(url, OpenMode::CreateIfMissing);  // the schema; the writers then race on rows only

  std::vector<pid_t> writers;
  for (int w = 0; w < 4; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) controller(url, w, /*endless=*/w == 3);
    writers.push_back(pid);
  }

  // Writer 3 writes repeats until killed. Once two are committed, a lock on
  // its session row stops its next repeat between the INSERT and the COMMIT
  // (the foreign-key check waits for the lock): then it is killed. Only it
  // uses that row, so the one backend the lock blocks is its.
  PGconn* blocker = PQconnectdb(url.c_str());
  ASSERT_EQ(PQstatus(blocker), CONNECTION_OK) << PQerrorMessage(blocker);
  auto value = [&](const std::string& sql) {
    PGresult* result = PQexec(blocker, sql.c_str());
    std::string text = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) ? PQgetvalue(result, 0, 0) : "";
    PQclear(result);
    return text;
  };
  const std::string victim_repeats =
      "SELECT count(DISTINCT r.repeat) FROM result r JOIN session s ON s.id = r.session_id "
      "JOIN sut t ON t.id = s.sut_id WHERE t.name = 'victim'";
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::atoi(value(victim_repeats).c_str()) < 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string activity =
      "SELECT string_agg(pid || ' ' || state || ' ' || coalesce(wait_event_type, '-') || '/' || "
      "coalesce(wait_event, '-') || ' blocked by ' || pg_blocking_pids(pid)::text || ': ' || left(query, 60), E'\n') "
      "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()";
  ASSERT_GE(std::atoi(value(victim_repeats).c_str()), 2) << "writer 3 stored no 2 repeats:\n" << value(activity);
  PQclear(PQexec(blocker, "BEGIN"));
  const std::string locked = value(
      "SELECT s.id FROM session s JOIN sut t ON t.id = s.sut_id WHERE t.name = 'victim' FOR UPDATE OF s");
  ASSERT_FALSE(locked.empty());
  const std::string waiting =
      "SELECT count(*) FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid)) "
      "AND datname = current_database()";
  while (value(waiting) != "1" && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(value(waiting), "1") << "writer 3 never reached a repeat in flight:\n" << value(activity);
  kill(writers[3], SIGKILL);
  int status = 0;
  waitpid(writers[3], &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  PQclear(PQexec(blocker, "COMMIT"));
  PQfinish(blocker);
  for (int w = 0; w < 3; ++w) {
    waitpid(writers[w], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer " << w;
  }
  // The killed writer's backend rolls back and ends once it notices its
  // client is gone; the other writers have exited.
  while (query_postgres(url, "SELECT count(*) FROM pg_stat_activity "
                             "WHERE datname = current_database() AND pid <> pg_backend_pid()") != "0" &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  auto store = open_store(url, OpenMode::ReadOnly);
  const auto sessions = store->list_sessions({});
  std::map<std::string, std::set<int>> numbers;
  int finished = 0;
  std::int64_t samples = 0;
  for (const auto& session : sessions) {
    EXPECT_TRUE(numbers[session.sut].insert(session.number()).second) << "session number given twice";
    samples += session.samples;
    if (session.sut == "shared") {
      EXPECT_TRUE(session.complete());
      EXPECT_EQ(session.samples, 2 * kRepeatsPerBenchmark * kClassesPerRepeat);
      ++finished;
    } else {
      EXPECT_FALSE(session.finished);  // the killed one
      EXPECT_EQ(session.samples % kClassesPerRepeat, 0) << "a partial repeat";
      const auto repeats = store->stored_repeats(session.id, kGetpid);
      EXPECT_GE(repeats.size(), 2u);
      EXPECT_EQ(static_cast<std::int64_t>(repeats.size()) * kClassesPerRepeat, session.samples);
      for (std::size_t i = 0; i < repeats.size(); ++i) EXPECT_EQ(repeats[i], static_cast<int>(i));
    }
  }
  EXPECT_EQ(finished, 3 * kSessionsPerWriter);
  EXPECT_EQ(numbers["shared"], (std::set<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(numbers["victim"], (std::set<int>{1}));
  EXPECT_TRUE(store->integrity_check().empty());
  std::printf("4 controllers: %zu sessions, %lld samples, %d whole sessions of 3 writers, lost 0\n", sessions.size(),
              static_cast<long long>(samples), finished);
}

}  // namespace
}  // namespace kbench::store
