#pragma once
// A fresh PostgreSQL database per test on the server scripts/pg-test-server.sh
// starts ($KBENCH_TEST_POSTGRES): created with a unique name, dropped after,
// so parallel and repeated runs never see each other's rows. Header-only.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>

namespace kbench::testing {

// The server's URL, or a test failure saying how to start one: a missing
// server must never make the PostgreSQL tests pass silently.
inline std::string postgres_server_url() {
  const char* url = std::getenv("KBENCH_TEST_POSTGRES");
  if (!url || !*url) {
    ADD_FAILURE() << "KBENCH_TEST_POSTGRES is not set: start a test server with "
                     "`eval \"$(scripts/pg-test-server.sh start)\"` (make test does this itself)";
    return "";
  }
  return url;
}

// `url` with its database (the path after host:port) replaced by `database`.
inline std::string with_database(const std::string& url, const std::string& database) {
  const auto authority = url.find("://") + 3;
  const auto query = url.find('?', authority);
  const auto slash = url.find('/', authority);
  const std::string tail = query == std::string::npos ? "" : url.substr(query);
  const std::size_t end = slash == std::string::npos || (query != std::string::npos && slash > query)
                              ? (query == std::string::npos ? url.size() : query)
                              : slash;
  return url.substr(0, end) + "/" + database + tail;
}

// One SQL statement as the test role, on the database of `url`; "" on
// success, else the server's message.
inline std::string run_postgres(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  std::string error;
  if (PQstatus(conn) != CONNECTION_OK) {
    error = PQerrorMessage(conn);
  } else {
    PGresult* result = PQexec(conn, sql.c_str());
    const auto status = PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) error = PQresultErrorMessage(result);
    PQclear(result);
  }
  PQfinish(conn);
  return error;
}

// The first column of the first row of a query ("" when none).
inline std::string query_postgres(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  std::string value;
  if (PQstatus(conn) == CONNECTION_OK) {
    PGresult* result = PQexec(conn, sql.c_str());
    if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) > 0) value = PQgetvalue(result, 0, 0);
    else ADD_FAILURE() << sql << ": " << PQresultErrorMessage(result);
    PQclear(result);
  } else {
    ADD_FAILURE() << PQerrorMessage(conn);
  }
  PQfinish(conn);
  return value;
}

class PostgresTestDatabase {
 public:
  PostgresTestDatabase() : server_(postgres_server_url()) {
    if (server_.empty()) return;
    static std::atomic<int> counter{0};
    std::random_device random;
    name_ = "kbench_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" +
            std::to_string(random() % 1000000);
    const std::string error = run_postgres(server_, "CREATE DATABASE " + name_);
    if (!error.empty()) {
      ADD_FAILURE() << "cannot create test database " << name_ << ": " << error;
      name_.clear();
    }
  }
  ~PostgresTestDatabase() {
    if (!name_.empty()) run_postgres(server_, "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  }
  PostgresTestDatabase(const PostgresTestDatabase&) = delete;
  PostgresTestDatabase& operator=(const PostgresTestDatabase&) = delete;

  bool ok() const { return !name_.empty(); }
  std::string url() const { return with_database(server_, name_); }

 private:
  std::string server_;
  std::string name_;
};

}  // namespace kbench::testing
