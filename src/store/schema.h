#pragma once
// The resultstore schema's versioning: which version a store has, what is
// refused, and how an older store is brought to the current version. The
// logic is backend-neutral (each backend supplies its dialect and connection
// and shares the rules); the SQL of each version lives in the dialect, which
// schema.cpp writes once in each database's column types (its CREATE TABLEs
// from assets/store/*.sql).
#include <optional>
#include <string>
#include <vector>

namespace kbench::store {

// One step from `from` to `from + 1`: statements run in the migrating
// transaction, in order.
struct Migration {
  int from = 0;
  std::vector<std::string> statements;
};

struct SchemaDialect {
  std::vector<std::string> create_initial;  // a new store, at version 1 (then migrated)
  std::vector<Migration> migrations;        // every step from version 1 up
};

const SchemaDialect& sqlite_dialect();
// The same tables in PostgreSQL's types (BIGINT identity keys, DOUBLE
// PRECISION values, byte-order "C" collation so text sorts as in SQLite).
const SchemaDialect& postgres_dialect();

// What a backend offers the versioning logic. Every call happens inside the
// transaction the backend opened around create_or_migrate().
class SchemaConnection {
 public:
  virtual ~SchemaConnection() = default;
  virtual void execute(const std::string& sql) = 0;
  virtual std::optional<std::string> meta(const std::string& key) = 0;
  virtual void set_meta(const std::string& key, const std::string& value) = 0;
};

// "2" -> 2; anything that is not a positive integer -> nullopt.
std::optional<int> parse_schema_version(const std::string& text);

// Refuses (InputError naming `location`) a version this build cannot read:
// not a positive integer, or newer than kSchemaVersion. Never writes.
int checked_schema_version(const std::string& location, const std::optional<std::string>& stored);

// Creates the schema when `stored` is empty (a new store), or runs the
// migrations from the stored version up to kSchemaVersion. The caller wraps
// this in one transaction: a store is migrated wholly or not at all.
// Returns the version found (0 for a new store).
int create_or_migrate(SchemaConnection& connection, const SchemaDialect& dialect, const std::string& location,
                      const std::string& created_at);

}  // namespace kbench::store
