// The SQLite resultstore (docs/resultstore.md describes URLs, schema,
// versioning and transactions).
#include "store/sqlite_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "common/errors.h"

namespace kbench::store {

namespace {

namespace fs = std::filesystem;

constexpr int kBusyTimeoutMs = 30000;
constexpr std::size_t kInsertBatch = 32;
constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

// Version 1. Any change to these statements is a new kSchemaVersion.
constexpr const char* kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS kbench_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sut (
  id           INTEGER PRIMARY KEY,
  name         TEXT NOT NULL,
  hostname     TEXT NOT NULL,
  arch         TEXT NOT NULL,
  cpu_model    TEXT NOT NULL,
  cpu_count    INTEGER NOT NULL,
  memory_gib   INTEGER NOT NULL,
  product_name TEXT NOT NULL,
  UNIQUE (name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
);
CREATE TABLE IF NOT EXISTS swprofile (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS session (
  id             INTEGER PRIMARY KEY,
  sut_id         INTEGER NOT NULL REFERENCES sut(id),
  swprofile_id   INTEGER NOT NULL REFERENCES swprofile(id),
  idx            INTEGER NOT NULL CHECK (idx >= 0),
  started_at     TEXT NOT NULL,
  kernel_release TEXT NOT NULL,
  fingerprint    TEXT NOT NULL,
  UNIQUE (sut_id, swprofile_id, idx)
);
CREATE INDEX IF NOT EXISTS session_by_swprofile ON session(swprofile_id);
CREATE TABLE IF NOT EXISTS benchmark (
  id     INTEGER PRIMARY KEY,
  name   TEXT NOT NULL,
  params TEXT NOT NULL,
  UNIQUE (name, params)
);
CREATE TABLE IF NOT EXISTS resultclass (
  id           INTEGER PRIMARY KEY,
  benchmark_id INTEGER NOT NULL REFERENCES benchmark(id),
  name         TEXT NOT NULL,
  unit         TEXT NOT NULL,
  better       TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
  UNIQUE (benchmark_id, name, unit)
);
CREATE TABLE IF NOT EXISTS result (
  session_id     INTEGER NOT NULL REFERENCES session(id),
  resultclass_id INTEGER NOT NULL REFERENCES resultclass(id),
  repeat         INTEGER NOT NULL CHECK (repeat >= 0),
  value          REAL NOT NULL,
  recorded_at    INTEGER NOT NULL,
  PRIMARY KEY (session_id, resultclass_id, repeat)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outcome (
  session_id   INTEGER NOT NULL REFERENCES session(id),
  benchmark_id INTEGER NOT NULL REFERENCES benchmark(id),
  status       TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'failed')),
  reason       TEXT NOT NULL,
  stderr_tail  TEXT NOT NULL,
  recorded_at  INTEGER NOT NULL,
  PRIMARY KEY (session_id, benchmark_id)
) WITHOUT ROWID;
)sql";

// Failures of an operation that should have worked (disk full, lock held
// for longer than the busy timeout, ...): RunError naming the store.
[[noreturn]] void fail(sqlite3* db, const std::string& location, const std::string& what) {
  std::string message = "store " + location + ": " + what;
  if (db) {
    message += ": ";
    message += sqlite3_errmsg(db);
    if (sqlite3_errcode(db) == SQLITE_BUSY) message += " (another kbench holds the store locked)";
  }
  throw RunError(message);
}

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, const std::string& location, const std::string& sql)
      : db_(db), location_(&location) {
    if (sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt_, nullptr) != SQLITE_OK) {
      fail(db, location, "preparing '" + sql + "'");
    }
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept { *this = std::move(other); }
  Statement& operator=(Statement&& other) noexcept {
    std::swap(db_, other.db_);
    std::swap(stmt_, other.stmt_);
    std::swap(location_, other.location_);
    return *this;
  }
  ~Statement() { sqlite3_finalize(stmt_); }

  // Keeps bindings: callers rebind only what changes between executions.
  Statement& reset() {
    sqlite3_reset(stmt_);
    return *this;
  }
  Statement& bind(int index, std::int64_t value) {
    check(sqlite3_bind_int64(stmt_, index, value));
    return *this;
  }
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value) {
    check(sqlite3_bind_double(stmt_, index, value));
    return *this;
  }
  Statement& bind(int index, std::string_view text) {
    check(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }

  // True while there is a row; false when done; throws on an error (the
  // statement is reset so the transaction can be rolled back cleanly).
  bool step() {
    last_error_ = SQLITE_OK;
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    last_error_ = sqlite3_extended_errcode(db_);
    std::string sql = sqlite3_sql(stmt_);
    sqlite3_reset(stmt_);
    fail(db_, *location_, "executing '" + first_line(sql) + "'");
  }
  // For statements that return nothing (or whose rows are not needed).
  void run() {
    while (step()) {
    }
  }
  int last_error() const { return last_error_; }

  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string text(int column) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
                : std::string();
  }

 private:
  static std::string first_line(const std::string& sql) {
    const auto start = sql.find_first_not_of(" \n");
    const auto end = sql.find('\n', start == std::string::npos ? 0 : start);
    return sql.substr(start == std::string::npos ? 0 : start, end == std::string::npos ? end : end - start);
  }
  void check(int rc) {
    if (rc != SQLITE_OK) fail(db_, *location_, "binding a parameter");
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  const std::string* location_ = nullptr;
  int last_error_ = SQLITE_OK;
};

