// The PostgreSQL resultstore (docs/resultstore.md, "PostgreSQL"): the SQL
// store (store/sql_store.h) over libpq, for many controllers writing into
// one database at once.
#include "store/postgres_store.h"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/utc_time.h"
#include "store/postgres_connection.h"
#include "store/schema.h"
#include "store/sql_store.h"
#include "store/store_text.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::store {

namespace {

// pg_advisory_lock key of schema creation and migration: two first-time
// writers must not both create the tables. ("kbench" in ASCII.)
constexpr std::int64_t kSchemaLockKey = 0x6b62656e6368;

// Type OIDs of the columns kbench reads (pg_type.h).
enum PgType : Oid { kBool = 16, kInt8 = 20, kInt4 = 23, kFloat8 = 701, kJsonb = 3802 };

// The SQL store writes ?1; PostgreSQL reads $1. Quoted text stays as it is.
std::string dollar_placeholders(const std::string& sql) {
  std::string text = sql;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9') {
      text[i] = '$';
    }
  }
  return text;
}

SqlFailure failure_of(const std::string& sqlstate) {
  if (sqlstate == "23505") return SqlFailure::Duplicate;
  if (sqlstate == "23503") return SqlFailure::MissingReference;
  if (sqlstate == "40001" || sqlstate == "40P01") return SqlFailure::Conflict;
  return SqlFailure::Other;
}

template <class Call>
auto classified(Call&& call) {
  try {
    return call();
  } catch (const PgError& error) {
    throw SqlError(error.what(), failure_of(error.sqlstate));
  }
}

// Every result in binary: the large reads are not parsed from text.
class PgStatement final : public SqlStatement {
 public:
  PgStatement(PgConnection& connection, const std::string& sql)
      : connection_(connection), sql_(dollar_placeholders(sql)) {}

  bool next() override {
    if (!result_) {
      PgParams params;
      for (const auto& value : values_) value ? params.add(*value) : params.add_null();
      result_.emplace(classified([&] { return connection_.query_binary(sql_, params); }));
      row_ = -1;
    }
    if (row_ < result_->rows()) ++row_;
    return row_ < result_->rows();
  }
  void reset() override { result_.reset(); }

  bool is_null(int column) const override { return result_->is_null(row_, column); }
  std::int64_t integer(int column) const override {
    switch (result_->type(column)) {
      case kInt8: return result_->binary_int8(row_, column);
      case kInt4: return result_->binary_int4(row_, column);
      case kBool: return raw(column)[0] != 0;
      case kFloat8: return static_cast<std::int64_t>(result_->binary_float8(row_, column));
      default: return std::strtoll(text(column).c_str(), nullptr, 10);
    }
  }
  double real(int column) const override {
    if (result_->type(column) == kFloat8) return result_->binary_float8(row_, column);
    return static_cast<double>(integer(column));
  }
  std::string text(int column) const override {
    switch (result_->type(column)) {
      case kInt8:
      case kInt4:
      case kBool: return std::to_string(integer(column));
      case kFloat8: {
        char buffer[32];
        const auto end = std::to_chars(buffer, buffer + sizeof buffer, real(column)).ptr;
        return std::string(buffer, end);
      }
      case kJsonb: return raw(column).substr(1);  // after the format version byte
      default: return raw(column);
    }
  }
  std::optional<std::string> non_number(int column) const override {
    if (is_null(column)) return "NULL";
    if (result_->type(column) == kFloat8 || result_->type(column) == kInt8 || result_->type(column) == kInt4) {
      return std::nullopt;
    }
    return "the text '" + raw(column).substr(0, 40) + "'";
  }

 protected:
  void bind_integer(int index, std::int64_t value) override { set(index, std::to_string(value)); }
  void bind_real(int index, double value) override {
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
    set(index, std::string(buffer, end));
  }
  void bind_text(int index, std::string_view text) override { set(index, std::string(text)); }
  void bind_null(int index) override { set(index, std::nullopt); }

 private:
  void set(int index, std::optional<std::string> value) {
    if (values_.size() < static_cast<std::size_t>(index)) values_.resize(index);
    values_[index - 1] = std::move(value);
    result_.reset();
  }
  std::string raw(int column) const { return result_->text(row_, column); }

