// The SQLite resultstore: the SQL store (store/sql_store.h) over SQLite,
// with the file checks, pragmas and WAL of docs/resultstore.md.
#include "store/sqlite_store.h"

#include <filesystem>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/utc_time.h"
#include "store/schema.h"
#include "store/sql_store.h"
#include "store/sqlite_file.h"
#include "store/sqlite_statement.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::store {

namespace {

namespace fs = std::filesystem;

// Idle prepared statements by SQL text: preparing costs more than running
// most of kbench's statements.
using StatementCache = std::unordered_map<std::string, std::vector<std::unique_ptr<Statement>>>;

// A statement borrowed from the cache, given back when done.
class SqliteStatement final : public SqlStatement {
 public:
  SqliteStatement(std::unique_ptr<Statement> statement, std::vector<std::unique_ptr<Statement>>& idle)
      : statement_(std::move(statement)), idle_(idle) {}
  ~SqliteStatement() override {
    statement_->reset();
    idle_.push_back(std::move(statement_));
  }

  bool next() override {
    if (done_) return false;
    started_ = true;
    try {
      done_ = !statement_->step();
    } catch (const RunError& error) {
      done_ = true;
      const int code = statement_->last_error();
      if (code == SQLITE_CONSTRAINT_PRIMARYKEY || code == SQLITE_CONSTRAINT_UNIQUE) {
        throw SqlError(error.what(), SqlFailure::Duplicate);
      }
      if (code == SQLITE_CONSTRAINT_FOREIGNKEY) throw SqlError(error.what(), SqlFailure::MissingReference);
      throw;
    }
    return !done_;
  }
  void reset() override {
    statement_->reset();
    started_ = done_ = false;
  }

  bool is_null(int column) const override { return statement_->is_null(column); }
  std::int64_t integer(int column) const override { return statement_->integer(column); }
  double real(int column) const override { return statement_->real(column); }
  std::string text(int column) const override { return statement_->text(column); }
  std::optional<std::string> non_number(int column) const override {
    const int type = statement_->type(column);
    if (type == SQLITE_FLOAT || type == SQLITE_INTEGER) return std::nullopt;
    if (type == SQLITE_BLOB) return "a blob of " + std::to_string(statement_->bytes(column)) + " bytes";
    if (type != SQLITE_TEXT) return "NULL";
    std::string text = statement_->text(column).substr(0, 40);
    for (char& c : text) c = static_cast<unsigned char>(c) < 0x20 ? '?' : c;  // the message stays one line
    return "the text '" + text + "'";
  }

 protected:
  void bind_integer(int index, std::int64_t value) override { rebinding().bind(index, value); }
  void bind_real(int index, double value) override { rebinding().bind(index, value); }
  void bind_text(int index, std::string_view text) override { rebinding().bind(index, text); }
  void bind_null(int index) override { rebinding().bind_null(index); }

 private:
  Statement& rebinding() {
    if (started_) reset();
    return *statement_;
  }

  std::unique_ptr<Statement> statement_;
  std::vector<std::unique_ptr<Statement>>& idle_;
  bool started_ = false;
  bool done_ = false;
};

class SqliteDriver final : public SqlDriver {
 public:
  SqliteDriver(Connection connection, std::string url) : connection_(std::move(connection)), url_(std::move(url)) {}
  std::unique_ptr<SqlStatement> prepare(const std::string& sql) override {
    auto& idle = cache_[sql];
    std::unique_ptr<Statement> statement;
    if (idle.empty()) {
      statement = std::make_unique<Statement>(db(), url_, sql);
    } else {
      statement = std::move(idle.back());
      idle.pop_back();
    }
    return std::make_unique<SqliteStatement>(std::move(statement), idle);
  }
  void execute(const std::string& sql) override { exec(db(), url_, sql.c_str()); }
  bool has_table(const std::string& name) override {
    auto query = prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
    query->bind(1, name);
    return query->next();
  }
  // IMMEDIATE: the write lock at once (waiting for it as long as the busy
  // timeout), so a transaction never fails half-way for another's lock.
  void begin() override { execute("BEGIN IMMEDIATE"); }
  void commit() override { execute("COMMIT"); }
  void rollback() noexcept override {
    if (!sqlite3_get_autocommit(db())) sqlite3_exec(db(), "ROLLBACK", nullptr, nullptr, nullptr);
  }

  sqlite3* db() const { return connection_.get(); }

 private:
  Connection connection_;
  std::string url_;
  StatementCache cache_;  // after connection_: finalized before the connection closes
};

constexpr std::size_t kInsertBatch = 32;

class SqliteDialect final : public SqlDialect {
 public:
  bool concurrent_writers() const override { return false; }
  std::string lock_clause() const override { return ""; }
  std::string glob_match(const std::string& expression, const std::string& placeholder) const override {
    return expression + " GLOB " + placeholder;
  }
  std::string glob_parameter(const std::string& glob) const override { return glob; }
  std::string json_member(const std::string& column, const std::vector<std::string>& path) const override {
    std::string json_path = "$";
    for (const auto& member : path) json_path += "." + member;
    return "json_extract(" + column + ", '" + json_path + "')";
  }
  std::string fingerprint_sut_class() const override {
    const std::string path = std::string("'$.") + sysinfo::fingerprint_key::kSutClass + "'";
    return "CASE WHEN json_valid(s.fingerprint) AND json_type(s.fingerprint, " + path + ") = 'text' "
           "THEN json_extract(s.fingerprint, " + path + ") ELSE '' END";
  }
  void lock_session_numbers(SqlDriver&, std::int64_t, std::int64_t) const override {
    // BEGIN IMMEDIATE made this the only writer.
  }

