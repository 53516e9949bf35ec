// Store URLs, the default store location and the outcome words: everything
// about choosing a store that does not depend on the backend.
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

#include "common/errors.h"
#include "store/result_store.h"
#include "store/sqlite_store.h"

namespace kbench::store {

namespace {

constexpr const char* kKnownSchemes =
    "expected sqlite:///abs/path.db, sqlite://relative/path.db or a plain file path";

// "name:" at the start, as RFC 3986 spells a scheme: what a URL with a
// mistyped "//" looks like. A path whose first component holds a colon can
// be written "./a:b.db".
std::optional<std::string> leading_scheme(const std::string& url) {
  const auto colon = url.find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  if (!std::isalpha(static_cast<unsigned char>(url[0]))) return std::nullopt;
  for (std::size_t i = 1; i < colon; ++i) {
    const unsigned char c = static_cast<unsigned char>(url[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return std::nullopt;
  }
  return url.substr(0, colon);
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace

std::string_view to_string(OutcomeStatus status) {
  switch (status) {
    case OutcomeStatus::Ok: return "ok";
    case OutcomeStatus::Skipped: return "skipped";
    case OutcomeStatus::Failed: return "failed";
  }
  return "failed";
}

std::optional<OutcomeStatus> parse_outcome_status(std::string_view text) {
  if (text == "ok") return OutcomeStatus::Ok;
  if (text == "skipped") return OutcomeStatus::Skipped;
  if (text == "failed") return OutcomeStatus::Failed;
  return std::nullopt;
}

StoreUrl parse_store_url(const std::string& url) {
  if (url.empty()) throw InputError(std::string("store URL is empty; ") + kKnownSchemes);
  const auto separator = url.find("://");
  if (separator == std::string::npos) {
    if (const auto scheme = leading_scheme(url)) {
      throw InputError("store URL '" + url + "': '" + *scheme + ":' without '//'; " + kKnownSchemes +
                       " (./" + url + " for a file of that name)");
    }
    // A plain path: the common case of `--store results.db`.
    return {"sqlite", url};
  }
  const std::string scheme = url.substr(0, separator);
  const std::string rest = url.substr(separator + 3);
  if (scheme == "sqlite") {
    if (rest.empty()) {
      throw InputError("store URL '" + url + "' names no file; expected e.g. sqlite:///path/to/results.db");
    }
    // Everything after "sqlite://" is the path: sqlite:///abs is absolute,
    // sqlite://rel is relative to the working directory.
    return {"sqlite", rest};
  }
  if (scheme == "postgresql" || scheme == "postgres" || scheme == "csv") {
    throw InputError("store URL '" + url + "': " + scheme +
                     ":// stores are not supported yet in this build; use sqlite:///path/to/results.db");
  }
  throw InputError("store URL '" + url + "' has unknown scheme '" + scheme + "://'; " + kKnownSchemes);
}

std::unique_ptr<ResultStore> open_store(const std::string& url, OpenMode mode) {
  const StoreUrl parsed = parse_store_url(url);
  return open_sqlite_store(url, parsed.path, mode);
}

std::string default_store_url() {
  if (std::string from_env = env_or_empty("KBENCH_STORE"); !from_env.empty()) return from_env;
  std::string data_home = env_or_empty("XDG_DATA_HOME");
  // The XDG base directory spec says a relative value is invalid and ignored.
  if (data_home.empty() || data_home.front() != '/') {
    const std::string home = env_or_empty("HOME");
    if (home.empty()) {
      throw InputError("no store given: set --store, KBENCH_STORE, XDG_DATA_HOME or HOME");
    }
    data_home = home + "/.local/share";
  }
  return "sqlite://" + data_home + "/kbench/results.db";
}

}  // namespace kbench::store
