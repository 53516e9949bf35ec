#pragma once
// Benchmark parameters: what a benchmark declares (ParamSpec: kind and range),
// and the one resolution (size values + overrides + validation) that both the
// agent and the controller use, so that a value the agent would refuse is
// refused by the controller before anything is written.
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// Parameters as given on the command line or in a plan: strings, checked
// against the benchmark's ParamSpecs by resolve_params().
using Params = std::map<std::string, std::string>;

// Which of a parameter's two values a run starts from.
enum class Size { Quick, Default };
std::string_view to_string(Size size);
// "quick" | "default"; throws InputError naming `what` otherwise.
Size parse_size_name(std::string_view text, std::string_view what);

enum class ParamKind {
  String,   // any text
  Integer,  // decimal integer within [min, max]
  Number,   // decimal number within [min, max], e.g. seconds
  Size,     // bytes: 4096, 128B, 4KB, 2MB, 1GB within [min, max]
  Boolean,  // 0 or 1
  Choice,   // one of `choices`
};
std::string_view to_string(ParamKind kind);
std::optional<ParamKind> param_kind_from_string(std::string_view text);

struct ParamSpec {
  std::string name;
  std::string default_value;  // used with --size default
  std::string quick_value;    // used with --size quick
  std::string help;           // what it means, with its unit
  ParamKind kind = ParamKind::String;
  double min = 0;  // Integer, Number, Size (bytes): inclusive bounds
  double max = 0;
  std::vector<std::string> choices{};  // Choice: the accepted words
  bool list = false;                 // a comma-separated list of one or more values
  std::vector<std::string> words{};    // accepted instead of a value of the kind, e.g. "auto"

  // Declaration helpers: ParamSpec{"calls", "100", "10", "calls"}.integer(1, 1e9)
  ParamSpec integer(double lowest, double highest) const;
  ParamSpec number(double lowest, double highest) const;
  ParamSpec size(double lowest_bytes, double highest_bytes) const;
  ParamSpec boolean() const;
  ParamSpec choice(std::vector<std::string> accepted) const;
  ParamSpec list_of() const;  // the value is a comma-separated list of the kind
  ParamSpec or_word(std::string word) const;
};

// What a valid value looks like: "an integer from 1 to 1000000000".
std::string describe_expected(const ParamSpec& spec);
// "integer 1..1000000000", "choice same|spread|none": the short form for listings.
std::string describe_kind(const ParamSpec& spec);

// Whether `value` is one of the spec's words or of its kind and range.
bool param_value_is_valid(const ParamSpec& spec, const std::string& value);

// Throws InputError "<benchmark>: parameter 'calls' = 'abc': expected an
// integer from 1 to 1000000000".
void validate_param(std::string_view benchmark, const ParamSpec& spec, const std::string& value);

// The complete parameters of one run: each spec's value for `size`, with
// `overrides` applied, every value validated. Throws InputError for an
// unknown key (naming the benchmark and the known keys) or a bad value.
Params resolve_params(std::string_view benchmark, const std::vector<ParamSpec>& specs, Size size,
                      const Params& overrides);

// The agent's `list` output carries the specs so that the controller can
// validate without running anything. A spec without "kind" (an older agent)
// reads as String: accepted as it is, and the agent still checks it.
nlohmann::json to_json(const ParamSpec& spec);
ParamSpec param_spec_from_json(const nlohmann::json& json);

// The parameters as one text, keys in order: "calls=1000;cpu=2", "" for none.
// With the default ';' it is a row's canonical identity: what compare, noise,
// trend and show key rows by, and the params field of the CSVs, so it must
// not change. Listings for people pass a separator of their own (" ").
std::string params_text(const Params& params, std::string_view separator = ";");

// "key=value" -> {key, value}; throws InputError naming `text` otherwise.
std::pair<std::string, std::string> parse_param_assignment(std::string_view text);

// Typed accessors for values resolve_params() has validated; throw
// InputError naming the parameter and the bad value all the same.
std::int64_t param_int(const Params& params, const std::string& key);
double param_double(const Params& params, const std::string& key);
const std::string& param_string(const Params& params, const std::string& key);
// The comma-separated items of a list parameter, in order, blanks dropped.
std::vector<std::string> param_list(const Params& params, const std::string& key);

// "4KB", "2MB", "1GB", "128B", "4096" -> bytes; throws InputError.
std::uint64_t parse_size(std::string_view text, std::string_view what);

}  // namespace kbench