void exec(sqlite3* db, const std::string& location, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw RunError("store " + location + ": executing '" + sql + "': " + message);
  }
}

std::string canonical_params(const Params& params) {
  // std::map iterates sorted, so equal parameter sets give equal text.
  return nlohmann::json(params).dump();
}

Params params_from_text(const std::string& text) {
  Params params;
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return params;
  for (const auto& [key, value] : json.items()) {
    params[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return params;
}

Better better_from_text(const std::string& text) {
  return parse_better(text).value_or(Better::Lower);
}

std::string kernel_release_of(const nlohmann::json& fingerprint) {
  if (!fingerprint.is_object()) return "";
  if (auto it = fingerprint.find("kernel_release"); it != fingerprint.end() && it->is_string()) {
    return it->get<std::string>();
  }
  if (auto kernel = fingerprint.find("kernel"); kernel != fingerprint.end() && kernel->is_object()) {
    if (auto it = kernel->find("release"); it != kernel->end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string glob_or_all(const std::string& glob) { return glob.empty() ? "*" : glob; }

// "?,?,?" for an IN list of `count` values starting at placeholder `first`.
std::string placeholders(std::size_t count, int first) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) text += ',';
    text += '?' + std::to_string(first + static_cast<int>(i));
  }
  return text;
}

// --- inspecting a file before anything is written to it --------------------

enum class FileState { Missing, Empty, KbenchStore };

// Never writes: the header is read with plain I/O and the SQLite part opens
// the file read-only, so a file that is not a kbench store stays untouched.
FileState inspect(const std::string& url, const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return FileState::Missing;
    throw InputError("store " + url + ": cannot access " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    throw InputError("store " + url + ": " + path + " is not a regular file; expected a kbench store");
  }
  if (info.st_size == 0) return FileState::Empty;

  std::ifstream file(path, std::ios::binary);
  char header[sizeof kSqliteMagic] = {};
  if (!file) throw InputError("store " + url + ": cannot read " + path + ": " + std::strerror(errno));
  file.read(header, sizeof header);
  if (file.gcount() != sizeof header || std::memcmp(header, kSqliteMagic, sizeof header) != 0) {
    throw InputError("store " + url + ": " + path + " is not a kbench store (not an SQLite database)");
  }
  file.close();

  sqlite3* db = nullptr;
  const int open_rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> guard(db, &sqlite3_close);
  if (open_rc != SQLITE_OK) {
    throw InputError("store " + url + ": cannot open " + path + ": " +
                     (db ? sqlite3_errmsg(db) : sqlite3_errstr(open_rc)));
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  std::string version_text;
  bool has_meta = false;
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kbench_meta'",
                                -1, &stmt, nullptr);
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(stmt);
      has_meta = rc == SQLITE_ROW;
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      throw InputError("store " + url + ": " + path + " is not a kbench store (unreadable SQLite database: " +
                       sqlite3_errmsg(db) + ")");
    }
  }
  if (!has_meta) {
    throw InputError("store " + url + ": " + path +
                     " is not a kbench store (an SQLite database without kbench's kbench_meta table)");
  }
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "SELECT value FROM kbench_meta WHERE key = 'schema_version'", -1, &stmt,
                                nullptr);
    if (rc == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      version_text = text ? text : "";
    }
    sqlite3_finalize(stmt);
  }
  int version = 0;
  try {
    std::size_t used = 0;
    version = std::stoi(version_text, &used);
    if (used != version_text.size()) version = 0;
  } catch (const std::exception&) {
    version = 0;
  }
  if (version < 1) {
    throw InputError("store " + url + ": " + path + " is not a kbench store (schema_version '" + version_text +
                     "' in kbench_meta is not a positive integer)");
  }
  if (version > kSchemaVersion) {
    throw InputError("store " + url + " has schema version " + std::to_string(version) +
                     ", but this kbench reads schema version " + std::to_string(kSchemaVersion) +
                     " and older; use a newer kbench (the store was not changed)");
  }
  return FileState::KbenchStore;
}

// --- the store ---------------------------------------------------------------

class SqliteStore final : public ResultStore {
 public:
  SqliteStore(std::string url, sqlite3* db) : url_(std::move(url)), db_(db) {}
  ~SqliteStore() override { sqlite3_close_v2(db_); }