  PgConnection& connection_;
  std::string sql_;
  std::vector<std::optional<std::string>> values_;
  std::optional<PgResult> result_;
  int row_ = -1;
};

class PgDriver final : public SqlDriver {
 public:
  explicit PgDriver(const std::string& url) : connection_(url, url) {}
  std::unique_ptr<SqlStatement> prepare(const std::string& sql) override {
    return std::make_unique<PgStatement>(connection_, sql);
  }
  void execute(const std::string& sql) override {
    classified([&] { connection_.execute(sql); });
  }
  bool has_table(const std::string& name) override {
    auto query = prepare("SELECT to_regclass(?1) IS NOT NULL");
    query->bind(1, name);
    return query->next() && query->integer(0) != 0;
  }
  void begin() override { execute("BEGIN"); }
  void commit() override { execute("COMMIT"); }
  void rollback() noexcept override { connection_.rollback_quietly(); }

 private:
  PgConnection connection_;
};

// A PostgreSQL array literal of numbers: one parameter for a whole repeat.
template <class Number>
std::string pg_array_literal(const std::vector<ResultInsert>& rows, Number ResultInsert::*member) {
  std::string text = "{";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i) text += ',';
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, rows[i].*member).ptr;
    text.append(buffer, end);
  }
  text += '}';
  return text;
}

class PostgresDialect final : public SqlDialect {
 public:
  bool concurrent_writers() const override { return true; }
  std::string lock_clause() const override { return " FOR UPDATE"; }
  std::string glob_match(const std::string& expression, const std::string& placeholder) const override {
    return expression + " ~ " + placeholder;
  }
  std::string glob_parameter(const std::string& glob) const override { return glob_to_regex(glob); }
  std::string json_member(const std::string& column, const std::vector<std::string>& path) const override {
    std::string members;
    for (const auto& member : path) members += (members.empty() ? "" : ",") + member;
    return "(" + column + "::jsonb #>> '{" + members + "}')";
  }
  std::string fingerprint_sut_class() const override {
    return std::string("COALESCE(s.fingerprint::jsonb ->> '") + sysinfo::fingerprint_key::kSutClass + "', '')";
  }

  void lock_session_numbers(SqlDriver& driver, std::int64_t sut_id, std::int64_t swprofile_id) const override {
    driver.prepare("SELECT pg_advisory_xact_lock(?1::integer, ?2::integer)")
        ->bind(1, static_cast<std::int64_t>(static_cast<std::int32_t>(sut_id)))
        .bind(2, static_cast<std::int64_t>(static_cast<std::int32_t>(swprofile_id)))
        .run();
  }

