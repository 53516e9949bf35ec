#pragma once
// A libpq connection and its results, owned (RAII), with text parameters and
// the error wording of the PostgreSQL store. Internal to src/store/.
#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.h"

namespace kbench::store {

// A statement PostgreSQL refused; `sqlstate` tells conflicts (40001
// serialization, 40P01 deadlock) and constraint violations (23xxx) apart. A
// RunError: callers that do not care see a run failure.
struct PgError : RunError {
  PgError(const std::string& message, std::string state) : RunError(message), sqlstate(std::move(state)) {}
  std::string sqlstate;
};

// Positional parameters $1..$n, as text (NULL when nullopt).
class PgParams {
 public:
  PgParams& add(std::string value) {
    values_.push_back(std::move(value));
    return *this;
  }
  PgParams& add_null() {
    values_.push_back(std::nullopt);
    return *this;
  }
  const std::vector<std::optional<std::string>>& values() const { return values_; }

 private:
  std::vector<std::optional<std::string>> values_;
};

class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result, &PQclear) {}
  int rows() const { return PQntuples(result_.get()); }
  Oid type(int column) const { return PQftype(result_.get(), column); }
  bool is_null(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  std::string text(int row, int column) const {
    return std::string(PQgetvalue(result_.get(), row, column), PQgetlength(result_.get(), row, column));
  }
  // Binary-format columns (PgConnection::query_binary).
  std::int64_t binary_int8(int row, int column) const;
  std::int32_t binary_int4(int row, int column) const;
  double binary_float8(int row, int column) const;

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> result_;
};

class PgConnection {
 public:
  // Connects with the libpq URI `conninfo`; `location` (password-free) names
  // the store in messages. A failure names libpq's reason: a RunError when
  // the server cannot be reached, an InputError when it refused the URL.
  PgConnection(const std::string& conninfo, const std::string& location);

  // Statements without parameters (several allowed, separated by ';').
  void execute(const std::string& sql);
  // Results in binary format: no text to parse.
  PgResult query_binary(const std::string& sql, const PgParams& params);
  void rollback_quietly();

 private:
  PgResult checked(PGresult* result, const std::string& sql);

  std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
  std::string location_;
};

}  // namespace kbench::store