  void initialise(bool create_schema) {
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    exec(db_, url_, "PRAGMA foreign_keys = ON");
    // FULL: a committed repeat survives a power cut too, not only a kill -9;
    // one fsync per repeat is cheap next to the repeat itself.
    exec(db_, url_, "PRAGMA synchronous = FULL");
    // Ingest and compare touch every page of large stores; SQLite's 2 MiB
    // default cache makes them re-read pages from the kernel.
    exec(db_, url_, "PRAGMA cache_size = -65536");
    if (create_schema) {
      // The schema and its version appear together or not at all: a run killed
      // here leaves an empty file, which the next run initialises.
      exec(db_, url_, "BEGIN IMMEDIATE");
      try {
        exec(db_, url_, kSchemaSql);
        Statement meta(db_, url_, "INSERT OR IGNORE INTO kbench_meta(key, value) VALUES (?1, ?2)");
        meta.bind(1, "schema_version").bind(2, std::to_string(kSchemaVersion)).run();
        meta.reset().bind(1, "created_at").bind(2, utc_now_iso8601()).run();
        exec(db_, url_, "COMMIT");
      } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
      }
    }
    // WAL after the schema exists, so the file never holds a WAL header
    // without kbench's tables. Readers (kbench list/compare) then never block
    // a running kbench run, and it stays a no-op on later opens.
    sqlite3_exec(db_, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    verify_version();
    prepare();
  }

  std::int64_t begin_session(const SessionStart& start) override {
    Sut sut = start.sut;
    if (sut.name.empty()) sut.name = sut.hostname;
    if (sut.name.empty()) throw InputError("new session: the SUT has neither a name nor a hostname");
    if (start.swprofile.empty()) throw InputError("new session: the swprofile name is empty");
    return in_transaction([&] {
      upsert_sut_.reset()
          .bind(1, sut.name)
          .bind(2, sut.hostname)
          .bind(3, sut.arch)
          .bind(4, sut.cpu_model)
          .bind(5, sut.cpu_count)
          .bind(6, sut.memory_gib)
          .bind(7, sut.product_name);
      if (!upsert_sut_.step()) fail(db_, url_, "storing the SUT");
      const std::int64_t sut_id = upsert_sut_.integer(0);
      upsert_sut_.reset();

      upsert_swprofile_.reset().bind(1, start.swprofile);
      if (!upsert_swprofile_.step()) fail(db_, url_, "storing the swprofile");
      const std::int64_t swprofile_id = upsert_swprofile_.integer(0);
      upsert_swprofile_.reset();

      insert_session_.reset()
          .bind(1, sut_id)
          .bind(2, swprofile_id)
          .bind(3, start.started_at.empty() ? utc_now_iso8601() : start.started_at)
          .bind(4, kernel_release_of(start.fingerprint))
          .bind(5, start.fingerprint.is_null() ? std::string("{}") : start.fingerprint.dump());
      if (!insert_session_.step()) fail(db_, url_, "creating the session");
      const std::int64_t session = insert_session_.integer(0);
      insert_session_.reset();
      return session;
    });
  }

  void add_repeat(std::int64_t session, const BenchmarkKey& benchmark, int repeat,
                  const std::vector<records::Sample>& samples) override {
    if (repeat < 0) {
      throw RunError("store " + url_ + ": " + benchmark.name + ": repeat " + std::to_string(repeat) +
                     " is negative");
    }
    in_transaction([&] {
      require_session(session);
      const std::int64_t benchmark_id = benchmark_id_for(benchmark);
      auto& known = resultclass_ids_[benchmark_id];
      class_ids_.clear();
      for (std::size_t position = 0; position < samples.size(); ++position) {
        const auto& sample = samples[position];
        if (!std::isfinite(sample.value)) {
          throw RunError(benchmark.name + " repeat " + std::to_string(repeat) + ": " +
                         sample.result_class.label() + " is not a finite number; repeat not stored");
        }
        class_ids_.push_back(resultclass_id_for(known, position, benchmark_id, benchmark.name, sample.result_class));
      }
      const auto recorded_at = static_cast<std::int64_t>(std::time(nullptr));
      try {
        // Rows go in batches of kInsertBatch per statement: one statement
        // execution per sample is most of SQLite's cost of an insert.
        std::size_t next = 0;
        insert_results_.reset().bind(1, session).bind(2, repeat).bind(3, recorded_at);
        for (; next + kInsertBatch <= samples.size(); next += kInsertBatch) {
          insert_results_.reset();
          for (std::size_t i = 0; i < kInsertBatch; ++i) {
            insert_results_.bind(static_cast<int>(4 + 2 * i), class_ids_[next + i]);
            insert_results_.bind(static_cast<int>(5 + 2 * i), samples[next + i].value);
          }
          insert_results_.run();
        }
        insert_result_.reset().bind(1, session).bind(3, repeat).bind(5, recorded_at);
        for (; next < samples.size(); ++next) {
          insert_result_.reset().bind(2, class_ids_[next]).bind(4, samples[next].value);
          insert_result_.run();
        }
      } catch (const RunError&) {
        if (insert_results_.last_error() == SQLITE_CONSTRAINT_PRIMARYKEY ||
            insert_result_.last_error() == SQLITE_CONSTRAINT_PRIMARYKEY) {
          throw RunError("store " + url_ + ": " + benchmark.name + " repeat " + std::to_string(repeat) +
                         " of session " + std::to_string(session) + ": " + duplicate_description(samples) +
                         " (twice in one repeat, or the repeat was stored before)");
        }
        throw;
      }
      return 0;
    });
  }

