#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace kbench {

// Benchmark parameters as given on the command line or in a plan: strings,
// validated and converted by the benchmark that declares them.
using Params = std::map<std::string, std::string>;

// "key=value" -> {key, value}; throws InputError naming `text` otherwise.
std::pair<std::string, std::string> parse_param_assignment(std::string_view text);

// Typed accessors; throw InputError naming the parameter and the bad value.
std::int64_t param_int(const Params& params, const std::string& key);
double param_double(const Params& params, const std::string& key);
const std::string& param_string(const Params& params, const std::string& key);

// "4KB", "2MB", "1GB", "128B", "4096" -> bytes; throws InputError.
std::uint64_t parse_size(std::string_view text, std::string_view what);

}  // namespace kbench
