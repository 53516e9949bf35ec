#include "store/sqlite_statement.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/errors.h"

namespace kbench::store {

namespace {

std::string first_line(const std::string& sql) {
  const auto start = sql.find_first_not_of(" \n");
  const auto end = sql.find('\n', start == std::string::npos ? 0 : start);
  return sql.substr(start == std::string::npos ? 0 : start, end == std::string::npos ? end : end - start);
}

}  // namespace

bool is_io_error(int extended_code) {
  switch (extended_code & 0xff) {
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return true;
    default:
      return false;
  }
}

std::string describe_sqlite_error(sqlite3* db) {
  if (!db) return "out of memory";
  const int code = sqlite3_extended_errcode(db);
  // Only an error of the medium has a meaningful errno: SQLite keeps the one
  // of the last failed system call, which may be older than this error.
  const int system_errno = is_io_error(code) ? sqlite3_system_errno(db) : 0;
  const std::string sqlite_message = sqlite3_errmsg(db);
  // The operating system's reason is the most precise; SQLite keeps it for
  // the last failed system call.
  if (system_errno == ENOSPC || system_errno == EDQUOT) return "disk full (" + sqlite_message + ")";
  if (system_errno == EROFS) return "read-only file system (" + sqlite_message + ")";
  if (system_errno == EACCES || system_errno == EPERM) return "permission denied (" + sqlite_message + ")";
  switch (code & 0xff) {
    case SQLITE_FULL: return "disk full (" + sqlite_message + ")";
    case SQLITE_READONLY: return "read-only (" + sqlite_message + ")";
    case SQLITE_PERM: return "permission denied (" + sqlite_message + ")";
    case SQLITE_BUSY: return sqlite_message + " (another kbench holds the store locked)";
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
      return system_errno ? sqlite_message + ": " + std::strerror(system_errno) : sqlite_message;
    default: return sqlite_message;
  }
}

void fail(sqlite3* db, const std::string& location, const std::string& what) {
  std::string message = "store " + location + ": " + what;
  if (db) message += ": " + describe_sqlite_error(db);
  throw RunError(message);
}

void exec(sqlite3* db, const std::string& location, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    sqlite3_free(error);
    fail(db, location,
         is_io_error(sqlite3_extended_errcode(db)) ? std::string("cannot write")
                                                   : "executing '" + first_line(sql) + "'");
  }
}

Statement::Statement(sqlite3* db, const std::string& location, const std::string& sql)
    : db_(db), location_(&location) {
  if (sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_,
                         nullptr) != SQLITE_OK) {
    fail(db, location, "preparing '" + first_line(sql) + "'");
  }
}

Statement& Statement::operator=(Statement&& other) noexcept {
  std::swap(db_, other.db_);
  std::swap(stmt_, other.stmt_);
  std::swap(location_, other.location_);
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::reset() {
  sqlite3_reset(stmt_);
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  check(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check(sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  check(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::bind_null(int index) {
  check(sqlite3_bind_null(stmt_, index));
  return *this;
}

bool Statement::step() {
  last_error_ = SQLITE_OK;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  last_error_ = sqlite3_extended_errcode(db_);
  std::string sql = sqlite3_sql(stmt_);
  const bool writing = !sqlite3_stmt_readonly(stmt_);
  // A full or read-only medium is the user's to fix: name it, not the SQL.
  const std::string what =
      writing && is_io_error(last_error_) ? std::string("cannot write") : "executing '" + first_line(sql) + "'";
  try {
    fail(db_, *location_, what);
  } catch (...) {
    sqlite3_reset(stmt_);
    throw;
  }
}

std::string Statement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
}

void Statement::check(int rc) {
  if (rc != SQLITE_OK) fail(db_, *location_, "binding a parameter");
}

}  // namespace kbench::store