  // Which sample broke the primary key: only on the error path.
  std::string duplicate_description(const std::vector<records::Sample>& samples) const {
    std::unordered_map<std::int64_t, std::size_t> seen;
    for (std::size_t i = 0; i < class_ids_.size(); ++i) {
      if (!seen.emplace(class_ids_[i], i).second) return samples[i].result_class.label() + " is already stored";
    }
    return "the repeat is already stored";
  }

  void record_outcome(std::int64_t session, const BenchmarkKey& benchmark, const Outcome& outcome) override {
    in_transaction([&] {
      require_session(session);
      const std::int64_t benchmark_id = benchmark_id_for(benchmark);
      upsert_outcome_.reset()
          .bind(1, session)
          .bind(2, benchmark_id)
          .bind(3, to_string(outcome.status))
          .bind(4, outcome.reason)
          .bind(5, outcome.stderr_tail)
          .bind(6, static_cast<std::int64_t>(std::time(nullptr)))
          .run();
      return 0;
    });
  }

  std::vector<SutListing> list_suts(const std::string& glob) override {
    Statement query(db_, url_, R"sql(
      SELECT t.name, t.hostname, t.arch, t.cpu_model, t.cpu_count, t.memory_gib, t.product_name,
             (SELECT COUNT(*) FROM session s WHERE s.sut_id = t.id)
      FROM sut t WHERE t.name GLOB ?1 ORDER BY t.name, t.id)sql");
    query.bind(1, glob_or_all(glob));
    std::vector<SutListing> listing;
    while (query.step()) {
      SutListing row;
      row.sut.name = query.text(0);
      row.sut.hostname = query.text(1);
      row.sut.arch = query.text(2);
      row.sut.cpu_model = query.text(3);
      row.sut.cpu_count = static_cast<int>(query.integer(4));
      row.sut.memory_gib = query.integer(5);
      row.sut.product_name = query.text(6);
      row.sessions = static_cast<int>(query.integer(7));
      listing.push_back(std::move(row));
    }
    return listing;
  }

  std::vector<SwprofileListing> list_swprofiles(const std::string& glob) override {
    Statement query(db_, url_, R"sql(
      SELECT p.id, p.name,
             (SELECT s.kernel_release FROM session s WHERE s.swprofile_id = p.id ORDER BY s.id DESC LIMIT 1),
             (SELECT COUNT(*) FROM session s WHERE s.swprofile_id = p.id),
             (SELECT COUNT(*) FROM session s JOIN result r ON r.session_id = s.id WHERE s.swprofile_id = p.id)
      FROM swprofile p WHERE p.name GLOB ?1 ORDER BY p.name)sql");
    Statement suts(db_, url_, R"sql(
      SELECT DISTINCT t.name FROM session s JOIN sut t ON t.id = s.sut_id
      WHERE s.swprofile_id = ?1 ORDER BY t.name)sql");
    query.bind(1, glob_or_all(glob));
    std::vector<SwprofileListing> listing;
    while (query.step()) {
      SwprofileListing row;
      row.name = query.text(1);
      row.kernel_release = query.text(2);
      row.sessions = static_cast<int>(query.integer(3));
      row.samples = query.integer(4);
      suts.reset().bind(1, query.integer(0));
      while (suts.step()) row.suts.push_back(suts.text(0));
      listing.push_back(std::move(row));
    }
    return listing;
  }

