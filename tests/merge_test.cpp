// Schema version 4 (session uid, sut_class) and `kbench merge`, with the
// kbench binary run as a process for the command's behaviour: on both
// backends, but for version-3 stores, which are SQLite files only (no
// PostgreSQL store is older than version 4).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "common/errors.h"
#include "store/result_store.h"
#include "support/sqlite_sql.h"
#include "support/store_backends.h"
#include "support/test_files.h"
#include "support/test_paths.h"

using namespace kbench;
using namespace kbench::store;
using kbench::testing::read_file;
using kbench::testing::run_sql;
using kbench::testing::OnEachBackend;
using kbench::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

namespace {

const BenchmarkKey kGetpid{"syscall/getpid", {{"calls", "1000"}}};
const BenchmarkKey kFork{"micromm/fork", {{"p", "1"}}};

SessionStart start_of(const std::string& sut, const std::string& swprofile, const std::string& sut_class = "") {
  SessionStart start;
  start.sut = Sut{sut, sut, "aarch64", "Neoverse-N1", 64, 256, "box"};
  start.swprofile = swprofile;
  start.fingerprint = {{"kernel_release", "6.1.0"}};
  if (!sut_class.empty()) start.fingerprint["sut_class"] = sut_class;
  start.started_at = "2026-11-30T10:00:00Z";
  start.planned = {kGetpid, kFork};
  return start;
}

// A finished session: getpid and fork with three repeats each.
std::int64_t add_session(ResultStore& store, const std::string& sut, const std::string& swprofile, double value,
                         const std::string& sut_class = "", bool finish = true) {
  const auto id = store.begin_session(start_of(sut, swprofile, sut_class));
  for (int repeat = 0; repeat < 3; ++repeat) {
    store.add_repeat(id, kGetpid, repeat,
                     {{"syscall/getpid", {"mean", "ns", Better::Lower}, 0, value + repeat},
                      {"syscall/getpid", {"p99", "ns", Better::Lower}, 0, 2 * value + repeat}});
    store.add_repeat(id, kFork, repeat, {{"micromm/fork", {"fork", "seconds", Better::Lower}, 0, 0.01 * value}});
  }
  store.record_outcome(id, kGetpid, Outcome{});
  if (finish) {
    store.record_outcome(id, kFork, Outcome{OutcomeStatus::Failed, "timed out", "tail"});
    store.finish_session(id, {{"loadavg_end", 0.5}});
  }
  return id;
}

// Five sessions on two SUTs in two classes, the last one unfinished.
void add_merge_sessions(ResultStore& store) {
  add_session(store, "lab-1", "base", 100, "c1");
  add_session(store, "lab-1", "base", 101, "c1");
  add_session(store, "lab-1", "patched", 110, "c1");
  add_session(store, "lab-2", "base", 200, "c2");
  add_session(store, "lab-2", "patched", 210, "c2", /*finish=*/false);
}

// "SUT swprofile index" of every session, in the store's order.
std::vector<std::string> sessions_in(const std::string& url) {
  std::vector<std::string> sessions;
  for (const auto& listing : open_store(url, OpenMode::ReadOnly)->list_sessions({})) {
    sessions.push_back(listing.sut + " " + listing.swprofile + " " + std::to_string(listing.session_index));
  }
  return sessions;
}

std::string query_text(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* statement = nullptr;
  std::string text;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW) {
    const auto* value = sqlite3_column_text(statement, 0);
    text = value ? reinterpret_cast<const char*>(value) : "";
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return text;
}

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

// The kbench binary as a user runs it.
Ran kbench_cli(const fs::path& dir, const std::string& arguments) {
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const std::string command = std::string(KBENCH_BINARY_DIR) + "/kbench " + arguments + " >" + out.string() +
                              " 2>" + err.string();
  const int raw = std::system(command.c_str());
  Ran ran;
  ran.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  ran.out = read_file(out);
  ran.err = read_file(err);
  return ran;
}

int lines_of(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// A version-3 store exactly as a version-3 kbench left it: the current schema
// without what versions 4 to 6 added.
void downgrade_to_version3(const fs::path& file) {
  run_sql(file, R"sql(
    PRAGMA journal_mode = DELETE;
    DROP TABLE kernel_profile_function;
    DROP TABLE kernel_profile;
    DROP TABLE log;
    DROP INDEX session_by_uid;
    ALTER TABLE session DROP COLUMN uid;
    ALTER TABLE session DROP COLUMN sut_class;
    UPDATE kbench_meta SET value = '3' WHERE key = 'schema_version';
  )sql");
}

}  // namespace

// --- schema version 4 -------------------------------------------------------------

class SchemaVersion4 : public OnEachBackend {};

TEST_P(SchemaVersion4, NewSessionsGetARandomUidAndTheirFingerprintsClass) {
  auto store = open_store(stores_.url(), OpenMode::CreateIfMissing);
  const auto first = add_session(*store, "lab-1", "base", 100, "aws-m7g.metal");
  const auto second = add_session(*store, "lab-1", "base", 100);
  auto given = start_of("lab-1", "base");
  given.uid = "0123456789abcdef0123456789abcdef";
  const auto third = store->begin_session(given);
  const auto listing = store->list_sessions({});
  ASSERT_EQ(listing.size(), 3u);
  EXPECT_THAT(listing[0].uid, ::testing::MatchesRegex("[0-9a-f]{32}"));
  EXPECT_NE(listing[0].uid, listing[1].uid);
  EXPECT_EQ(listing[2].uid, given.uid);
  EXPECT_EQ(listing[0].sut_class, "aws-m7g.metal");
  EXPECT_EQ(listing[1].sut_class, "");
  EXPECT_EQ(store->find_session_by_uid(listing[0].uid), first);
  EXPECT_EQ(store->find_session_by_uid(listing[1].uid), second);
  EXPECT_EQ(store->find_session_by_uid(given.uid), third);
  EXPECT_EQ(store->find_session_by_uid("ffffffffffffffffffffffffffffffff"), std::nullopt);
  EXPECT_THROW(store->begin_session(given), RunError) << "a uid is unique in a store";

  SampleQuery m7g;
  m7g.class_glob = "aws-*";
  const auto samples = store->samples(m7g);
  ASSERT_EQ(samples.size(), 9u);
  for (const auto& sample : samples) EXPECT_EQ(sample.sut_class, "aws-m7g.metal");
}

INSTANTIATE_TEST_SUITE_P(Backends, SchemaVersion4, kbench::testing::kStoreBackends, kbench::testing::backend_name);

TEST(SchemaVersion4File, Version3StoreReadsOnlyAsItIsAndMigratesWithUniqueUidsAndClasses) {
  TempDir dir;
  const fs::path file = dir.path() / "v3.db";
  {
    auto store = open_store(file.string(), OpenMode::CreateIfMissing);
    add_session(*store, "lab-1", "base", 100, "aws-m7g.metal");
    add_session(*store, "lab-2", "base", 100);
    add_session(*store, "lab-1", "patched", 110, "aws-m7g.metal");
  }
  downgrade_to_version3(file);
  const std::string before = read_file(file);
  {
    auto store = open_store(file.string(), OpenMode::ReadOnly);
    const auto listing = store->list_sessions({});
    ASSERT_EQ(listing.size(), 3u);
    EXPECT_EQ(listing[0].uid, "") << "version 3 has no uids";
    EXPECT_EQ(listing[0].sut_class, "aws-m7g.metal") << "read from the fingerprint, as the migration will";
    EXPECT_EQ(listing[1].sut_class, "");
    SampleQuery query;
    query.class_glob = "aws-m7g.metal";
    query.settled_only = true;
    EXPECT_EQ(store->samples(query).size(), 12u) << "compare's query on a read-only version-3 store";
    EXPECT_EQ(store->find_session_by_uid("x"), std::nullopt);
  }
  EXPECT_EQ(read_file(file), before) << "a read-only open never migrates";

  { auto store = open_store(file.string(), OpenMode::CreateIfMissing); }
  EXPECT_EQ(query_text(file, "SELECT value FROM kbench_meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion)) << "migrated through 4 to the current version";
  EXPECT_EQ(query_text(file, "SELECT COUNT(DISTINCT uid) FROM session WHERE uid GLOB '" + std::string(32, '?') +
                                 "' AND lower(uid) = uid"),
            "3");
  EXPECT_EQ(query_text(file, "SELECT group_concat(sut_class, '|') FROM (SELECT sut_class FROM session ORDER BY id)"),
            "aws-m7g.metal||aws-m7g.metal");
  EXPECT_EQ(query_text(file, "PRAGMA integrity_check"), "ok");
}

// --- moving sessions between stores --------------------------------------------------

class SessionImport : public OnEachBackend {};

TEST_P(SessionImport, ReadAndImportKeepEverythingAndRenumberOnlyATakenNumber) {
  auto source = open_store(stores_.url("src.db"), OpenMode::CreateIfMissing);
  auto destination = open_store(stores_.url("dst.db"), OpenMode::CreateIfMissing);
  add_session(*source, "lab-1", "base", 100, "c1");
  const auto second = add_session(*source, "lab-1", "base", 101, "c1", /*finish=*/false);
  const SessionContent content = source->read_session(second);
  EXPECT_EQ(content.session_index, 1);
  EXPECT_FALSE(content.finished_at);
  ASSERT_TRUE(content.planned);
  EXPECT_EQ(content.planned->size(), 2u);
  EXPECT_EQ(content.outcomes.size(), 1u);
  EXPECT_EQ(content.results.size(), 9u);

  const auto imported = destination->import_session(content);
  const SessionContent copy = destination->read_session(imported);
  EXPECT_EQ(copy.uid, content.uid);
  EXPECT_EQ(copy.session_index, 1) << "number 2 is free in the destination: kept";
  EXPECT_EQ(copy.fingerprint, content.fingerprint);
  EXPECT_EQ(copy.started_at, content.started_at);
  EXPECT_FALSE(copy.finished_at);
  EXPECT_EQ(copy.results.size(), content.results.size());
  for (std::size_t i = 0; i < copy.results.size(); ++i) {
    EXPECT_EQ(copy.results[i].value, content.results[i].value);
    EXPECT_EQ(copy.results[i].recorded_at, content.results[i].recorded_at);
  }
  EXPECT_EQ(destination->session(imported)->sut_class, "c1");

  auto again = content;
  again.uid = "00000000000000000000000000000001";
  const auto renumbered = destination->import_session(again);
  EXPECT_EQ(destination->read_session(renumbered).session_index, 2) << "number 2 is taken: the next free one";

  auto flipped = content;
  flipped.uid = "00000000000000000000000000000002";
  for (auto& result : flipped.results) result.result_class.better = Better::Higher;
  try {
    destination->import_session(flipped);
    ADD_FAILURE() << "a result class of the other direction was imported";
  } catch (const RunError& error) {
    EXPECT_THAT(error.what(), HasSubstr("higher is better, but the store has it as lower is better"));
  }
  EXPECT_EQ(destination->find_session_by_uid(flipped.uid), std::nullopt) << "nothing of it was written";
}

INSTANTIATE_TEST_SUITE_P(Backends, SessionImport, kbench::testing::kStoreBackends, kbench::testing::backend_name);

// --- kbench merge ------------------------------------------------------------------

class MergeCommand : public OnEachBackend {
 protected:
  void SetUp() override { add_merge_sessions(*open_store(source_, OpenMode::CreateIfMissing)); }
  Ran kbench(const std::string& arguments) { return kbench_cli(stores_.dir(), arguments); }

  std::string source_ = stores_.url("src.db");
  std::string destination_ = stores_.url("sub/dst.db");
};

TEST_P(MergeCommand, CopiesEverythingOnceAndExportsTheSameOnBothSides) {
  const Ran first = kbench("merge " + source_ + " " + destination_);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("  sessions copied: 5 (1 unfinished, merged as they are)\n"
                                   "  sessions already present: 0\n"
                                   "  sessions renumbered: 0\n"
                                   "  samples copied: 45\n"));
  const Ran second = kbench("merge " + source_ + " " + destination_);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("  sessions copied: 0\n  sessions already present: 5\n"));
  EXPECT_EQ(stores_.query(destination_, "SELECT COUNT(*) FROM result"), "45") << "merging twice adds nothing";

  for (const std::string format : {"csv", "json"}) {
    const Ran from = kbench("export --format " + format + " --store " + source_);
    const Ran to = kbench("export --format " + format + " --store " + destination_);
    ASSERT_EQ(from.status, 0) << from.err;
    EXPECT_EQ(lines_of(from.out), format == "csv" ? 46 : 47);
    EXPECT_EQ(from.out, to.out) << format;
  }
}

TEST_P(MergeCommand, SelectsBySutAndSwprofileGlobsAndRenumbersATakenNumber) {
  {
    // The destination already measured lab-1 base once: the merged sessions are its 2nd and 3rd.
    auto destination = open_store(destination_, OpenMode::CreateIfMissing);
    add_session(*destination, "lab-1", "base", 90, "c1");
  }
  const Ran ran = kbench("merge --sut 'lab-[1]' --swprofile 'base,nothing*' " + source_ + " " + destination_ +
                         " --swprofile 'patch*'");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("  sessions copied: 3\n"));
  EXPECT_THAT(ran.out, HasSubstr("  sessions renumbered: 2\n  lab-1 base session 1 is session 2 in "));
  EXPECT_THAT(ran.out, HasSubstr("\n  lab-1 base session 2 is session 3 in "));
  EXPECT_THAT(sessions_in(destination_),
              ElementsAre("lab-1 base 0", "lab-1 base 1", "lab-1 base 2", "lab-1 patched 0"));

