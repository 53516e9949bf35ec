#pragma once
// Looking at a would-be SQLite store before anything is written to it, and
// opening connections to it. Internal to src/store/.
#include <sqlite3.h>

#include <memory>
#include <string>

namespace kbench::store {

enum class FileState { Missing, Empty, KbenchStore };

struct FileInspection {
  FileState state = FileState::Missing;
  int schema_version = 0;  // for KbenchStore
};

// Never writes: the header is read with plain I/O and the SQLite part opens
// the file read-only, so a file that is not a kbench store stays untouched.
// Refuses (InputError) what is not a kbench store of a version this build
// reads; a file that cannot be read (permissions, I/O) is reported as such,
// never as "not a kbench store".
FileInspection inspect_store_file(const std::string& url, const std::string& path);

struct ConnectionCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Connection = std::unique_ptr<sqlite3, ConnectionCloser>;

// A read-only connection. A WAL store on a medium where its -shm file cannot
// be created (read-only or full file system) is opened as immutable: nobody
// can be writing to it there.
Connection open_read_only(const std::string& url, const std::string& path);

// A read-write connection (`create`: the file may be created). Throws
// InputError describing why the file cannot be opened for writing.
Connection open_read_write(const std::string& url, const std::string& path, bool create);

}  // namespace kbench::store