  // kInsertBatch rows a statement: one statement execution per row is most
  // of SQLite's cost of an insert.
  void insert_results(SqlDriver& driver, std::int64_t session, const std::vector<ResultInsert>& rows) const override {
    std::size_t next = 0;
    if (rows.size() >= kInsertBatch) {
      auto batch = driver.prepare(batch_sql());
      batch->bind(1, session);
      for (; next + kInsertBatch <= rows.size(); next += kInsertBatch) {
        for (std::size_t i = 0; i < kInsertBatch; ++i) bind_row(*batch, static_cast<int>(2 + 4 * i), rows[next + i]);
        batch->run();
      }
    }
    if (next == rows.size()) return;
    auto single = driver.prepare(
        "INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5)");
    single->bind(1, session);
    for (; next < rows.size(); ++next) {
      bind_row(*single, 2, rows[next]);
      single->run();
    }
  }

  // json_set keeps the fingerprint's text as it is but for these members.
  void set_fingerprint_members(SqlDriver& driver, std::int64_t session, const nlohmann::json& members) const override {
    if (!members.is_object()) return;
    auto set = driver.prepare("UPDATE session SET fingerprint = json_set(fingerprint, ?2, json(?3)) WHERE id = ?1");
    for (const auto& [key, value] : members.items()) {
      // The key is a JSON path member: quoted, so no character of it is syntax.
      set->bind(1, session).bind(2, "$." + nlohmann::json(key).dump()).bind(3, value.dump()).run();
    }
  }

  void refresh_statistics(SqlDriver&) const override {}

  std::vector<std::string> integrity_problems(SqlDriver& driver) const override {
    std::vector<std::string> problems;
    auto integrity = driver.prepare("PRAGMA integrity_check");
    while (integrity->next()) {
      std::string line = integrity->text(0);
      if (line != "ok") problems.push_back(std::move(line));
    }
    auto foreign_keys = driver.prepare("PRAGMA foreign_key_check");
    while (foreign_keys->next()) {
      problems.push_back("table " + foreign_keys->text(0) +
                         (foreign_keys->is_null(1) ? std::string() : " row " + foreign_keys->text(1)) +
                         " refers to a missing row of table " + foreign_keys->text(2));
    }
    return problems;
  }

 private:
  static std::string batch_sql() {
    std::string sql = "INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at) VALUES ";
    for (std::size_t i = 0; i < kInsertBatch; ++i) {
      if (i) sql += ", ";
      sql += "(?1, " + sql_placeholders(4, static_cast<int>(2 + 4 * i)) + ")";
    }
    return sql;
  }
  static void bind_row(SqlStatement& statement, int first, const ResultInsert& row) {
    statement.bind(first, row.resultclass_id)
        .bind(first + 1, row.repeat)
        .bind(first + 2, row.value)
        .bind(first + 3, row.recorded_at);
  }
};

void verify_written_version(SqlDriver& driver, const std::string& url) {
  auto query = driver.prepare("SELECT value FROM kbench_meta WHERE key = 'schema_version'");
  const std::string version = query->next() ? query->text(0) : "";
  if (version != std::to_string(kSchemaVersion)) {
    // Inspection accepted it, so only a concurrent writer of another
    // version gets here; refuse rather than mix schemas.
    throw InputError("store " + url + " has schema version '" + version + "', but this kbench writes version " +
                     std::to_string(kSchemaVersion));
  }
}

}  // namespace

std::unique_ptr<ResultStore> open_sqlite_store(const std::string& url, const std::string& path,
                                               OpenMode mode) {
  const FileInspection inspection = inspect_store_file(url, path);
  const FileState state = inspection.state;
  if (state != FileState::KbenchStore && mode != OpenMode::CreateIfMissing) {
    throw InputError("store " + url + ": " +
                     (state == FileState::Missing ? path + " does not exist"
                                                  : path + " is an empty file, not a kbench store") +
                     "; expected a store written by `kbench run` (see --store / KBENCH_STORE)");
  }
  const bool writable = mode != OpenMode::ReadOnly;
  if (writable && state == FileState::Missing) {
    const fs::path parent = fs::path(path).parent_path();
    std::error_code error;
    if (!parent.empty()) fs::create_directories(parent, error);
    if (error) {
      throw InputError("store " + url + ": cannot create directory " + parent.string() + ": " + error.message());
    }
  }
  auto driver = std::make_unique<SqliteDriver>(
      writable ? open_read_write(url, path, state != FileState::KbenchStore) : open_read_only(url, path), url);
  driver->execute("PRAGMA foreign_keys = ON");
  // Ingest and compare touch every page of large stores; SQLite's 2 MiB
  // default cache makes them re-read pages from the kernel.
  driver->execute("PRAGMA cache_size = -65536");
  int version = inspection.schema_version;
  if (writable) {
    // FULL: a committed repeat survives a power cut too, not only a kill -9;
    // one fsync per repeat is cheap next to the repeat itself.
    driver->execute("PRAGMA synchronous = FULL");
    if (version != kSchemaVersion) {
      // The schema (or the migration) and its version appear together or not
      // at all: a run killed here leaves an empty file, which the next run
      // initialises, or the old version, which the next run migrates.
      SqlTransaction transaction(*driver);
      DriverSchemaConnection schema(*driver);
      create_or_migrate(schema, sqlite_dialect(), url, utc_now_iso8601());
      transaction.commit();
    }
    // WAL after the schema exists, so the file never holds a WAL header
    // without kbench's tables. Readers (kbench list/compare) then never block
    // a running kbench run, and it stays a no-op on later opens.
    sqlite3_exec(driver->db(), "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    verify_written_version(*driver, url);
    version = kSchemaVersion;
  }
  return make_sql_store(url, std::move(driver), std::make_unique<SqliteDialect>(), writable, version);
}

}  // namespace kbench::store
