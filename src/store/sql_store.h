#pragma once
// The resultstore over any SQL database: every ResultStore method, its SQL
// and its rules, written once over an SqlDriver (store/sql_driver.h), with
// what the databases really spell differently in an SqlDialect. A backend is
// a driver, a dialect and an open function (sqlite_store.cpp,
// postgres_store.cpp). Internal to src/store/.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/result_store.h"
#include "store/schema.h"
#include "store/sql_driver.h"

namespace kbench::store {

// One row of the result table, for a bulk insert.
struct ResultInsert {
  std::int64_t resultclass_id;
  int repeat;
  double value;
  std::int64_t recorded_at;
};

class SqlDialect {
 public:
  virtual ~SqlDialect() = default;

  // Other processes write into the same store at the same time. Rows they
  // all share (benchmarks, result classes) are then committed on their own
  // before a repeat's transaction, which so holds no lock on them.
  virtual bool concurrent_writers() const = 0;
  // " FOR UPDATE" where reading a row can lock it until the transaction ends.
  virtual std::string lock_clause() const = 0;

  // SQL true when `expression` matches the glob bound at `placeholder`,
  // which is bound to glob_parameter(glob).
  virtual std::string glob_match(const std::string& expression, const std::string& placeholder) const = 0;
  virtual std::string glob_parameter(const std::string& glob) const = 0;
  // SQL of the member at `path` ({"plan", "key"}) of a JSON text column: the
  // text of a string, a number as SQL compares it to a bound integer, an
  // object as JSON text; NULL when missing.
  virtual std::string json_member(const std::string& column, const std::vector<std::string>& path) const = 0;
  // SQL of a session's SUT class read from its fingerprint (alias s), as
  // the migration to version 4 fills the column: for older stores.
  virtual std::string fingerprint_sut_class() const = 0;

  // Session numbers of one (SUT, swprofile) are handed out to one writer at
  // a time, until the transaction ends.
  virtual void lock_session_numbers(SqlDriver& driver, std::int64_t sut_id, std::int64_t swprofile_id) const = 0;
  virtual void insert_results(SqlDriver& driver, std::int64_t session, const std::vector<ResultInsert>& rows) const = 0;
  // Sets each member of `members` (an object) in the session's fingerprint.
  virtual void set_fingerprint_members(SqlDriver& driver, std::int64_t session,
                                       const nlohmann::json& members) const = 0;
  // After a session's results are in, for the query planner.
  virtual void refresh_statistics(SqlDriver& driver) const = 0;
  // ResultStore::integrity_check: empty when the store is sound.
  virtual std::vector<std::string> integrity_problems(SqlDriver& driver) const = 0;
};

// The versioning logic's view of a driver (schema.h).
class DriverSchemaConnection final : public SchemaConnection {
 public:
  explicit DriverSchemaConnection(SqlDriver& driver) : driver_(driver) {}
  void execute(const std::string& sql) override { driver_.execute(sql); }
  std::optional<std::string> meta(const std::string& key) override;
  void set_meta(const std::string& key, const std::string& value) override;

 private:
  SqlDriver& driver_;
};

// `schema_version`: that of the open store, which a read-only one may have
// older than kSchemaVersion (queries then read what it has).
std::unique_ptr<ResultStore> make_sql_store(std::string url, std::unique_ptr<SqlDriver> driver,
                                            std::unique_ptr<SqlDialect> dialect, bool writable, int schema_version);

// "?3,?4,?5": `count` placeholders from `first` on.
std::string sql_placeholders(std::size_t count, int first);

}  // namespace kbench::store