  std::vector<BenchmarkListing> list_benchmarks(const std::string& glob) override {
    // One benchmark name may have run with several parameter sets: listed
    // once, with the union of its result classes.
    Statement classes(db_, url_, R"sql(
      SELECT b.name, rc.name, rc.unit, rc.better
      FROM benchmark b LEFT JOIN resultclass rc ON rc.benchmark_id = b.id
      WHERE b.name GLOB ?1 ORDER BY b.name, rc.id)sql");
    Statement counts(db_, url_, R"sql(
      SELECT b.name, COUNT(*) FROM benchmark b
      JOIN resultclass rc ON rc.benchmark_id = b.id JOIN result r ON r.resultclass_id = rc.id
      WHERE b.name GLOB ?1 GROUP BY b.name)sql");
    classes.bind(1, glob_or_all(glob));
    counts.bind(1, glob_or_all(glob));
    std::vector<BenchmarkListing> listing;
    while (classes.step()) {
      const std::string name = classes.text(0);
      if (listing.empty() || listing.back().name != name) listing.push_back(BenchmarkListing{name, {}, 0});
      if (classes.is_null(1)) continue;
      ResultClass rc{classes.text(1), classes.text(2), better_from_text(classes.text(3))};
      auto& known = listing.back().result_classes;
      const bool seen = std::any_of(known.begin(), known.end(), [&](const ResultClass& other) {
        return other.name == rc.name && other.unit == rc.unit;
      });
      if (!seen) known.push_back(std::move(rc));
    }
    std::unordered_map<std::string, std::int64_t> samples;
    while (counts.step()) samples[counts.text(0)] = counts.integer(1);
    for (auto& row : listing) row.samples = samples[row.name];
    return listing;
  }

