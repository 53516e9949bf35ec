// Store URLs, the default store location and the outcome words: everything
// about choosing a store that does not depend on the backend.
#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "common/errors.h"
#include "store/result_store.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

namespace kbench::store {

namespace {

constexpr const char* kKnownSchemes =
    "expected sqlite:///abs/path.db, sqlite://relative/path.db, a plain file path or "
    "postgresql://user@host:port/database";

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

// The userinfo of a libpq URI: between "://" and its '@'; npos when there
// is none.
std::pair<std::size_t, std::size_t> userinfo_span(const std::string& url) {
  const auto start = url.find("://");
  if (start == std::string::npos) return {std::string::npos, std::string::npos};
  const std::size_t begin = start + 3;
  // The last '@' before the query: an unencoded '/' or '@' in a password
  // must not hide it.
  const std::size_t authority_end = std::min(url.find('?', begin), url.size());
  const auto at = url.rfind('@', authority_end == 0 ? 0 : authority_end - 1);
  if (at == std::string::npos || at < begin) return {std::string::npos, std::string::npos};
  return {begin, at};
}

// Positions of the values of "password=" parameters in the query string.
std::vector<std::pair<std::size_t, std::size_t>> password_parameters(const std::string& url) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  const auto query = url.find('?');
  if (query == std::string::npos) return spans;
  std::size_t begin = query + 1;
  while (begin <= url.size()) {
    const std::size_t end = std::min(url.find('&', begin), url.size());
    const std::string parameter = url.substr(begin, end - begin);
    const auto equals = parameter.find('=');
    std::string key = parameter.substr(0, equals);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key == "password") {
      spans.emplace_back(equals == std::string::npos ? end : begin + equals + 1, end);
    }
    begin = end + 1;
  }
  return spans;
}

}  // namespace

bool store_url_has_password(const std::string& url) {
  const auto [begin, at] = userinfo_span(url);
  if (begin != std::string::npos && url.substr(begin, at - begin).find(':') != std::string::npos) return true;
  return !password_parameters(url).empty();
}

std::string redact_store_url(const std::string& url) {
  std::string redacted = url;
  // From the end, so earlier positions stay valid.
  auto parameters = password_parameters(url);
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    redacted.replace(it->first, it->second - it->first, "***");
  }
  const auto [begin, at] = userinfo_span(url);
  if (begin != std::string::npos) {
    const auto colon = url.find(':', begin);
    if (colon != std::string::npos && colon < at) redacted.replace(colon + 1, at - colon - 1, "***");
  }
  return redacted;
}

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
  if (scheme == "postgresql" || scheme == "postgres") {
    if (store_url_has_password(url)) {
      throw InputError("store URL '" + redact_store_url(url) +
                       "' holds a password; kbench takes it only from ~/.pgpass (or PGPASSFILE) or PGPASSWORD, "
                       "never from the command line; give postgresql://user@host:port/database");
    }
    return {"postgresql", url};
  }
  throw InputError("store URL '" + url + "' has unknown scheme '" + scheme + "://'; " + kKnownSchemes);
}

std::unique_ptr<ResultStore> open_store(const std::string& url, OpenMode mode) {
  const StoreUrl parsed = parse_store_url(url);
  if (parsed.scheme == "postgresql") return open_postgres_store(url, mode);
  return open_sqlite_store(url, parsed.path, mode);
}

bool store_present(const std::string& url) {
  const StoreUrl parsed = parse_store_url(url);
  if (parsed.scheme == "postgresql") return postgres_store_present(url);
  return std::filesystem::exists(parsed.path);
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
