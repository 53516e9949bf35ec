// Hardening of the resultstore: malformed URLs, schema migration,
// complete/incomplete sessions, deleting a session, and stores on read-only
// or full file systems (real tmpfs mounts; skipped only where mounting is
// impossible). Sessions are the store's behaviour and run on both backends;
// the rest is about SQLite files: a URL that must create no file, version-1
// and version-4 files that a read-only open leaves byte-identical (no
// PostgreSQL store is older than version 4, and a PostgreSQL reader refuses
// an old version instead of reading it: tests/store_postgres_test.cpp), and a
// file system that is read-only or full.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/errors.h"
#include "runner/plan_executor.h"
#include "store/result_store.h"
#include "support/sqlite_sql.h"
#include "support/store_backends.h"
#include "support/test_files.h"

namespace kbench::store {
namespace {

using kbench::testing::TempDir;
using kbench::testing::read_file;
using kbench::testing::run_sql;

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A small tmpfs of its own: the only way to make SQLite meet a read-only or
// full file system when the tests run as root (root ignores mode 0444).
class TmpfsMount {
 public:
  explicit TmpfsMount(const fs::path& at, const std::string& size) : at_(at), options_("size=" + size) {
    fs::create_directories(at_);
    mounted_ = ::mount("tmpfs", at_.c_str(), "tmpfs", 0, options_.c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  bool remount_read_only() {
    return ::mount("tmpfs", at_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, options_.c_str()) == 0;
  }

 private:
  fs::path at_;
  std::string options_;
  bool mounted_ = false;
  std::string error_;
};

std::string query_text(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string text;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    text = value ? value : "";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return text;
}

SessionStart start_of(const std::string& swprofile, std::vector<BenchmarkKey> planned = {}) {
  SessionStart start;
  start.sut.name = "lab-1";
  start.sut.hostname = "lab-1";
  start.sut.arch = "x86_64";
  start.swprofile = swprofile;
  start.fingerprint = {{"kernel_release", "6.1.0-test"}};
  start.started_at = "2026-01-01T00:00:00Z";
  start.planned = std::move(planned);
  return start;
}

records::Sample sample(double value) { return {"syscall/getpid", {"latency", "ns", Better::Lower}, 0, value}; }

const BenchmarkKey kGetpid{"syscall/getpid", {{"calls", "1000"}}};
const BenchmarkKey kGetppid{"syscall/getppid", {{"calls", "1000"}}};

// --- URLs --------------------------------------------------------------------

TEST(StoreUrlHardening, SchemeWithoutSlashesIsRefusedNotTakenAsAFileName) {
  for (const std::string url : {"sqlite:rel.db", "sqlite:/abs.db", "postgresql:db", "mysql:x"}) {
    try {
      parse_store_url(url);
      ADD_FAILURE() << url << " was accepted";
    } catch (const InputError& error) {
      EXPECT_THAT(error.what(), HasSubstr("without '//'")) << url;
      EXPECT_THAT(error.what(), HasSubstr("sqlite:///abs/path.db")) << url;
      EXPECT_THAT(std::string(error.what()), Not(HasSubstr("\n")));
    }
  }
}

TEST(StoreUrlHardening, UnknownSchemeListsTheAcceptedForms) {
  try {
    parse_store_url("mysql://host/db");
    FAIL() << "an unknown scheme was accepted";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("unknown scheme 'mysql://'"));
    EXPECT_THAT(error.what(), HasSubstr("sqlite://relative/path.db"));
  }
}

TEST(StoreUrlHardening, PathsWithAColonStillWork) {
  EXPECT_EQ(parse_store_url("./sqlite:rel.db").path, "./sqlite:rel.db");
  EXPECT_EQ(parse_store_url("/srv/a:b.db").path, "/srv/a:b.db");
  EXPECT_EQ(parse_store_url("sqlite:///abs.db").path, "/abs.db");
}

TEST(StoreUrlHardening, MalformedUrlCreatesNoFile) {
  TempDir dir;
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  EXPECT_THROW(open_store("sqlite:rel.db", OpenMode::CreateIfMissing), InputError);
  fs::current_path(cwd);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// --- schema versions -----------------------------------------------------------

// A store exactly as a version-1 kbench wrote it: one session with one
// benchmark done and one interrupted after a repeat.
void write_version1_store(const fs::path& file) {
  run_sql(file, R"sql(
    CREATE TABLE kbench_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE sut (id INTEGER PRIMARY KEY, name TEXT NOT NULL, hostname TEXT NOT NULL, arch TEXT NOT NULL,
      cpu_model TEXT NOT NULL, cpu_count INTEGER NOT NULL, memory_gib INTEGER NOT NULL, product_name TEXT NOT NULL,
      UNIQUE (name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name));
    CREATE TABLE swprofile (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
    CREATE TABLE session (id INTEGER PRIMARY KEY, sut_id INTEGER NOT NULL REFERENCES sut(id),
      swprofile_id INTEGER NOT NULL REFERENCES swprofile(id), idx INTEGER NOT NULL CHECK (idx >= 0),
      started_at TEXT NOT NULL, kernel_release TEXT NOT NULL, fingerprint TEXT NOT NULL,
      UNIQUE (sut_id, swprofile_id, idx));
    CREATE INDEX session_by_swprofile ON session(swprofile_id);
    CREATE TABLE benchmark (id INTEGER PRIMARY KEY, name TEXT NOT NULL, params TEXT NOT NULL, UNIQUE (name, params));
    CREATE TABLE resultclass (id INTEGER PRIMARY KEY, benchmark_id INTEGER NOT NULL REFERENCES benchmark(id),
      name TEXT NOT NULL, unit TEXT NOT NULL, better TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
      UNIQUE (benchmark_id, name, unit));
    CREATE TABLE result (session_id INTEGER NOT NULL REFERENCES session(id),
      resultclass_id INTEGER NOT NULL REFERENCES resultclass(id), repeat INTEGER NOT NULL CHECK (repeat >= 0),
      value REAL NOT NULL, recorded_at INTEGER NOT NULL, PRIMARY KEY (session_id, resultclass_id, repeat))
      WITHOUT ROWID;
    CREATE TABLE outcome (session_id INTEGER NOT NULL REFERENCES session(id),
      benchmark_id INTEGER NOT NULL REFERENCES benchmark(id),
      status TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'failed')), reason TEXT NOT NULL,
      stderr_tail TEXT NOT NULL, recorded_at INTEGER NOT NULL, PRIMARY KEY (session_id, benchmark_id)) WITHOUT ROWID;
    INSERT INTO kbench_meta VALUES ('schema_version', '1'), ('created_at', '2025-01-01T00:00:00Z');
    INSERT INTO sut VALUES (1, 'lab-1', 'lab-1', 'x86_64', '', 0, 0, '');
    INSERT INTO swprofile VALUES (1, 'base');
    INSERT INTO session VALUES (1, 1, 1, 0, '2025-01-01T00:00:00Z', '6.1.0', '{}');
    INSERT INTO benchmark VALUES (1, 'syscall/getpid', '{"calls":"1000"}'), (2, 'syscall/getppid', '{"calls":"1000"}');
    INSERT INTO resultclass VALUES (1, 1, 'latency', 'ns', 'lower'), (2, 2, 'latency', 'ns', 'lower');
    INSERT INTO result VALUES (1, 1, 0, 10.0, 0), (1, 1, 1, 11.0, 0), (1, 2, 0, 50.0, 0);
    INSERT INTO outcome VALUES (1, 1, 'ok', '', '', 0);
  )sql");
}

TEST(SchemaMigration, Version1StoreIsMigratedInPlaceKeepingItsData) {
  TempDir dir;
  const fs::path file = dir.path() / "v1.db";
  write_version1_store(file);
  {
    auto store = open_store(file.string(), OpenMode::CreateIfMissing);
    const auto sessions = store->list_sessions({});
    ASSERT_EQ(sessions.size(), 1u);
    EXPECT_TRUE(sessions[0].finished) << "version-1 sessions predate tracking and count as finished";
    ASSERT_EQ(sessions[0].gaps.size(), 1u) << "but a benchmark with samples and no outcome was interrupted";
    EXPECT_EQ(sessions[0].gaps[0].benchmark, "syscall/getppid");
    EXPECT_EQ(sessions[0].gaps[0].repeats_stored, 1);
    EXPECT_EQ(store->samples(SampleQuery{}).size(), 3u);
    // New sessions use the new columns.
    const auto id = store->begin_session(start_of("base", {kGetpid}));
    EXPECT_FALSE(store->session(id)->finished);
  }
  EXPECT_EQ(query_text(file, "SELECT value FROM kbench_meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(query_text(file, "PRAGMA integrity_check"), "ok");
}

TEST(SchemaMigration, ReadOnlyOpenReadsAVersion1StoreWithoutMigratingIt) {
  TempDir dir;
  const fs::path file = dir.path() / "v1.db";
  write_version1_store(file);
  const std::string before = read_file(file);
  {
    auto store = open_store(file.string(), OpenMode::ReadOnly);
    const auto sessions = store->list_sessions({"base"});
    ASSERT_EQ(sessions.size(), 1u);
    EXPECT_EQ(sessions[0].number(), 1);
    EXPECT_EQ(sessions[0].samples, 3);
    SampleQuery settled;
    settled.settled_only = true;
    EXPECT_EQ(store->samples(settled).size(), 2u);
    EXPECT_THROW(store->begin_session(start_of("base")), RunError);
  }
  EXPECT_EQ(read_file(file), before);
}

// A version-4 store (as kbench wrote it before logs) migrates to the current version
// keeping every session, sample and uid; a read-only open reads it as it is,
// with no logs, and leaves the file untouched.
TEST(SchemaMigration, Version4StoreIsMigratedToVersion5KeepingItsDataAndGetsLogs) {
  TempDir dir;
  const fs::path file = dir.path() / "v4.db";
  {
    auto store = open_store(file.string(), OpenMode::CreateIfMissing);
    const auto id = store->begin_session(start_of("base", {kGetpid}));
    store->add_repeat(id, kGetpid, 0, {sample(10)});
    store->add_repeat(id, kGetpid, 1, {sample(12)});
    store->record_outcome(id, kGetpid, Outcome{});
    store->finish_session(id);
  }
  run_sql(file, "PRAGMA journal_mode = DELETE; DROP TABLE kernel_profile_function; DROP TABLE kernel_profile; DROP TABLE log; "
                "UPDATE kbench_meta SET value = '4' WHERE key = 'schema_version'");
  const std::string uid = query_text(file, "SELECT uid FROM session");
  const std::string before = read_file(file);
  {
    auto reader = open_store(file.string(), OpenMode::ReadOnly);
    EXPECT_TRUE(reader->logs("").empty());
    EXPECT_EQ(reader->samples(SampleQuery{}).size(), 2u);
  }
  EXPECT_EQ(read_file(file), before) << "a read-only open never migrates";
  {
    auto store = open_store(file.string(), OpenMode::CreateIfMissing);
    const auto sessions = store->list_sessions({});
    ASSERT_EQ(sessions.size(), 1u);
    EXPECT_EQ(sessions[0].uid, uid);
    EXPECT_TRUE(sessions[0].complete());
    const auto samples = store->samples(SampleQuery{});
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[1].value, 12);
    EXPECT_TRUE(store->logs("").empty());
    store->add_log("bisect", "good..bad", "the log");
    EXPECT_EQ(store->logs("bisect").at(0).text, "the log");
  }
  EXPECT_EQ(query_text(file, "SELECT value FROM kbench_meta WHERE key = 'schema_version'"), std::to_string(kSchemaVersion));
  EXPECT_EQ(query_text(file, "PRAGMA integrity_check"), "ok");
}

records::KernelProfile kernel_profile(std::uint64_t getppid_samples) {
  records::KernelProfile profile;
  profile.benchmark = kGetpid.name;
  profile.period_ns = 250000;
  profile.functions = {{"__task_pid_nr_ns", getppid_samples}, {"do_syscall_64", 3}, {"kvm_fn [kvm]", 1}};
  profile.unresolved = 2;
  profile.samples = getppid_samples + 3 + 1 + 2;
  return profile;
}

// A version-5 store (before kernel profiles) migrates to version 6 keeping
// its data; a read-only open reads it with no profiles and leaves it as it is.
TEST(SchemaMigration, Version5StoreIsMigratedToVersion6AndKeepsKernelProfiles) {
  TempDir dir;
  const fs::path file = dir.path() / "v5.db";
  {
    auto store = open_store(file.string(), OpenMode::CreateIfMissing);
    const auto id = store->begin_session(start_of("base", {kGetpid}));
    store->add_repeat(id, kGetpid, 0, {sample(10)});
    store->record_outcome(id, kGetpid, Outcome{});
    store->finish_session(id);
  }
  run_sql(file, "PRAGMA journal_mode = DELETE; DROP TABLE kernel_profile_function; DROP TABLE kernel_profile; "
                "UPDATE kbench_meta SET value = '5' WHERE key = 'schema_version'");
  const std::string before = read_file(file);
  {
    auto reader = open_store(file.string(), OpenMode::ReadOnly);
    EXPECT_TRUE(reader->kernel_profiles("base", kGetpid.name).empty());
    EXPECT_EQ(reader->samples(SampleQuery{}).size(), 1u);
  }
  EXPECT_EQ(read_file(file), before) << "a read-only open never migrates";
  {
    auto store = open_store(file.string(), OpenMode::CreateIfMissing);
    EXPECT_EQ(store->samples(SampleQuery{}).size(), 1u);
    const auto id = store->list_sessions({}).at(0).id;
    store->add_kernel_profile(id, kGetpid, kernel_profile(40));
    // Stored again (a resumed benchmark): the new profile replaces the old.
    store->add_kernel_profile(id, kGetpid, kernel_profile(50));
    const auto profiles = store->kernel_profiles("base", kGetpid.name);
    ASSERT_EQ(profiles.size(), 1u);
    EXPECT_EQ(profiles[0].session, id);
    EXPECT_EQ(profiles[0].benchmark.params, kGetpid.params);
    EXPECT_EQ(profiles[0].profile.functions, kernel_profile(50).functions);
    EXPECT_EQ(profiles[0].profile.samples, 56u);
    EXPECT_EQ(profiles[0].profile.unresolved, 2u);
    EXPECT_EQ(profiles[0].profile.period_ns, 250000u);
    EXPECT_TRUE(store->kernel_profiles("other", kGetpid.name).empty());
  }
  EXPECT_EQ(query_text(file, "SELECT value FROM kbench_meta WHERE key = 'schema_version'"), "6");
  EXPECT_EQ(query_text(file, "PRAGMA integrity_check"), "ok");
}

TEST(KernelProfiles, UnavailableIsKeptAndDeletedWithTheSession) {
  TempDir dir;
  auto store = open_store((dir.path() / "p.db").string(), OpenMode::CreateIfMissing);
  const auto kept = store->begin_session(start_of("base", {kGetpid}));
  const auto deleted = store->begin_session(start_of("base", {kGetpid}));
  records::KernelProfile unavailable;
  unavailable.benchmark = kGetpid.name;
  unavailable.unavailable = "perf_event_open refused (Permission denied)";
  store->add_kernel_profile(kept, kGetpid, unavailable);
  store->add_kernel_profile(deleted, kGetpid, kernel_profile(7));
  store->delete_session(deleted);
  const auto profiles = store->kernel_profiles("base", kGetpid.name);
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles[0].profile.unavailable, unavailable.unavailable);
  EXPECT_TRUE(profiles[0].profile.functions.empty());
  store->discard_benchmark(kept, kGetpid);
  EXPECT_TRUE(store->kernel_profiles("base", kGetpid.name).empty());
  EXPECT_THROW(store->add_kernel_profile(deleted, kGetpid, unavailable), RunError) << "no such session";
}

// kbench merge reads a session whole and imports it elsewhere: its profile
// goes along.
TEST(KernelProfiles, TravelWithTheSessionToAnotherStore) {
  TempDir dir;
  auto source = open_store((dir.path() / "a.db").string(), OpenMode::CreateIfMissing);
  const auto id = source->begin_session(start_of("base", {kGetpid}));
  source->add_repeat(id, kGetpid, 0, {sample(10)});
  source->add_kernel_profile(id, kGetpid, kernel_profile(9));
  source->finish_session(id);
  const auto content = source->read_session(id);
  ASSERT_EQ(content.kernel_profiles.size(), 1u);
  auto destination = open_store((dir.path() / "b.db").string(), OpenMode::CreateIfMissing);
  const auto copied = destination->import_session(content);
  const auto profiles = destination->kernel_profiles("base", kGetpid.name);
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles[0].session, copied);
  EXPECT_EQ(profiles[0].benchmark.params, kGetpid.params);
  EXPECT_EQ(profiles[0].profile.functions, kernel_profile(9).functions);
  EXPECT_EQ(profiles[0].profile.samples, kernel_profile(9).samples);
}

TEST(SchemaMigration, NewerVersionIsRefusedAndNeverRewritten) {
  TempDir dir;
  const fs::path file = dir.path() / "future.db";
  open_store(file.string(), OpenMode::CreateIfMissing);
  run_sql(file, "PRAGMA journal_mode = DELETE; UPDATE kbench_meta SET value = '" +
                    std::to_string(kSchemaVersion + 1) + "' WHERE key = 'schema_version'");
  const std::string before = read_file(file);
  for (const auto mode : {OpenMode::CreateIfMissing, OpenMode::MustExist, OpenMode::ReadOnly}) {
    try {
      open_store(file.string(), mode);
      ADD_FAILURE() << "a newer store was opened";
    } catch (const InputError& error) {
      EXPECT_THAT(error.what(), HasSubstr("use a newer kbench"));
    }
  }
  EXPECT_EQ(read_file(file), before);
}

// --- complete and incomplete sessions, on both backends ----------------------------

class SessionsTest : public kbench::testing::OnEachBackend {
 protected:
  std::unique_ptr<ResultStore> store_ = open_store(stores_.url(), OpenMode::CreateIfMissing);
};

TEST_P(SessionsTest, KilledSessionLacksItsPlannedBenchmarks) {
  const auto id = store_->begin_session(start_of("base", {kGetpid, kGetppid}));
  store_->add_repeat(id, kGetpid, 0, {sample(10)});
  // Killed here: no outcome at all, not finished.
  const auto listing = store_->session(id);
  ASSERT_TRUE(listing);
  EXPECT_FALSE(listing->complete());
  EXPECT_FALSE(listing->finished);
  ASSERT_EQ(listing->gaps.size(), 2u);
  EXPECT_EQ(listing->gaps[0].benchmark, "syscall/getpid");
  EXPECT_EQ(listing->gaps[0].repeats_stored, 1);
  EXPECT_EQ(listing->gaps[1].benchmark, "syscall/getppid");
  EXPECT_EQ(listing->gaps[1].repeats_stored, 0);
}

TEST_P(SessionsTest, FinishedSessionWithEveryOutcomeIsComplete) {
  const auto id = store_->begin_session(start_of("base", {kGetpid, kGetppid}));
  store_->add_repeat(id, kGetpid, 0, {sample(10)});
  store_->record_outcome(id, kGetpid, Outcome{});
  store_->record_outcome(id, kGetppid, Outcome{OutcomeStatus::Skipped, "needs root", ""});
  EXPECT_FALSE(store_->session(id)->complete()) << "outcomes alone do not finish a session";
  store_->finish_session(id);
  EXPECT_TRUE(store_->session(id)->complete());
}

TEST_P(SessionsTest, SettledQueryLeavesOutInterruptedAndFailedBenchmarks) {
  const auto id = store_->begin_session(start_of("base", {kGetpid, kGetppid}));
  store_->add_repeat(id, kGetpid, 0, {sample(10)});
  store_->add_repeat(id, kGetpid, 1, {sample(11)});
  store_->record_outcome(id, kGetpid, Outcome{});
  store_->add_repeat(id, kGetppid, 0, {{"syscall/getppid", {"latency", "ns", Better::Lower}, 0, 99}});
  SampleQuery settled;
  settled.settled_only = true;
  EXPECT_EQ(store_->samples(settled).size(), 2u) << "the interrupted repeat must not feed compare";
  EXPECT_EQ(store_->samples(SampleQuery{}).size(), 3u) << "export still sees everything";
  store_->record_outcome(id, kGetppid, Outcome{OutcomeStatus::Failed, "timeout", ""});
  EXPECT_EQ(store_->samples(settled).size(), 2u);
}

TEST_P(SessionsTest, InterruptedBenchmarkKeepsItsRepeatsButLosesItsOutcome) {
  const auto id = store_->begin_session(start_of("base", {kGetpid}));
  store_->add_repeat(id, kGetpid, 0, {sample(10)});
  store_->record_outcome(id, kGetpid, Outcome{OutcomeStatus::Failed, "killed by signal 9", ""});
  store_->discard_outcome(id, kGetpid);
  EXPECT_FALSE(store_->outcome_of(id, kGetpid));
  EXPECT_THAT(store_->stored_repeats(id, kGetpid), ElementsAre(0));
  EXPECT_EQ(store_->session(id)->gaps.at(0).repeats_stored, 1);
}

TEST_P(SessionsTest, DeleteRemovesOneSessionWhollyAndKeepsTheOthersNumbers) {
  const auto first = store_->begin_session(start_of("base", {kGetpid}));
  const auto second = store_->begin_session(start_of("base", {kGetpid}));
  const auto third = store_->begin_session(start_of("base", {kGetpid}));
  for (const auto id : {first, second, third}) {
    store_->add_repeat(id, kGetpid, 0, {sample(10)});
    store_->record_outcome(id, kGetpid, Outcome{});
  }
  store_->delete_session(second);
  const auto sessions = store_->list_sessions({"base"});
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].number(), 1);
  EXPECT_EQ(sessions[1].number(), 3);
  EXPECT_EQ(store_->samples(SampleQuery{}).size(), 2u);
  EXPECT_FALSE(store_->session(second));
  EXPECT_FALSE(store_->outcome_of(second, kGetpid));
  EXPECT_THROW(store_->delete_session(second), RunError);
  EXPECT_TRUE(store_->integrity_check().empty());
}

