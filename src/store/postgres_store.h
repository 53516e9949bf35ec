#pragma once
// The PostgreSQL resultstore. Internal to src/store/: everyone else goes
// through open_store() in result_store.h.
#include <memory>
#include <string>

#include "store/result_store.h"

namespace kbench::store {

// `url` is a libpq connection URI without a password (parse_store_url refuses
// one). A database without kbench's tables is initialised when `mode` is
// CreateIfMissing, else refused (InputError); so is a connection failure.
std::unique_ptr<ResultStore> open_postgres_store(const std::string& url, OpenMode mode);

// Whether the database has kbench's tables; InputError when it cannot be reached.
bool postgres_store_present(const std::string& url);

// The URL with any password (user:PASSWORD@ or password=...) replaced by
// "***": what messages and logs show.
std::string redact_store_url(const std::string& url);
// True when the URL carries a password.
bool store_url_has_password(const std::string& url);

}  // namespace kbench::store