  // Export identifies sessions by uid; lab-1 patched kept its number, so its part reads the same.
  const Ran from = kbench("export --swprofile patched --sut lab-1 --store " + source_);
  const Ran to = kbench("export --swprofile patched --sut lab-1 --store " + destination_);
  EXPECT_EQ(lines_of(from.out), 10);
  EXPECT_EQ(from.out, to.out);
}

TEST_P(MergeCommand, AConflictIsOneLineExitTwoAndWritesNothing) {
  ASSERT_EQ(kbench("merge " + source_ + " " + destination_ + " --swprofile base").status, 0);
  // The same session (uid) with another value in the destination, and the
  // sessions of "patched" not yet there: none may be written.
  stores_.run(destination_, "UPDATE result SET value = 999 WHERE repeat = 2 AND session_id = "
                            "(SELECT s.id FROM session s JOIN sut t ON t.id = s.sut_id WHERE t.name = 'lab-2')");
  const std::string uid = stores_.query(destination_, "SELECT s.uid FROM session s JOIN sut t ON t.id = s.sut_id "
                                                      "WHERE t.name = 'lab-2'");
  const std::string content_sql =
      "SELECT (SELECT COUNT(*) FROM session) || ' ' || (SELECT COUNT(*) FROM result) || ' ' || "
      "(SELECT SUM(value) FROM result) || ' ' || (SELECT COUNT(*) FROM outcome) || ' ' || (SELECT COUNT(*) FROM sut)";
  const std::string before = stores_.query(destination_, content_sql);
  const Ran ran = kbench("merge " + source_ + " " + destination_);
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(lines_of(ran.err), 1) << ran.err;
  EXPECT_THAT(ran.err, HasSubstr("conflict: SUT lab-2, swprofile base, session 1, uid " + uid));
  EXPECT_THAT(ran.err, HasSubstr("the results differ at micromm/fork p=1 fork (seconds) repeat 2 (2 vs 999)"));
  EXPECT_THAT(ran.err, HasSubstr("nothing was written"));
  EXPECT_EQ(stores_.query(destination_, content_sql), before)
      << "not even the sessions of patched, which had no conflict";
  EXPECT_EQ(before.substr(0, 2), "3 ");
}