TEST_P(SessionsTest, LatestPlanAndPlanSessionsAreFoundByKeyAndRun) {
  nlohmann::json fingerprint = {{"plan", {{"key", "/p.yaml"}, {"run", "r1"}, {"session", 0}, {"identity", "a"}}}};
  auto start = start_of("base");
  start.fingerprint = fingerprint;
  const auto old_run = store_->begin_session(start);
  start.fingerprint["plan"]["run"] = "r2";
  start.fingerprint["plan"]["identity"] = "b";
  const auto new_run = store_->begin_session(start);
  EXPECT_EQ(store_->latest_plan("/p.yaml", {"base"})->value("identity", ""), "b");
  EXPECT_FALSE(store_->latest_plan("/other.yaml", {"base"}));
  EXPECT_FALSE(store_->latest_plan("/p.yaml", {"patched"}));
  EXPECT_EQ(store_->find_plan_session("base", "/p.yaml", "r1", 0), old_run);
  EXPECT_EQ(store_->find_plan_session("base", "/p.yaml", "r2", 0), new_run);
  EXPECT_FALSE(store_->find_plan_session("base", "/p.yaml", "r2", 1));
}

INSTANTIATE_TEST_SUITE_P(Backends, SessionsTest, kbench::testing::kStoreBackends, kbench::testing::backend_name);

