// The boots of ssh SUTs into swprofiles' kernels, in a real SQLite file and
// in PostgreSQL (the server scripts/pg-test-server.sh starts).
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "store/result_store.h"
#include "support/postgres_test_db.h"
#include "support/test_files.h"

namespace kbench::store {
namespace {

BootRecord boot_of(const std::string& swprofile, const std::string& run, int plan_session, bool ok) {
  BootRecord boot;
  boot.sut = "lab-1";
  boot.swprofile = swprofile;
  boot.plan_key = "/plans/ab.yaml";
  boot.run = run;
  boot.plan_session = plan_session;
  boot.number = plan_session + 1;
  boot.method = "kexec";
  boot.started_at = "2026-12-01T10:00:00Z";
  boot.seconds = 41.5;
  boot.ok = ok;
  boot.power_cycled = !ok;
  boot.release = ok ? "6.12.1" : "6.1.0-50-cloud-amd64";
  boot.reason = ok ? "" : "no ssh answer; power-cycled";
  boot.console_tail = ok ? "" : "Kernel panic - not syncing: VFS: Unable to mount root fs\n";
  return boot;
}

SessionStart session_of(const std::string& swprofile) {
  SessionStart start;
  start.sut.name = "lab-1";
  start.sut.hostname = "lab-1";
  start.sut.arch = "x86_64";
  start.swprofile = swprofile;
  start.fingerprint = {{"kernel_release", "6.12.1"}};
  start.started_at = "2026-12-01T10:00:41Z";
  return start;
}

class StoreBootsOn : public ::testing::TestWithParam<std::string> {
 protected:
  std::string url() {
    if (GetParam() == "sqlite") return "sqlite://" + (dir_.path() / "boots.db").string();
    if (!database_) database_ = std::make_unique<kbench::testing::PostgresTestDatabase>();
    if (!database_->ok()) throw std::runtime_error("no PostgreSQL test database");
    return database_->url();
  }

 private:
  testing::TempDir dir_;
  std::unique_ptr<kbench::testing::PostgresTestDatabase> database_;
};

TEST_P(StoreBootsOn, RecordedBootsComeBackByRunWithTheirSession) {
  auto store = open_store(url(), OpenMode::CreateIfMissing);
  const auto session = store->begin_session(session_of("a"));
  auto measured = boot_of("a", "run-1", 0, true);
  measured.session = session;
  store->record_boot(measured);
  store->record_boot(boot_of("b", "run-1", 0, false));
  store->record_boot(boot_of("a", "run-2", 0, true));

  const auto run1 = store->list_boots("/plans/ab.yaml", "run-1");
  ASSERT_EQ(run1.size(), 2u);
  EXPECT_EQ(run1[0].swprofile, "a");
  EXPECT_EQ(run1[0].session, session);
  EXPECT_TRUE(run1[0].ok);
  EXPECT_DOUBLE_EQ(run1[0].seconds, 41.5);
  EXPECT_EQ(run1[1].swprofile, "b");
  EXPECT_FALSE(run1[1].ok);
  EXPECT_TRUE(run1[1].power_cycled);
  EXPECT_FALSE(run1[1].session.has_value());
  EXPECT_EQ(run1[1].console_tail, "Kernel panic - not syncing: VFS: Unable to mount root fs\n");
  EXPECT_EQ(store->list_boots("", "").size(), 3u);

  // Deleting the session keeps the boot's record, without the session.
  store->delete_session(session);
  const auto after = store->list_boots("/plans/ab.yaml", "run-1");
  ASSERT_EQ(after.size(), 2u);
  EXPECT_FALSE(after[0].session.has_value());
  EXPECT_TRUE(store->integrity_check().empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreBootsOn, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

TEST(StoreBoots, AReadOnlyStoreWithoutBootsListsNone) {
  testing::TempDir dir;
  const std::string url = "sqlite://" + (dir.path() / "boots.db").string();
  open_store(url, OpenMode::CreateIfMissing)->begin_session(session_of("a"));
  auto reader = open_store(url, OpenMode::ReadOnly);
  EXPECT_TRUE(reader->list_boots("", "").empty());
}

}  // namespace
}  // namespace kbench::store