  std::vector<OutcomeListing> list_outcomes(const std::vector<std::string>& swprofiles,
                                            OutcomeStatus status) override {
    std::string sql = R"sql(
      SELECT t.name, p.name, s.id, b.name, o.status, o.reason, o.stderr_tail
      FROM outcome o JOIN session s ON s.id = o.session_id JOIN sut t ON t.id = s.sut_id
      JOIN swprofile p ON p.id = s.swprofile_id JOIN benchmark b ON b.id = o.benchmark_id
      WHERE o.status = ?1)sql";
    if (!swprofiles.empty()) sql += " AND p.name IN (" + placeholders(swprofiles.size(), 2) + ")";
    sql += " ORDER BY s.id, b.name, b.id";
    Statement query(db_, url_, sql);
    query.bind(1, to_string(status));
    for (std::size_t i = 0; i < swprofiles.size(); ++i) query.bind(static_cast<int>(i) + 2, swprofiles[i]);
    std::vector<OutcomeListing> listing;
    while (query.step()) {
      OutcomeListing row;
      row.sut = query.text(0);
      row.swprofile = query.text(1);
      row.session = query.integer(2);
      row.benchmark = query.text(3);
      row.outcome.status = parse_outcome_status(query.text(4)).value_or(OutcomeStatus::Failed);
      row.outcome.reason = query.text(5);
      row.outcome.stderr_tail = query.text(6);
      listing.push_back(std::move(row));
    }
    return listing;
  }

  bool has_swprofile(const std::string& name) override {
    Statement query(db_, url_, "SELECT 1 FROM swprofile WHERE name = ?1");
    query.bind(1, name);
    return query.step();
  }

  std::vector<SampleRow> samples(const SampleQuery& query) override {
    std::vector<SampleRow> rows;
    for_each_sample(query, [&](const SampleRow& row) { rows.push_back(row); });
    return rows;
  }

  void for_each_sample(const SampleQuery& query, const std::function<void(const SampleRow&)>& sink) override {
    // Sessions and result classes are few and small; results are many. So
    // the filters run on the small tables, and results are read per session
    // in primary-key order (result class, repeat): no join and no sort over
    // the large table, which keeps a compare of a million samples fast.
    struct SessionInfo {
      std::int64_t id;
      std::string sut, swprofile;
      int index;
    };
    struct ClassInfo {
      std::string benchmark;
      Params params;
      ResultClass result_class;
    };
    std::string session_sql = R"sql(
      SELECT s.id, t.name, p.name, s.idx FROM session s
      JOIN sut t ON t.id = s.sut_id JOIN swprofile p ON p.id = s.swprofile_id
      WHERE t.name GLOB ?1)sql";
    if (!query.swprofiles.empty()) {
      session_sql += " AND p.name IN (" + placeholders(query.swprofiles.size(), 2) + ")";
    }
    session_sql += " ORDER BY s.id";
    Statement session_query(db_, url_, session_sql);
    session_query.bind(1, glob_or_all(query.sut_glob));
    for (std::size_t i = 0; i < query.swprofiles.size(); ++i) {
      session_query.bind(static_cast<int>(i) + 2, query.swprofiles[i]);
    }
    std::vector<SessionInfo> sessions;
    while (session_query.step()) {
      sessions.push_back({session_query.integer(0), session_query.text(1), session_query.text(2),
                          static_cast<int>(session_query.integer(3))});
    }
    if (sessions.empty()) return;

    Statement class_query(db_, url_, R"sql(
      SELECT rc.id, b.name, b.params, rc.name, rc.unit, rc.better
      FROM resultclass rc JOIN benchmark b ON b.id = rc.benchmark_id
      WHERE b.name GLOB ?1 AND (rc.name || ' (' || rc.unit || ')') GLOB ?2)sql");
    class_query.bind(1, glob_or_all(query.benchmark_glob)).bind(2, glob_or_all(query.resultclass_glob));
    std::unordered_map<std::int64_t, ClassInfo> classes;
    while (class_query.step()) {
      classes.emplace(class_query.integer(0),
                      ClassInfo{class_query.text(1), params_from_text(class_query.text(2)),
                                ResultClass{class_query.text(3), class_query.text(4),
                                            better_from_text(class_query.text(5))}});
    }
    if (classes.empty()) return;

    Statement results(db_, url_,
                      "SELECT resultclass_id, repeat, value FROM result WHERE session_id = ?1 "
                      "ORDER BY resultclass_id, repeat");
    SampleRow row;
    for (const auto& session : sessions) {
      row.sut = session.sut;
      row.swprofile = session.swprofile;
      row.session = session.id;
      row.session_index = session.index;
      results.reset().bind(1, session.id);
      std::int64_t current_class = -1;
      const ClassInfo* info = nullptr;
      while (results.step()) {
        const std::int64_t class_id = results.integer(0);
        if (class_id != current_class) {
          current_class = class_id;
          const auto it = classes.find(class_id);
          info = it == classes.end() ? nullptr : &it->second;
          // Copied once per class, not per sample.
          if (info) {
            row.benchmark = info->benchmark;
            row.params = info->params;
            row.result_class = info->result_class;
          }
        }
        if (!info) continue;
        row.repeat = static_cast<int>(results.integer(1));
        row.value = results.real(2);
        sink(row);
      }
    }
  }

  std::vector<SessionListing> list_sessions(const std::vector<std::string>& swprofiles) override {
    std::string sql = R"sql(
      SELECT s.id, t.name, p.name, s.idx, s.started_at, s.kernel_release
      FROM session s JOIN sut t ON t.id = s.sut_id JOIN swprofile p ON p.id = s.swprofile_id)sql";
    if (!swprofiles.empty()) sql += " WHERE p.name IN (" + placeholders(swprofiles.size(), 1) + ")";
    sql += " ORDER BY s.id";
    Statement query(db_, url_, sql);
    for (std::size_t i = 0; i < swprofiles.size(); ++i) query.bind(static_cast<int>(i) + 1, swprofiles[i]);
    std::vector<SessionListing> listing;
    while (query.step()) {
      listing.push_back(SessionListing{query.integer(0), query.text(1), query.text(2),
                                       static_cast<int>(query.integer(3)), query.text(4), query.text(5)});
    }
    return listing;
  }

  std::vector<int> stored_repeats(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return {};
    Statement query(db_, url_, R"sql(
      SELECT DISTINCT r.repeat FROM result r JOIN resultclass rc ON rc.id = r.resultclass_id
      WHERE r.session_id = ?1 AND rc.benchmark_id = ?2 ORDER BY r.repeat)sql");
    query.bind(1, session).bind(2, *benchmark_id);
    std::vector<int> repeats;
    while (query.step()) repeats.push_back(static_cast<int>(query.integer(0)));
    return repeats;
  }

  std::optional<Outcome> outcome_of(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return std::nullopt;
    Statement query(db_, url_,
                    "SELECT status, reason, stderr_tail FROM outcome WHERE session_id = ?1 AND benchmark_id = ?2");
    query.bind(1, session).bind(2, *benchmark_id);
    if (!query.step()) return std::nullopt;
    return Outcome{parse_outcome_status(query.text(0)).value_or(OutcomeStatus::Failed), query.text(1),
                   query.text(2)};
  }

  std::optional<std::int64_t> find_plan_session(const std::string& swprofile, const std::string& plan_identity,
                                                int plan_session) override {
    Statement query(db_, url_, R"sql(
      SELECT s.id FROM session s JOIN swprofile w ON w.id = s.swprofile_id
      WHERE w.name = ?1 AND json_extract(s.fingerprint, '$.plan.identity') = ?2
        AND json_extract(s.fingerprint, '$.plan.session') = ?3
      ORDER BY s.id DESC LIMIT 1)sql");
    query.bind(1, swprofile).bind(2, plan_identity).bind(3, static_cast<std::int64_t>(plan_session));
    if (!query.step()) return std::nullopt;
    return query.integer(0);
  }

  void discard_benchmark(std::int64_t session, const BenchmarkKey& benchmark) override {
    const auto benchmark_id = find_benchmark_id(benchmark);
    if (!benchmark_id) return;
    in_transaction([&] {
      Statement results(db_, url_, R"sql(
        DELETE FROM result WHERE session_id = ?1
        AND resultclass_id IN (SELECT id FROM resultclass WHERE benchmark_id = ?2))sql");
      results.bind(1, session).bind(2, *benchmark_id).run();
      Statement outcome(db_, url_, "DELETE FROM outcome WHERE session_id = ?1 AND benchmark_id = ?2");
      outcome.bind(1, session).bind(2, *benchmark_id).run();
      return 0;
    });
  }

  std::vector<std::string> integrity_check() override {
    std::vector<std::string> problems;
    Statement integrity(db_, url_, "PRAGMA integrity_check");
    while (integrity.step()) {
      std::string line = integrity.text(0);
      if (line != "ok") problems.push_back(std::move(line));
    }
    Statement foreign_keys(db_, url_, "PRAGMA foreign_key_check");
    while (foreign_keys.step()) {
      problems.push_back("table " + foreign_keys.text(0) +
                         (foreign_keys.is_null(1) ? std::string() : " row " + foreign_keys.text(1)) +
                         " refers to a missing row of table " + foreign_keys.text(2));
    }
    return problems;
  }

  const std::string& location() const override { return url_; }

 private:
  void prepare() {
    upsert_sut_ = Statement(db_, url_, R"sql(
      INSERT INTO sut(name, hostname, arch, cpu_model, cpu_count, memory_gib, product_name)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
      ON CONFLICT DO UPDATE SET name = excluded.name RETURNING id)sql");
    upsert_swprofile_ = Statement(db_, url_, R"sql(
      INSERT INTO swprofile(name) VALUES (?1)
      ON CONFLICT DO UPDATE SET name = excluded.name RETURNING id)sql");
    insert_session_ = Statement(db_, url_, R"sql(
      INSERT INTO session(sut_id, swprofile_id, idx, started_at, kernel_release, fingerprint)
      VALUES (?1, ?2,
              (SELECT COALESCE(MAX(idx) + 1, 0) FROM session WHERE sut_id = ?1 AND swprofile_id = ?2),
              ?3, ?4, ?5)
      RETURNING id)sql");
    session_exists_ = Statement(db_, url_, "SELECT 1 FROM session WHERE id = ?1");
    find_benchmark_ = Statement(db_, url_, "SELECT id FROM benchmark WHERE name = ?1 AND params = ?2");
    upsert_benchmark_ = Statement(db_, url_, R"sql(
      INSERT INTO benchmark(name, params) VALUES (?1, ?2)
      ON CONFLICT DO UPDATE SET name = excluded.name RETURNING id)sql");
    // DO UPDATE keeps the stored direction, so RETURNING tells a conflict apart.
    upsert_resultclass_ = Statement(db_, url_, R"sql(
      INSERT INTO resultclass(benchmark_id, name, unit, better) VALUES (?1, ?2, ?3, ?4)
      ON CONFLICT DO UPDATE SET better = better RETURNING id, better)sql");
    std::string batch_sql =
        "INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at) VALUES ";
    for (std::size_t i = 0; i < kInsertBatch; ++i) {
      if (i) batch_sql += ", ";
      batch_sql += "(?1, ?" + std::to_string(4 + 2 * i) + ", ?2, ?" + std::to_string(5 + 2 * i) + ", ?3)";
    }
    insert_results_ = Statement(db_, url_, batch_sql);
    insert_result_ = Statement(db_, url_, R"sql(
      INSERT INTO result(session_id, resultclass_id, repeat, value, recorded_at)
      VALUES (?1, ?2, ?3, ?4, ?5))sql");
    upsert_outcome_ = Statement(db_, url_, R"sql(
      INSERT INTO outcome(session_id, benchmark_id, status, reason, stderr_tail, recorded_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6)
      ON CONFLICT DO UPDATE SET status = excluded.status, reason = excluded.reason,
                                stderr_tail = excluded.stderr_tail, recorded_at = excluded.recorded_at)sql");
  }

  void verify_version() {
    Statement query(db_, url_, "SELECT value FROM kbench_meta WHERE key = 'schema_version'");
    const std::string version = query.step() ? query.text(0) : "";
    if (version != std::to_string(kSchemaVersion)) {
      // inspect() accepted it, so only a concurrent writer of another
      // version gets here; refuse rather than mix schemas.
      throw InputError("store " + url_ + " has schema version '" + version + "', but this kbench writes version " +
                       std::to_string(kSchemaVersion));
    }
  }

  // One BEGIN IMMEDIATE ... COMMIT around `body`; any exception rolls the
  // whole transaction back and forgets cached ids that may name rows the
  // rollback removed.
  template <class Body>
  std::invoke_result_t<Body&> in_transaction(Body&& body) {
    exec(db_, url_, "BEGIN IMMEDIATE");
    try {
      auto result = body();
      exec(db_, url_, "COMMIT");
      return result;
    } catch (...) {
      if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      benchmark_ids_.clear();
      resultclass_ids_.clear();
      throw;
    }
  }

  void require_session(std::int64_t session) {
    session_exists_.reset().bind(1, session);
    const bool exists = session_exists_.step();
    session_exists_.reset();
    if (!exists) throw RunError("store " + url_ + ": session " + std::to_string(session) + " does not exist");
  }

  std::optional<std::int64_t> find_benchmark_id(const BenchmarkKey& benchmark) {
    find_benchmark_.reset().bind(1, benchmark.name).bind(2, canonical_params(benchmark.params));
    std::optional<std::int64_t> id;
    if (find_benchmark_.step()) id = find_benchmark_.integer(0);
    find_benchmark_.reset();
    return id;
  }

  std::int64_t benchmark_id_for(const BenchmarkKey& benchmark) {
    std::string key = benchmark.name;
    key += '\0';
    key += canonical_params(benchmark.params);
    if (auto it = benchmark_ids_.find(key); it != benchmark_ids_.end()) return it->second;
    upsert_benchmark_.reset().bind(1, benchmark.name).bind(2, canonical_params(benchmark.params));
    if (!upsert_benchmark_.step()) fail(db_, url_, "storing benchmark " + benchmark.name);
    const std::int64_t id = upsert_benchmark_.integer(0);
    upsert_benchmark_.reset();
    benchmark_ids_.emplace(std::move(key), id);
    return id;
  }

  // Result classes of one benchmark already in the store. A benchmark
  // reports its classes in the same order every repeat, so the class at
  // position i is first looked for where it was last time: no hashing on
  // the ingest path, which runs once per stored sample.
  struct KnownClasses {
    struct Entry {
      std::string name, unit;
      std::int64_t id;
      Better better;
    };
    std::vector<Entry> entries;
    std::unordered_map<std::string, std::size_t> by_label;  // name '\0' unit -> entries index
    std::vector<std::size_t> last_order;                     // position in repeat -> entries index
  };

  std::int64_t resultclass_id_for(KnownClasses& known, std::size_t position, std::int64_t benchmark_id,
                                  const std::string& benchmark_name, const ResultClass& rc) {
    std::size_t index = known.entries.size();
    if (position < known.last_order.size()) {
      const auto& guess = known.entries[known.last_order[position]];
      if (guess.name == rc.name && guess.unit == rc.unit) index = known.last_order[position];
    }
    if (index == known.entries.size()) {
      std::string key = rc.name;
      key += '\0';
      key += rc.unit;
      if (auto it = known.by_label.find(key); it != known.by_label.end()) {
        index = it->second;
      } else {
        upsert_resultclass_.reset()
            .bind(1, benchmark_id)
            .bind(2, rc.name)
            .bind(3, rc.unit)
            .bind(4, to_string(rc.better));
        if (!upsert_resultclass_.step()) fail(db_, url_, "storing result class " + rc.label());
        const std::int64_t id = upsert_resultclass_.integer(0);
        const Better stored = better_from_text(upsert_resultclass_.text(1));
        upsert_resultclass_.reset();
        known.entries.push_back({rc.name, rc.unit, id, stored});
        known.by_label.emplace(std::move(key), index);
      }
      if (known.last_order.size() <= position) known.last_order.resize(position + 1);
      known.last_order[position] = index;
    }
    const auto& entry = known.entries[index];
    if (entry.better != rc.better) {
      throw RunError("store " + url_ + ": " + benchmark_name + " " + rc.label() + " says " +
                     std::string(to_string(rc.better)) + " is better, but the store has it as " +
                     std::string(to_string(entry.better)) + " is better");
    }
    return entry.id;
  }

  std::string url_;
  sqlite3* db_;
  Statement upsert_sut_, upsert_swprofile_, insert_session_, session_exists_, find_benchmark_,
      upsert_benchmark_, upsert_resultclass_, insert_result_, insert_results_, upsert_outcome_;
  std::vector<std::int64_t> class_ids_;  // of the repeat being stored, reused
  std::unordered_map<std::string, std::int64_t> benchmark_ids_;
  std::unordered_map<std::int64_t, KnownClasses> resultclass_ids_;  // by benchmark id
};

}  // namespace

std::unique_ptr<ResultStore> open_sqlite_store(const std::string& url, const std::string& path,
                                               OpenMode mode) {
  const FileState state = inspect(url, path);
  if (state != FileState::KbenchStore && mode == OpenMode::MustExist) {
    throw InputError("store " + url + ": " +
                     (state == FileState::Missing ? path + " does not exist"
                                                  : path + " is an empty file, not a kbench store") +
                     "; expected a store written by `kbench run` (see --store / KBENCH_STORE)");
  }
  if (state == FileState::Missing) {
    const fs::path parent = fs::path(path).parent_path();
    std::error_code error;
    if (!parent.empty()) fs::create_directories(parent, error);
    if (error) {
      throw InputError("store " + url + ": cannot create directory " + parent.string() + ": " + error.message());
    }
  }
  const int flags = SQLITE_OPEN_READWRITE | (state == FileState::KbenchStore ? 0 : SQLITE_OPEN_CREATE);
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw InputError("store " + url + ": cannot open " + path + " for writing: " + message);
  }
  auto store = std::make_unique<SqliteStore>(url, db);
  store->initialise(state != FileState::KbenchStore);
  return store;
}

}  // namespace kbench::store