TEST(PlanChanges, NameWhatChanged) {
  runner::BenchmarkRun run{"syscall/getpid", {{"calls", "1000"}}, {}};
  run.settings.repeats = 5;
  const auto before = runner::plan_description({run});
  run.settings.repeats = 7;
  runner::BenchmarkRun added{"syscall/getppid", {}, {}};
  const auto after = runner::plan_description({run, added});
  EXPECT_NE(runner::plan_identity(before), runner::plan_identity(after));
  EXPECT_THAT(runner::plan_changes(before, after),
              ElementsAre("benchmark syscall/getpid repeats 5 -> 7", "benchmark syscall/getppid added"));
  EXPECT_TRUE(runner::plan_changes(after, after).empty());
  EXPECT_EQ(runner::plan_identity(after), runner::plan_identity(runner::plan_description({run, added})));
}

// --- read-only and full file systems ------------------------------------------------

class MountedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_ = std::make_unique<TmpfsMount>(dir_.path() / "mnt", "512k");
    if (!mount_->mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << mount_->error();
    file_ = dir_.path() / "mnt" / "results.db";
    auto store = open_store(file_.string(), OpenMode::CreateIfMissing);
    const auto id = store->begin_session(start_of("base", {kGetpid}));
    store->add_repeat(id, kGetpid, 0, {sample(10)});
    store->record_outcome(id, kGetpid, Outcome{});
    store->finish_session(id);
  }

  TempDir dir_;
  std::unique_ptr<TmpfsMount> mount_;
  fs::path file_;
};

