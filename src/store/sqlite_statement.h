#pragma once
// A prepared SQLite statement and the error wording of the SQLite store.
// Internal to src/store/.
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace kbench::store {

// What went wrong, in the user's words: "disk full", "read-only file
// system", "permission denied", "I/O error: ...", else SQLite's message.
std::string describe_sqlite_error(sqlite3* db);

// True for errors of the medium (full, read-only, I/O, permissions, cannot
// open) rather than of the file's content.
bool is_io_error(int extended_code);

// Failures of an operation that should have worked (disk full, lock held
// for longer than the busy timeout, ...): RunError naming the store.
[[noreturn]] void fail(sqlite3* db, const std::string& location, const std::string& what);

void exec(sqlite3* db, const std::string& location, const char* sql);

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, const std::string& location, const std::string& sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept { *this = std::move(other); }
  Statement& operator=(Statement&& other) noexcept;
  ~Statement();

  // Keeps bindings: callers rebind only what changes between executions.
  Statement& reset();
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind_null(int index);

  // True while there is a row; false when done; throws on an error (the
  // statement is reset so the transaction can be rolled back cleanly).
  bool step();
  // For statements that return nothing (or whose rows are not needed).
  void run() {
    while (step()) {
    }
  }
  int last_error() const { return last_error_; }

  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  int type(int column) const { return sqlite3_column_type(stmt_, column); }
  int bytes(int column) const { return sqlite3_column_bytes(stmt_, column); }
  std::string text(int column) const;

 private:
  void check(int rc);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  const std::string* location_ = nullptr;
  int last_error_ = SQLITE_OK;
};

}  // namespace kbench::store