TEST_P(MergeCommand, BadSelectionsAndDryRunWriteNothing) {
  Ran ran = kbench("merge " + source_ + " " + destination_ + " --sut 'nobody*'");
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.err, "kbench: merge: no session of " + source_ + " matches --sut nobody*\n");
  ran = kbench("merge " + source_ + " " + destination_ + " --swprofile 'a['");
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(lines_of(ran.err), 1);
  ran = kbench("merge " + stores_.url("missing.db") + " " + destination_);
  EXPECT_EQ(ran.status, 2);
  EXPECT_THAT(ran.err, HasSubstr(stores_.sqlite() ? "does not exist" : "has no kbench tables"));
  ran = kbench("merge --dry-run " + source_ + " " + destination_);
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("  sessions would be copied: 5 (1 unfinished, merged as they are)\n"));
  EXPECT_THAT(ran.out, HasSubstr("  samples would be copied: 45\n"));
  EXPECT_FALSE(stores_.has_store(destination_)) << "a dry run creates no store";
  if (stores_.sqlite()) {
    EXPECT_FALSE(fs::exists(stores_.dir() / "sub")) << "nor the directory it would be in";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, MergeCommand, kbench::testing::kStoreBackends, kbench::testing::backend_name);

TEST(MergeCommandFile, AVersion3SourceIsRefusedWithHowToUpgradeIt) {
  TempDir dir;
  const std::string source = (dir.path() / "src.db").string(), destination = (dir.path() / "sub" / "dst.db").string();
  add_merge_sessions(*open_store(source, OpenMode::CreateIfMissing));
  downgrade_to_version3(source);
  Ran ran = kbench_cli(dir.path(), "merge " + source + " " + destination);
  EXPECT_EQ(ran.status, 2);
  EXPECT_THAT(ran.err, HasSubstr("sessions have no uid to merge by"));
  EXPECT_EQ(lines_of(ran.err), 1);
  ran = kbench_cli(dir.path(), "merge " + source + " " + source);
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("  sessions already present: 5\n")) << "merging a store into itself upgrades it";
  ran = kbench_cli(dir.path(), "merge " + source + " " + destination);
  EXPECT_EQ(ran.status, 0) << ran.err;
}