TEST_F(MountedStoreTest, ReadOnlyFileSystemIsReadAndRefusedForWritingAsWhatItIs) {
  ASSERT_TRUE(mount_->remount_read_only()) << std::strerror(errno);
  {
    auto store = open_store(file_.string(), OpenMode::ReadOnly);
    EXPECT_EQ(store->samples(SampleQuery{}).size(), 1u);
    EXPECT_TRUE(store->session(1)->complete());
  }
  for (const auto mode : {OpenMode::CreateIfMissing, OpenMode::MustExist}) {
    try {
      auto store = open_store(file_.string(), mode);
      store->begin_session(start_of("base"));
      ADD_FAILURE() << "wrote to a read-only file system";
    } catch (const std::runtime_error& error) {
      EXPECT_THAT(error.what(), HasSubstr("read-only file system"));
      EXPECT_THAT(error.what(), Not(HasSubstr("not a kbench store")));
    }
  }
}

TEST_F(MountedStoreTest, NewStoreOnAReadOnlyFileSystemIsRefusedAsWhatItIs) {
  ASSERT_TRUE(mount_->remount_read_only()) << std::strerror(errno);
  const fs::path missing = dir_.path() / "mnt" / "new.db";
  try {
    open_store(missing.string(), OpenMode::CreateIfMissing);
    ADD_FAILURE() << "created a store on a read-only file system";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot create " + missing.string() + ": read-only file system"));
    EXPECT_THAT(error.what(), Not(HasSubstr("No such file")));
  }
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(MountedStoreTest, FullFileSystemIsCalledFullAndStillReadable) {
  {
    // Fill the file system to the last byte.
    std::ofstream filler(dir_.path() / "mnt" / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  {
    auto store = open_store(file_.string(), OpenMode::ReadOnly);
    EXPECT_EQ(store->samples(SampleQuery{}).size(), 1u);
  }
  try {
    auto store = open_store(file_.string(), OpenMode::CreateIfMissing);
    const auto id = store->begin_session(start_of("base", {kGetpid}));
    std::vector<records::Sample> many;
    for (int i = 0; i < 20000; ++i) {
      std::string name = "r";  // not "r" + to_string(i), which GCC 12 takes for an overflowing memcpy
      name += std::to_string(i);
      many.push_back({"syscall/getpid", {name, "ns", Better::Lower}, 0, 1.0});
    }
    store->add_repeat(id, kGetpid, 0, many);
    ADD_FAILURE() << "a full file system took 20000 samples";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("disk full"));
    EXPECT_THAT(error.what(), Not(HasSubstr("not a kbench store")));
  }
  fs::remove(dir_.path() / "mnt" / "filler");
  auto store = open_store(file_.string(), OpenMode::ReadOnly);
  EXPECT_EQ(store->samples(SampleQuery{}).size(), 1u) << "the failed repeat left nothing behind";
}

}  // namespace
}  // namespace kbench::store
