#include "common/params.h"

#include <cctype>
#include <charconv>

#include "common/errors.h"

namespace kbench {

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
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw InputError("parameter '" + key + "=" + text + "': expected an integer");
  }
  return value;
}

double param_double(const Params& params, const std::string& key) {
  const std::string& text = param_string(params, key);
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw InputError("parameter '" + key + "=" + text + "': expected a number");
}

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data()) {
    throw InputError(std::string(what) + " '" + std::string(text) +
                     "': expected a size such as 4096, 128B, 4KB, 2MB or 1GB");
  }
  std::string suffix(end, text.data() + text.size());
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::uint64_t scale = 0;
  if (suffix.empty() || suffix == "B") scale = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") scale = 1ull << 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") scale = 1ull << 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") scale = 1ull << 30;
  if (scale == 0) {
    throw InputError(std::string(what) + " '" + std::string(text) +
                     "': expected a size such as 4096, 128B, 4KB, 2MB or 1GB");
  }
  return number * scale;
}

}  // namespace kbench
