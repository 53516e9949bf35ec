#include "common/params.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace kbench {

namespace {

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

// Integral bounds print as integers (1000000000, not 1e+09).
std::string format_bound(double value) {
  if (std::floor(value) == value && std::fabs(value) < 9e15) {
    return std::to_string(static_cast<long long>(value));
  }
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string format_bytes(double bytes) {
  const auto whole = static_cast<unsigned long long>(bytes);
  for (const auto& [shift, unit] : {std::pair{30, "GB"}, {20, "MB"}, {10, "KB"}}) {
    const unsigned long long scale = 1ull << shift;
    if (whole >= scale && whole % scale == 0) return std::to_string(whole / scale) + unit;
  }
  return std::to_string(whole) + "B";
}

std::string describe_item(const ParamSpec& spec) {
  switch (spec.kind) {
    case ParamKind::String:
      return "text";
    case ParamKind::Integer:
      return "an integer from " + format_bound(spec.min) + " to " + format_bound(spec.max);
    case ParamKind::Number:
      return "a number from " + format_bound(spec.min) + " to " + format_bound(spec.max);
    case ParamKind::Size:
      return "a size (e.g. 4096, 128B, 4KB, 2MB) from " + format_bytes(spec.min) + " to " + format_bytes(spec.max);
    case ParamKind::Boolean:
      return "0 or 1";
    case ParamKind::Choice:
      return "one of " + join(spec.choices, ", ");
  }
  return "";
}

std::optional<long long> parse_integer(std::string_view text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool item_is_valid(const ParamSpec& spec, std::string_view item) {
  const auto in_range = [&](double value) { return value >= spec.min && value <= spec.max; };
  switch (spec.kind) {
    case ParamKind::String:
      return true;
    case ParamKind::Integer: {
      const auto value = parse_integer(item);
      return value && in_range(static_cast<double>(*value));
    }
    case ParamKind::Number: {
      const auto value = parse_number(item);
      return value && in_range(*value);
    }
    case ParamKind::Size:
      try {
        return in_range(static_cast<double>(parse_size(item, "size")));
      } catch (const InputError&) {
        return false;
      }
    case ParamKind::Boolean:
      return item == "0" || item == "1";
    case ParamKind::Choice:
      for (const auto& choice : spec.choices) {
        if (item == choice) return true;
      }
      return false;
  }
  return false;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    items.emplace_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

}  // namespace

std::string_view to_string(Size size) { return size == Size::Quick ? "quick" : "default"; }

Size parse_size_name(std::string_view text, std::string_view what) {
  if (text == "quick") return Size::Quick;
  if (text == "default") return Size::Default;
  throw InputError(std::string(what) + " '" + std::string(text) + "': expected quick or default");
}

std::string_view to_string(ParamKind kind) {
  switch (kind) {
    case ParamKind::String: return "string";
    case ParamKind::Integer: return "integer";
    case ParamKind::Number: return "number";
    case ParamKind::Size: return "size";
    case ParamKind::Boolean: return "boolean";
    case ParamKind::Choice: return "choice";
  }
  return "string";
}

std::optional<ParamKind> param_kind_from_string(std::string_view text) {
  for (const auto kind : {ParamKind::String, ParamKind::Integer, ParamKind::Number, ParamKind::Size,
                          ParamKind::Boolean, ParamKind::Choice}) {
    if (to_string(kind) == text) return kind;
  }
  return std::nullopt;
}

ParamSpec ParamSpec::integer(double lowest, double highest) const {
  ParamSpec out = *this;
  out.kind = ParamKind::Integer;
  out.min = lowest;
  out.max = highest;
  return out;
}

ParamSpec ParamSpec::number(double lowest, double highest) const {
  ParamSpec out = integer(lowest, highest);
  out.kind = ParamKind::Number;
  return out;
}

ParamSpec ParamSpec::size(double lowest_bytes, double highest_bytes) const {
  ParamSpec out = integer(lowest_bytes, highest_bytes);
  out.kind = ParamKind::Size;
  return out;
}

ParamSpec ParamSpec::boolean() const {
  ParamSpec out = *this;
  out.kind = ParamKind::Boolean;
  return out;
}

ParamSpec ParamSpec::choice(std::vector<std::string> accepted) const {
  ParamSpec out = *this;
  out.kind = ParamKind::Choice;
  out.choices = std::move(accepted);
  return out;
}

ParamSpec ParamSpec::list_of() const {
  ParamSpec out = *this;
  out.list = true;
  return out;
}

ParamSpec ParamSpec::or_word(std::string word) const {
  ParamSpec out = *this;
  out.words.push_back(std::move(word));
  return out;
}

std::string describe_expected(const ParamSpec& spec) {
  std::string expected = spec.list ? "a comma-separated list, each " + describe_item(spec) : describe_item(spec);
  if (!spec.words.empty()) {
    std::vector<std::string> quoted;
    for (const auto& word : spec.words) quoted.push_back("'" + word + "'");
    expected = join(quoted, ", ") + " or " + expected;
  }
  return expected;
}

std::string describe_kind(const ParamSpec& spec) {
  std::string out;
  switch (spec.kind) {
    case ParamKind::String: out = "string"; break;
    case ParamKind::Integer: out = "integer " + format_bound(spec.min) + ".." + format_bound(spec.max); break;
    case ParamKind::Number: out = "number " + format_bound(spec.min) + ".." + format_bound(spec.max); break;
    case ParamKind::Size: out = "size " + format_bytes(spec.min) + ".." + format_bytes(spec.max); break;
    case ParamKind::Boolean: out = "boolean 0|1"; break;
    case ParamKind::Choice: out = "choice " + join(spec.choices, "|"); break;
  }
  if (spec.list) out = "list of " + out;
  for (const auto& word : spec.words) out = word + " | " + out;
  return out;
}

bool param_value_is_valid(const ParamSpec& spec, const std::string& value) {
  for (const auto& word : spec.words) {
    if (value == word) return true;
  }
  if (!spec.list) return item_is_valid(spec, value);
  for (const auto& item : split_list(value)) {
    if (item.empty() || !item_is_valid(spec, item)) return false;
  }
  return true;
}

void validate_param(std::string_view benchmark, const ParamSpec& spec, const std::string& value) {
  if (!param_value_is_valid(spec, value)) {
    throw InputError(std::string(benchmark) + ": parameter '" + spec.name + "' = '" + value + "': expected " +
                     describe_expected(spec));
  }
}

Params resolve_params(std::string_view benchmark, const std::vector<ParamSpec>& specs, Size size,
                      const Params& overrides) {
  Params params;
  std::vector<std::string> known;
  for (const auto& spec : specs) {
    params[spec.name] = size == Size::Quick ? spec.quick_value : spec.default_value;
    known.push_back(spec.name);
  }
  for (const auto& [key, value] : overrides) {
    if (!params.count(key)) {
      throw InputError(std::string(benchmark) + ": no parameter '" + key + "' (known: " +
                       (known.empty() ? std::string("none") : join(known, ", ")) + ")");
    }
    params[key] = value;
  }
  for (const auto& spec : specs) validate_param(benchmark, spec, params.at(spec.name));
  return params;
}

nlohmann::json to_json(const ParamSpec& spec) {
  nlohmann::json out = {{"name", spec.name},
                        {"default", spec.default_value},
                        {"quick", spec.quick_value},
                        {"help", spec.help},
                        {"kind", std::string(to_string(spec.kind))},
                        {"list", spec.list}};
  if (spec.kind == ParamKind::Integer || spec.kind == ParamKind::Number || spec.kind == ParamKind::Size) {
    out["min"] = spec.min;
    out["max"] = spec.max;
  }
  if (spec.kind == ParamKind::Choice) out["choices"] = spec.choices;
  if (!spec.words.empty()) out["words"] = spec.words;
  return out;
}

ParamSpec param_spec_from_json(const nlohmann::json& json) {
  const auto text = [&](const char* key) {
    const auto it = json.find(key);
    return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const auto strings = [&](const char* key) {
    std::vector<std::string> out;
    if (const auto it = json.find(key); it != json.end() && it->is_array()) {
      for (const auto& item : *it) {
        if (item.is_string()) out.push_back(item.get<std::string>());
      }
    }
    return out;
  };
  const auto number = [&](const char* key) {
    const auto it = json.find(key);
    return it != json.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  ParamSpec spec{text("name"), text("default"), text("quick"), text("help")};
  // An unknown kind (a newer agent) is not checked here; the agent checks it.
  spec.kind = param_kind_from_string(text("kind")).value_or(ParamKind::String);
  spec.min = number("min");
  spec.max = number("max");
  spec.choices = strings("choices");
  spec.words = strings("words");
  if (const auto it = json.find("list"); it != json.end() && it->is_boolean()) spec.list = it->get<bool>();
  return spec;
}

std::string params_text(const Params& params, std::string_view separator) {
  std::string text;
  for (const auto& [key, value] : params) {
    if (!text.empty()) text += separator;
    text += key + "=" + value;
  }
  return text;
}

std::pair<std::string, std::string> parse_param_assignment(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw InputError("--param '" + std::string(text) + "': expected key=value");
  }
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

const std::string& param_string(const Params& params, const std::string& key) {
  const auto it = params.find(key);
  if (it == params.end()) throw InputError("parameter '" + key + "' is missing");
  return it->second;
}

std::int64_t param_int(const Params& params, const std::string& key) {
  const std::string& text = param_string(params, key);
  const auto value = parse_integer(text);
  if (!value) throw InputError("parameter '" + key + "' = '" + text + "': expected an integer");
  return *value;
}

double param_double(const Params& params, const std::string& key) {
  const std::string& text = param_string(params, key);
  const auto value = parse_number(text);
  if (!value) throw InputError("parameter '" + key + "' = '" + text + "': expected a number");
  return *value;
}

std::vector<std::string> param_list(const Params& params, const std::string& key) {
  std::vector<std::string> items;
  for (auto& item : split_list(param_string(params, key))) {
    if (!item.empty()) items.push_back(std::move(item));
  }
  return items;
}

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  const auto bad = [&] {
    return InputError(std::string(what) + " '" + std::string(text) +
                      "': expected a size such as 4096, 128B, 4KB, 2MB or 1GB");
  };
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data()) throw bad();
  std::string suffix(end, text.data() + text.size());
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned shift = 64;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") shift = 30;
  if (shift == 64) throw bad();
  if (shift > 0 && number > (std::numeric_limits<std::uint64_t>::max() >> shift)) throw bad();
  return number << shift;
}

}  // namespace kbench
