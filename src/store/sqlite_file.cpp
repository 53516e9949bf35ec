#include "store/sqlite_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "common/errors.h"
#include "store/schema.h"
#include "store/sqlite_statement.h"

namespace kbench::store {

namespace {

namespace fs = std::filesystem;

constexpr int kBusyTimeoutMs = 30000;
// The database header at the start of the file: the magic string, then the
// page size (bytes 16-17) and the journal mode (bytes 18-19, 2 for WAL).
constexpr std::size_t kSqliteHeaderSize = 100;
constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

// "file:" URI of a path, for the immutable open: '%', '?' and '#' are the
// characters a URI would otherwise read as syntax.
std::string file_uri(const std::string& path, const char* query) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char* hex = "0123456789ABCDEF";
      uri += '%';
      uri += hex[static_cast<unsigned char>(c) >> 4];
      uri += hex[static_cast<unsigned char>(c) & 0xf];
    } else {
      uri += c;
    }
  }
  return uri + query;
}

Connection open_with(const std::string& url, const std::string& path, const std::string& name, int flags,
                     const char* purpose) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  Connection db(raw);
  if (rc != SQLITE_OK) {
    throw InputError("store " + url + ": cannot open " + path + purpose + ": " +
                     (db ? describe_sqlite_error(db.get()) : std::string(sqlite3_errstr(rc))));
  }
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), kBusyTimeoutMs);
  return db;
}

Connection open_immutable(const std::string& url, const std::string& path) {
  return open_with(url, path, file_uri(path, "?immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, " for reading");
}

// The first statement that reads the database: where a read-only WAL store
// finds out that it cannot create its -shm file.
int probe(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &stmt, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  return rc == SQLITE_ROW ? SQLITE_OK : sqlite3_extended_errcode(db);
}

[[noreturn]] void cannot_read(const std::string& url, const std::string& path, sqlite3* db) {
  throw InputError("store " + url + ": cannot read " + path + ": " + describe_sqlite_error(db));
}

}  // namespace

Connection open_read_only(const std::string& url, const std::string& path) {
  Connection db = open_with(url, path, path, SQLITE_OPEN_READONLY, " for reading");
  const int rc = probe(db.get());
  if (rc == SQLITE_OK || !is_io_error(rc)) return db;
  Connection immutable = open_immutable(url, path);
  if (probe(immutable.get()) != SQLITE_OK) cannot_read(url, path, db.get());
  return immutable;
}

Connection open_read_write(const std::string& url, const std::string& path, bool create) {
  // SQLite quietly opens a file it cannot write read-only, and says "No such
  // file or directory" of one it cannot create in a read-only directory; the
  // store also needs its directory for the -wal and -shm files. Say which is
  // in the way, before SQLite tries.
  const std::string directory = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
  const bool exists = ::access(path.c_str(), F_OK) == 0;
  for (const auto& [name, what] : {std::pair{path, "cannot write "}, std::pair{directory, "cannot create files in "}}) {
    if (name == path && !exists) continue;
    if (::access(name.c_str(), W_OK) == 0) continue;
    const int error = errno;
    throw InputError("store " + url + ": " + (exists ? what + name : "cannot create " + path) + ": " +
                     (error == EROFS    ? std::string("read-only file system")
                      : error == EACCES ? std::string("permission denied")
                                        : std::string(std::strerror(error))));
  }
  Connection db = open_with(url, path, path, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), " for writing");
  if (sqlite3_db_readonly(db.get(), "main") == 1) {
    throw InputError("store " + url + ": cannot write " + path + ": SQLite opened it read-only");
  }
  return db;
}

FileInspection inspect_store_file(const std::string& url, const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return {FileState::Missing, 0};
    throw InputError("store " + url + ": cannot access " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    throw InputError("store " + url + ": " + path + " is not a regular file; expected a kbench store");
  }
  if (info.st_size == 0) return {FileState::Empty, 0};

  unsigned char header[kSqliteHeaderSize] = {};
  {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw InputError("store " + url + ": cannot read " + path + ": " + std::strerror(errno));
    file.read(reinterpret_cast<char*>(header), sizeof header);
    if (file.bad()) throw InputError("store " + url + ": cannot read " + path + ": " + std::strerror(errno));
    if (file.gcount() < static_cast<std::streamsize>(sizeof kSqliteMagic) ||
        std::memcmp(header, kSqliteMagic, sizeof kSqliteMagic) != 0) {
      throw InputError("store " + url + ": " + path + " is not a kbench store (not an SQLite database)");
    }
  }
  // A valid SQLite file is at least its first page, which holds the header;
  // a shorter one (a copy cut off) is damaged, whatever its content.
  const std::uint32_t page_size = header[16] == 0 && header[17] == 1 ? 65536u : header[16] << 8 | header[17];
  if (static_cast<std::uint64_t>(info.st_size) < std::max<std::uint32_t>(page_size, kSqliteHeaderSize)) {
    throw InputError(fmt::format("store {}: {} is damaged (an SQLite database cut off after {} bytes, inside its "
                                 "first {}-byte page); left as it was",
                                 url, path, info.st_size, page_size));
  }

  // A read-only connection to a WAL database creates its -wal and -shm files
  // and, as it cannot checkpoint, leaves them behind: a refused file would not
  // be left as it was found. Without a -wal file no connection is using the
  // database (each needs it), so the file alone is the whole database, and it
  // is read as immutable, which creates nothing.
  const bool wal_mode = header[18] == 2 && header[19] == 2;
  const Connection db = wal_mode && !fs::exists(path + "-wal") ? open_immutable(url, path) : open_read_only(url, path);
  bool has_meta = false;
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db.get(),
                                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kbench_meta'", -1,
                                &stmt, nullptr);
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(stmt);
      has_meta = rc == SQLITE_ROW;
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      const int code = sqlite3_extended_errcode(db.get());
      if (is_io_error(code)) cannot_read(url, path, db.get());
      if ((code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB) {
        throw InputError("store " + url + ": " + path + " is damaged (SQLite cannot read it: " +
                         sqlite3_errmsg(db.get()) + "); left as it was");
      }
      throw InputError("store " + url + ": " + path + " is not a kbench store (unreadable SQLite database: " +
                       sqlite3_errmsg(db.get()) + ")");
    }
  }
  if (!has_meta) {
    throw InputError("store " + url + ": " + path +
                     " is not a kbench store (an SQLite database without kbench's kbench_meta table)");
  }
  std::optional<std::string> version_text;
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db.get(), "SELECT value FROM kbench_meta WHERE key = 'schema_version'", -1, &stmt,
                                nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      version_text = text ? text : "";
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE && is_io_error(sqlite3_extended_errcode(db.get()))) {
      cannot_read(url, path, db.get());
    }
  }
  return {FileState::KbenchStore, checked_schema_version(url, version_text)};
}

}  // namespace kbench::store
