// Text forms shared by the resultstore backends (store_text.h).
#include "store/store_text.h"

#include <cstdio>
#include <random>

#include "sysinfo/fingerprint_view.h"

namespace kbench::store {

std::string canonical_params(const Params& params) {
  // std::map iterates sorted, so equal parameter sets give equal text.
  return nlohmann::json(params).dump();
}

Params params_from_text(const std::string& text) {
  Params params;
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return params;
  for (const auto& [key, value] : json.items()) {
    params[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return params;
}

Better better_from_text(const std::string& text) { return parse_better(text).value_or(Better::Lower); }

std::string kernel_release_of(const nlohmann::json& fingerprint) {
  return sysinfo::FingerprintView(fingerprint).kernel_release().value_or("");
}

std::string sut_class_of(const nlohmann::json& fingerprint) {
  return sysinfo::FingerprintView(fingerprint).sut_class().value_or("");
}

std::string new_session_uid() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(random()),
                static_cast<unsigned long long>(random()));
  return text;
}

std::string glob_or_all(const std::string& glob) { return glob.empty() ? "*" : glob; }

std::string planned_text(const std::vector<BenchmarkKey>& planned) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& key : planned) list.push_back({{"name", key.name}, {"params", key.params}});
  return list.dump();
}

std::vector<BenchmarkKey> planned_from_text(const std::string& text) {
  std::vector<BenchmarkKey> planned;
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array()) return planned;
  for (const auto& entry : json) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) continue;
    planned.push_back({entry["name"].get<std::string>(),
                       entry.contains("params") ? params_from_text(entry["params"].dump()) : Params{}});
  }
  return planned;
}

namespace {

bool is_regex_special(char c) {
  switch (c) {
    case '.': case '^': case '$': case '*': case '+': case '?': case '(': case ')':
    case '[': case ']': case '{': case '}': case '|': case '\\':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string glob_to_regex(const std::string& glob) {
  // (?s) would be a PostgreSQL ARE extension; '.' already matches newlines in
  // its default (non-newline-sensitive) mode, as GLOB's '*' does.
  std::string regex = "^";
  for (std::size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '*') {
      regex += ".*";
    } else if (c == '?') {
      regex += '.';
    } else if (c == '[') {
      // A set runs to the next ']' that is not its first character; an
      // unclosed '[' matches nothing in SQLite, and here too.
      std::size_t j = i + 1;
      if (j < glob.size() && glob[j] == '^') ++j;
      if (j < glob.size() && glob[j] == ']') ++j;
      while (j < glob.size() && glob[j] != ']') ++j;
      if (j >= glob.size()) return "^x^";  // never matches: ^ is an anchor anywhere
      std::string set = "[";
      std::size_t k = i + 1;
      if (glob[k] == '^') {
        set += '^';
        ++k;
      }
      for (; k < j; ++k) {
        // Inside a bracket expression only ']' (first), '\\' (ARE escape),
        // '^' (first) and '[' (starts [: :]) are special.
        if (glob[k] == '\\' || glob[k] == '[') set += '\\';
        set += glob[k];
      }
      set += ']';
      regex += set;
      i = j;
    } else {
      if (is_regex_special(c)) regex += '\\';
      regex += c;
    }
  }
  regex += '$';
  return regex;
}

}  // namespace kbench::store
