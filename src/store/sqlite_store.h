#pragma once
// The SQLite resultstore. Internal to src/store/: everyone else goes through
// open_store() in result_store.h.
#include <memory>
#include <string>

#include "store/result_store.h"

namespace kbench::store {

// `path` is the file system path, `url` what the user gave (for messages).
// Refuses (InputError) anything that is not a kbench store of a version this
// build reads, without writing to it.
std::unique_ptr<ResultStore> open_sqlite_store(const std::string& url, const std::string& path,
                                               OpenMode mode);

}  // namespace kbench::store
