// libpq behind RAII (postgres_connection.h).
#include "store/postgres_connection.h"

#include <arpa/inet.h>

#include <cstring>

#include "common/errors.h"

namespace kbench::store {

namespace {

// libpq's messages end in a newline and may run over several lines (DETAIL,
// HINT); one line is what a user gets.
std::string one_line(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  std::string line;
  for (const char c : message) {
    const bool space = c == '\n' || c == '\t' || c == ' ';
    if (space && (line.empty() || line.back() == ' ')) continue;
    line += space ? ' ' : c;
  }
  return line;
}

std::uint64_t big_endian(const char* bytes, std::size_t size) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < size; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

}  // namespace

std::int64_t PgResult::binary_int8(int row, int column) const {
  return static_cast<std::int64_t>(big_endian(PQgetvalue(result_.get(), row, column), 8));
}

std::int32_t PgResult::binary_int4(int row, int column) const {
  return static_cast<std::int32_t>(big_endian(PQgetvalue(result_.get(), row, column), 4));
}

double PgResult::binary_float8(int row, int column) const {
  const std::uint64_t bits = big_endian(PQgetvalue(result_.get(), row, column), 8);
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

PgConnection::PgConnection(const std::string& conninfo, const std::string& location)
    : conn_(nullptr, &PQfinish), location_(location) {
  // connect_timeout first: a value in the URI overrides it. libpq never
  // prompts; the password comes from PGPASSWORD or the password file.
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "kbench", conninfo.c_str(), nullptr};
  conn_.reset(PQconnectdbParams(keywords, values, /*expand_dbname=*/1));
  if (!conn_) throw RunError("store " + location_ + ": cannot connect: out of memory");
  if (PQstatus(conn_.get()) != CONNECTION_OK) {
    const std::string message = "store " + location_ + ": cannot connect: " + one_line(PQerrorMessage(conn_.get()));
    // A server that is down, unreachable or not yet accepting connections is
    // a failure of the environment (exit 1), which the same command may get
    // past later; one that answered and refused this URL's user, password or
    // database is bad input (exit 2). libpq tells them apart only by a ping.
    const PGPing ping = PQpingParams(keywords, values, /*expand_dbname=*/1);
    if (ping == PQPING_NO_RESPONSE || ping == PQPING_REJECT) throw RunError(message);
    throw InputError(message);
  }
  // Warnings about e.g. "relation already exists, skipping" are not for users.
  execute("SET client_min_messages = warning");
}

PgResult PgConnection::checked(PGresult* raw, const std::string& sql) {
  PgResult result(raw);
  const auto status = PQresultStatus(raw);
  if (raw && (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)) return result;
  std::string state;
  std::string message;
  if (raw) {
    if (const char* code = PQresultErrorField(raw, PG_DIAG_SQLSTATE)) state = code;
    message = one_line(PQresultErrorMessage(raw));
  }
  if (message.empty()) message = one_line(PQerrorMessage(conn_.get()));
  if (PQstatus(conn_.get()) == CONNECTION_BAD) {
    throw RunError("store " + location_ + ": lost the connection: " + message);
  }
  (void)sql;
  throw PgError("store " + location_ + ": " + message, state);
}

void PgConnection::execute(const std::string& sql) { checked(PQexec(conn_.get(), sql.c_str()), sql); }

namespace {

std::vector<const char*> pointers(const PgParams& params) {
  std::vector<const char*> values;
  values.reserve(params.values().size());
  for (const auto& value : params.values()) values.push_back(value ? value->c_str() : nullptr);
  return values;
}

}  // namespace

PgResult PgConnection::query_binary(const std::string& sql, const PgParams& params) {
  const auto values = pointers(params);
  return checked(PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                              nullptr, nullptr, /*resultFormat=*/1),
                 sql);
}

void PgConnection::rollback_quietly() {
  if (PQtransactionStatus(conn_.get()) == PQTRANS_IDLE) return;
  PQclear(PQexec(conn_.get(), "ROLLBACK"));
}

}  // namespace kbench::store