  // Every row in one statement: one round trip to the server.
  void insert_results(SqlDriver& driver, std::int64_t session, const std::vector<ResultInsert>& rows) const override {
    if (rows.empty()) return;
    driver
        .prepare(R"sql(
          INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at)
          SELECT ?1, u.class_id, u.repeat, u.value, u.recorded_at
          FROM unnest(?2::bigint[], ?3::integer[], ?4::double precision[], ?5::bigint[])
            AS u(class_id, repeat, value, recorded_at))sql")
        ->bind(1, session)
        .bind(2, pg_array_literal(rows, &ResultInsert::resultclass_id))
        .bind(3, pg_array_literal(rows, &ResultInsert::repeat))
        .bind(4, pg_array_literal(rows, &ResultInsert::value))
        .bind(5, pg_array_literal(rows, &ResultInsert::recorded_at))
        .run();
  }

  void set_fingerprint_members(SqlDriver& driver, std::int64_t session, const nlohmann::json& members) const override {
    auto current = driver.prepare("SELECT fingerprint FROM session WHERE id = ?1");
    current->bind(1, session);
    if (!current->next()) return;
    auto fingerprint = nlohmann::json::parse(current->text(0), nullptr, /*allow_exceptions=*/false);
    if (!fingerprint.is_object()) fingerprint = nlohmann::json::object();
    if (members.is_object()) {
      for (const auto& [key, value] : members.items()) fingerprint[key] = value;
    }
    driver.prepare("UPDATE session SET fingerprint = ?2 WHERE id = ?1")->bind(1, session).bind(2, fingerprint.dump()).run();
  }

  // A session adds thousands of result rows at once; until autovacuum gets
  // to them the planner's statistics describe the store before it, and a
  // compare right after a run (the usual case) picks plans for empty tables:
  // 6 s instead of 2 s on bench/compare-speed's store. ANALYZE reads a fixed
  // sample (about 0.1 s); a role that does not own the tables is skipped by
  // the server with a warning, which is not for users.
  void refresh_statistics(SqlDriver& driver) const override {
    driver.execute("SET client_min_messages = error; ANALYZE session, resultclass, result; "
                   "SET client_min_messages = warning");
  }

  // PostgreSQL enforces the foreign keys and checks its pages itself; what
  // it cannot refuse is a repeat with fewer samples than its benchmark's
  // other repeats in the session, which a partial write would leave.
  std::vector<std::string> integrity_problems(SqlDriver& driver) const override {
    std::vector<std::string> problems;
    auto rows = driver.prepare(R"sql(
      WITH per_repeat AS (
        SELECT r.session_id, rc.benchmark_id, r.repeat, COUNT(*) AS samples
        FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id
        GROUP BY r.session_id, rc.benchmark_id, r.repeat)
      SELECT p.session_id, b.name, p.repeat, p.samples, m.most
      FROM per_repeat p JOIN benchmark b ON b.id = p.benchmark_id
      JOIN (SELECT session_id, benchmark_id, MAX(samples) AS most FROM per_repeat GROUP BY session_id, benchmark_id) m
        ON m.session_id = p.session_id AND m.benchmark_id = p.benchmark_id
      WHERE p.samples < m.most ORDER BY p.session_id, b.name, p.repeat)sql");
    while (rows->next()) {
      problems.push_back("session " + rows->text(0) + " " + rows->text(1) + " repeat " + rows->text(2) + " has " +
                         rows->text(3) + " samples, other repeats " + rows->text(4));
    }
    return problems;
  }
};

// Two controllers starting on a new database at once: the first creates (or
// migrates) under the lock, the second then finds it done. The lock is the
// session's, taken before BEGIN: a transaction that starts after the other
// writer's commit sees its tables (PostgreSQL refreshes its catalog caches at
// transaction start, not when an advisory lock is granted).
void create_or_migrate_locked(SqlDriver& driver, const std::string& url) {
  auto advisory = [&](const char* function) {
    driver.prepare(std::string("SELECT ") + function + "(?1)")->bind(1, kSchemaLockKey).run();
  };
  advisory("pg_advisory_lock");
  try {
    SqlTransaction transaction(driver);
    DriverSchemaConnection schema(driver);
    // Under the lock: another writer may have done it meanwhile.
    const auto stored = schema.meta("schema_version");
    if (!stored || checked_schema_version(url, stored) != kSchemaVersion) {
      create_or_migrate(schema, postgres_dialect(), url, utc_now_iso8601());
    }
    transaction.commit();
  } catch (...) {
    driver.rollback();
    advisory("pg_advisory_unlock");
    throw;
  }
  advisory("pg_advisory_unlock");
}

}  // namespace

bool postgres_store_present(const std::string& url) {
  PgDriver driver(url);
  return DriverSchemaConnection(driver).meta("schema_version").has_value();
}

std::unique_ptr<ResultStore> open_postgres_store(const std::string& url, OpenMode mode) {
  auto driver = std::make_unique<PgDriver>(url);
  const auto stored = DriverSchemaConnection(*driver).meta("schema_version");
  if (!stored && mode != OpenMode::CreateIfMissing) {
    throw InputError("store " + url +
                     ": the database has no kbench tables; expected a store written by `kbench run` "
                     "(see --store / KBENCH_STORE)");
  }
  const int found = stored ? checked_schema_version(url, stored) : 0;
  const bool writable = mode != OpenMode::ReadOnly;
  if (!writable) {
    if (found != kSchemaVersion) {
      throw InputError("store " + url + " has schema version " + std::to_string(found) +
                       "; a writing command (kbench run) migrates it to " + std::to_string(kSchemaVersion) +
                       " first");
    }
    // Nothing this connection does can write, whatever a bug might try.
    driver->execute("SET default_transaction_read_only = on");
  } else if (found != kSchemaVersion) {
    create_or_migrate_locked(*driver, url);
  }
  return make_sql_store(url, std::move(driver), std::make_unique<PostgresDialect>(), writable, kSchemaVersion);
}

}  // namespace kbench::store
