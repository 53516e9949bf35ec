#pragma once
// Store tests that hold for every backend run once per backend: a fixture
// derived from OnEachBackend, its TEST_Ps instantiated with
//   INSTANTIATE_TEST_SUITE_P(Backends, Fixture, kStoreBackends, backend_name);
// The instances' names end in /sqlite and /postgresql, so that `make
// test-asan`, which starts no PostgreSQL server, can leave out the second.
// Header-only.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "store/result_store.h"
#include "support/postgres_test_db.h"
#include "support/sqlite_sql.h"
#include "support/test_files.h"

namespace kbench::testing {

inline const auto kStoreBackends = ::testing::Values(std::string("sqlite"), std::string("postgresql"));

inline std::string backend_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

// The stores of one test on one backend ("sqlite" or "postgresql"), and raw
// SQL on them, for a state kbench itself would never write.
class BackendStores {
 public:
  explicit BackendStores(std::string backend) : backend_(std::move(backend)) {}
  BackendStores(const BackendStores&) = delete;
  BackendStores& operator=(const BackendStores&) = delete;

  bool sqlite() const { return backend_ == "sqlite"; }

  // Store `name`: a file of that name in the test's own directory (not
  // created), or a database of its own on the test server (created empty,
  // dropped after the test).
  std::string url(const std::string& name = "results.db") {
    if (sqlite()) return "sqlite://" + (dir_.path() / name).string();
    auto& database = databases_[name];
    if (!database) database = std::make_unique<PostgresTestDatabase>();
    if (!database->ok()) throw std::runtime_error("no PostgreSQL test database");
    return database->url();
  }

  const std::filesystem::path& dir() const { return dir_.path(); }

  // Whether `url` holds kbench's tables: SQLite's file exists, or the
  // PostgreSQL database has them.
  bool has_store(const std::string& url) const {
    if (sqlite()) return std::filesystem::exists(file_of(url));
    return query_postgres(url, "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'kbench_meta'") !=
           "0";
  }

  // One or more statements on the store at `url`.
  void run(const std::string& url, const std::string& sql) const {
    if (sqlite()) {
      run_sql(file_of(url), sql);
    } else {
      ASSERT_EQ(run_postgres(url, sql), "") << sql;
    }
  }

  // The first column of the first row of `sql` on the store at `url`, as text.
  std::string query(const std::string& url, const std::string& sql) const {
    if (!sqlite()) return query_postgres(url, sql);
    sqlite3* db = nullptr;
    sqlite3_open_v2(file_of(url).c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* statement = nullptr;
    std::string text;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      const auto* value = sqlite3_column_text(statement, 0);
      text = value ? reinterpret_cast<const char*>(value) : "";
    } else {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    }
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return text;
  }

 private:
  static std::filesystem::path file_of(const std::string& url) { return store::parse_store_url(url).path; }

  std::string backend_;
  TempDir dir_;
  std::map<std::string, std::unique_ptr<PostgresTestDatabase>> databases_;
};

// A TEST_P fixture whose stores are on the instance's backend.
class OnEachBackend : public ::testing::TestWithParam<std::string> {
 protected:
  BackendStores stores_{GetParam()};
};

}  // namespace kbench::testing
