#pragma once
// What the SQL resultstore (store/sql_store.h) needs of a database library:
// statements with bound parameters, rows read by column, transactions.
// Nothing here knows kbench's tables. Internal to src/store/.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/errors.h"

namespace kbench::store {

// The failures a caller reacts to; the rest are Other.
enum class SqlFailure {
  Other,
  Duplicate,         // a unique or primary key would hold a value twice
  MissingReference,  // a foreign key names a row that does not exist
  Conflict,          // aborted for a deadlock or serialization conflict: running the transaction again may work
};

// A statement the database refused; the message names the store.
struct SqlError : RunError {
  SqlError(const std::string& message, SqlFailure kind) : RunError(message), failure(kind) {}
  SqlFailure failure;
};

class SqlStatement {
 public:
  virtual ~SqlStatement() = default;

  // Parameters are written ?1, ?2, ... in the SQL. They stay bound until
  // bound again; binding ends the execution in progress.
  SqlStatement& bind(int index, std::int64_t value) {
    bind_integer(index, value);
    return *this;
  }
  SqlStatement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  SqlStatement& bind(int index, double value) {
    bind_real(index, value);
    return *this;
  }
  SqlStatement& bind(int index, std::string_view text) {
    bind_text(index, text);
    return *this;
  }
  SqlStatement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  SqlStatement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  SqlStatement& bind(int index, std::nullopt_t) {
    bind_null(index);
    return *this;
  }

  // Executes the statement on the first call; then true while there is a
  // row, false for good once there is none (until reset() or a bind).
  virtual bool next() = 0;
  // For statements whose rows are not needed.
  void run() {
    while (next()) {
    }
  }
  // Executes again, with the same parameters, at the next next().
  virtual void reset() = 0;

  virtual bool is_null(int column) const = 0;
  virtual std::int64_t integer(int column) const = 0;
  virtual double real(int column) const = 0;
  virtual std::string text(int column) const = 0;
  // What the column holds when that is not a number ("the text 'abc'",
  // "NULL"), for messages; nullopt for a number.
  virtual std::optional<std::string> non_number(int column) const = 0;

 protected:
  virtual void bind_integer(int index, std::int64_t value) = 0;
  virtual void bind_real(int index, double value) = 0;
  virtual void bind_text(int index, std::string_view text) = 0;
  virtual void bind_null(int index) = 0;
};

class SqlDriver {
 public:
  virtual ~SqlDriver() = default;
  // A statement lives no longer than its driver.
  virtual std::unique_ptr<SqlStatement> prepare(const std::string& sql) = 0;
  // Statements without parameters, several separated by ';'.
  virtual void execute(const std::string& sql) = 0;
  virtual bool has_table(const std::string& name) = 0;

  // A transaction that writes: it may wait for other writers, never fails
  // later for having only read first.
  virtual void begin() = 0;
  virtual void commit() = 0;
  // Never throws; nothing happens outside a transaction.
  virtual void rollback() noexcept = 0;
};

// begin() now; rollback() at the end of the scope unless committed.
class SqlTransaction {
 public:
  explicit SqlTransaction(SqlDriver& driver) : driver_(driver) { driver_.begin(); }
  SqlTransaction(const SqlTransaction&) = delete;
  SqlTransaction& operator=(const SqlTransaction&) = delete;
  ~SqlTransaction() {
    if (!committed_) driver_.rollback();
  }
  void commit() {
    driver_.commit();
    committed_ = true;
  }

 private:
  SqlDriver& driver_;
  bool committed_ = false;
};

}  // namespace kbench::store
