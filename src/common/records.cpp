#include "common/records.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

namespace kbench::records {

using nlohmann::json;

std::string_view to_string(EndStatus status) {
  switch (status) {
    case EndStatus::Ok:
      return "ok";
    case EndStatus::Skipped:
      return "skipped";
    case EndStatus::Error:
      return "error";
  }
  return "error";
}

namespace {

std::optional<EndStatus> parse_end_status(std::string_view text) {
  if (text == "ok") return EndStatus::Ok;
  if (text == "skipped") return EndStatus::Skipped;
  if (text == "error") return EndStatus::Error;
  return std::nullopt;
}

template <typename... Names>
bool one_of(std::string_view text, Names... names) {
  return ((text == names) || ...);
}

bool is_time_unit(std::string_view unit) {
  return one_of(unit, "ns", "nsec", "us", "usec", "µs", "ms", "msec", "s", "sec", "secs", "second", "seconds",
                "min", "minutes", "ticks", "cycles");
}

bool is_size_unit(std::string_view unit) {
  return one_of(unit, "B", "bytes", "KB", "kB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "pages");
}

// Reads the fields of one record, naming the record and the field in every
// complaint: "'sample' record: field 'value': expected a finite number".
class Fields {
 public:
  // `what`: the record type, or the kind of nested object ("result class").
  Fields(const json& record, std::string_view what, bool is_record = true)
      : record_(record), what_(what) {
    if (is_record) what_ = std::string("'").append(what).append("' record");
  }

  [[noreturn]] void bad(std::string_view key, std::string_view expected) const {
    throw BadRecord(what_ + ": field '" + std::string(key) + "': expected " + std::string(expected));
  }

  const json* find(const char* key) const {
    const auto it = record_.find(key);
    return it == record_.end() ? nullptr : &*it;
  }

  // A printable string: no control characters (they would break a table or
  // a one-line message), non-empty unless `may_be_empty`.
  std::string text(const char* key, bool may_be_empty = false) const {
    const json* value = find(key);
    if (!value || !value->is_string()) bad(key, "a string");
    std::string out = value->get<std::string>();
    if (out.empty() && !may_be_empty) bad(key, "a non-empty string");
    for (const char c : out) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) bad(key, "a string without control characters");
    }
    return out;
  }

  long long integer(const char* key, long long min, long long max) const {
    const json* value = find(key);
    if (!value || !value->is_number_integer()) bad(key, "an integer");
    // A value beyond long long arrives as number_unsigned: compare unsigned.
    if (value->is_number_unsigned() && value->get<unsigned long long>() > static_cast<unsigned long long>(max)) {
      bad(key, "an integer from " + std::to_string(min) + " to " + std::to_string(max));
    }
    const long long out = value->get<long long>();
    if (out < min || out > max) bad(key, "an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return out;
  }

  double number(const char* key) const {
    const json* value = find(key);
    if (!value || !value->is_number()) bad(key, "a number");
    const double out = value->get<double>();
    if (!std::isfinite(out)) bad(key, "a finite number");
    return out;
  }

  const json& object(const char* key) const {
    const json* value = find(key);
    if (!value || !value->is_object()) bad(key, "an object");
    return *value;
  }

 private:
  const json& record_;
  std::string what_;
};

constexpr long long kMaxCount = std::numeric_limits<int>::max();

ResultClass result_class_fields(const Fields& fields, const char* name_key) {
  ResultClass rc;
  rc.name = fields.text(name_key);
  rc.unit = fields.text("unit");
  // The unit closes the label "name (unit)": parentheses would make it ambiguous.
  if (rc.unit.find_first_of("()") != std::string::npos) fields.bad("unit", "a unit without parentheses");
  const auto better = parse_better(fields.text("better"));
  if (!better) fields.bad("better", "\"higher\" or \"lower\"");
  rc.better = *better;
  return rc;
}

BenchmarkStart start_from(const json& record) {
  const Fields f(record, kBenchmark);
  BenchmarkStart start;
  start.benchmark = f.text("benchmark");
  for (const auto& [key, value] : f.object("params").items()) {
    if (key.empty() || !value.is_string()) f.bad("params", "an object of non-empty names to string values");
    start.params[key] = value.get<std::string>();
  }
  start.size = f.text("size");
  if (const json* cpu = f.find("cpu"); cpu && !cpu->is_null()) {
    start.cpu = static_cast<int>(f.integer("cpu", 0, kMaxCount));
  } else if (!cpu) {
    f.bad("cpu", "a CPU number or null");
  }
  start.warmups = static_cast<int>(f.integer("warmups", 0, kMaxCount));
  start.repeats = static_cast<int>(f.integer("repeats", 1, kMaxCount));
  const json* classes = f.find("result_classes");
  if (!classes || !classes->is_array()) f.bad("result_classes", "an array of result classes");
  std::set<std::string> labels;
  for (const auto& item : *classes) {
    try {
      start.result_classes.push_back(result_class_from_json(item));
    } catch (const BadRecord& bad) {
      f.bad("result_classes", std::string("valid result classes (") + bad.what() + ")");
    }
    if (!labels.insert(start.result_classes.back().label()).second) {
      f.bad("result_classes", "each result class once ('" + start.result_classes.back().label() + "' is twice)");
    }
  }
  return start;
}

Sample sample_from(const json& record) {
  const Fields f(record, kSample);
  Sample s;
  s.benchmark = f.text("benchmark");
  s.result_class = result_class_fields(f, "resultclass");
  s.repeat = static_cast<int>(f.integer("repeat", 0, kMaxCount));
  s.value = f.number("value");
  if (s.value < 0 && unit_cannot_be_negative(s.result_class.unit)) {
    f.bad("value", "a value >= 0 for a quantity in " + s.result_class.unit + ", not " + json(s.value).dump());
  }
  return s;
}

RepeatEnd repeat_end_from(const json& record) {
  const Fields f(record, kRepeatEnd);
  RepeatEnd end;
  end.benchmark = f.text("benchmark");
  end.repeat = static_cast<int>(f.integer("repeat", 0, kMaxCount));
  end.seconds = f.number("seconds");
  if (end.seconds < 0) f.bad("seconds", "a duration >= 0");
  end.involuntary_switches = static_cast<long>(f.integer("involuntary_switches", 0, std::numeric_limits<long>::max()));
  return end;
}

constexpr long long kMaxSamples = std::numeric_limits<long long>::max();

KernelProfile kernel_profile_from(const json& record) {
  const Fields f(record, kKernelProfile);
  KernelProfile profile;
  profile.benchmark = f.text("benchmark");
  if (f.find("unavailable")) {
    profile.unavailable = f.text("unavailable");
    return profile;
  }
  const auto count = [&](const char* key) { return static_cast<std::uint64_t>(f.integer(key, 0, kMaxSamples)); };
  profile.period_ns = static_cast<std::uint64_t>(f.integer("period_ns", 1, kMaxSamples));
  profile.samples = count("samples");
  profile.lost = count("lost");
  profile.unresolved = count("unresolved");
  profile.unlisted = count("unlisted");
  const auto& functions = f.object("functions");
  if (functions.size() > kMaxProfileFunctions) {
    f.bad("functions", "at most " + std::to_string(kMaxProfileFunctions) + " functions");
  }
  std::uint64_t listed = 0;
  for (const auto& [name, value] : functions.items()) {
    const bool printable = std::none_of(name.begin(), name.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (name.empty() || !printable || !value.is_number_unsigned() || value.get<std::uint64_t>() == 0) {
      f.bad("functions", "an object of function names to sample counts above 0");
    }
    profile.functions[name] = value.get<std::uint64_t>();
    listed += value.get<std::uint64_t>();
  }
  if (listed + profile.unresolved + profile.unlisted != profile.samples) {
    f.bad("samples", "the sum of the functions' counts, unresolved and unlisted");
  }
  return profile;
}

}  // namespace

std::string_view type_of(const Record& record) {
  static constexpr std::array<const char*, std::variant_size_v<Record>> kTypes = {
      kFingerprint, kBenchmark, kSample, kRepeatEnd, kInfo, kSkipped, kError, kEnd, kKernelProfile};
  return kTypes[record.index()];
}

const std::string& benchmark_of(const Record& record) {
  static const std::string none;
  return std::visit(
      [](const auto& r) -> const std::string& {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, Fingerprint>) {
          return none;
        } else {
          return r.benchmark;
        }
      },
      record);
}

json to_json(const ResultClass& result_class) {
  return {{"name", result_class.name},
          {"unit", result_class.unit},
          {"better", std::string(to_string(result_class.better))}};
}

ResultClass result_class_from_json(const json& json) {
  if (!json.is_object()) throw BadRecord("result class: expected an object with name, unit and better");
  return result_class_fields(Fields(json, "result class", /*is_record=*/false), "name");
}

json to_json(const Fingerprint& record) { return {{"type", kFingerprint}, {"data", record.data}}; }

json to_json(const BenchmarkStart& record) {
  json classes = json::array();
  for (const auto& rc : record.result_classes) classes.push_back(to_json(rc));
  return {{"type", kBenchmark},
          {"benchmark", record.benchmark},
          {"params", record.params},
          {"size", record.size},
          {"cpu", record.cpu ? json(*record.cpu) : json(nullptr)},
          {"warmups", record.warmups},
          {"repeats", record.repeats},
          {"result_classes", classes}};
}

json to_json(const Sample& sample) {
  return {{"type", kSample},
          {"benchmark", sample.benchmark},
          {"resultclass", sample.result_class.name},
          {"unit", sample.result_class.unit},
          {"better", std::string(to_string(sample.result_class.better))},
          {"repeat", sample.repeat},
          {"value", sample.value}};
}

json to_json(const RepeatEnd& record) {
  return {{"type", kRepeatEnd},
          {"benchmark", record.benchmark},
          {"repeat", record.repeat},
          {"seconds", record.seconds},
          {"involuntary_switches", record.involuntary_switches}};
}

json to_json(const Info& record) {
  return {{"type", kInfo}, {"benchmark", record.benchmark}, {"key", record.key}, {"value", record.value}};
}

json to_json(const Skipped& record) {
  return {{"type", kSkipped}, {"benchmark", record.benchmark}, {"reason", record.reason}};
}

json to_json(const Error& record) {
  return {{"type", kError}, {"benchmark", record.benchmark}, {"message", record.message}};
}

json to_json(const End& record) {
  return {{"type", kEnd}, {"benchmark", record.benchmark}, {"status", std::string(to_string(record.status))}};
}

json to_json(const KernelProfile& record) {
  if (record.unavailable) {
    return {{"type", kKernelProfile}, {"benchmark", record.benchmark}, {"unavailable", *record.unavailable}};
  }
  return {{"type", kKernelProfile}, {"benchmark", record.benchmark}, {"period_ns", record.period_ns},
          {"samples", record.samples},  {"lost", record.lost},           {"unresolved", record.unresolved},
          {"unlisted", record.unlisted}, {"functions", record.functions}};
}

json to_json(const Record& record) {
  return std::visit([](const auto& r) { return to_json(r); }, record);
}

Record record_from_json(const json& record) {
  if (!record.is_object()) throw BadRecord("a record must be a JSON object");
  const auto type_field = record.find("type");
  if (type_field == record.end() || !type_field->is_string()) throw BadRecord("a record without a string \"type\"");
  const std::string type = type_field->get<std::string>();
  if (type == kFingerprint) {
    const Fields f(record, kFingerprint);
    return Fingerprint{f.object("data")};
  }
  if (type == kBenchmark) return start_from(record);
  if (type == kSample) return sample_from(record);
  if (type == kRepeatEnd) return repeat_end_from(record);
  if (type == kInfo) {
    const Fields f(record, kInfo);
    const json* value = f.find("value");
    if (!value) f.bad("value", "a value");
    return Info{f.text("benchmark"), f.text("key"), *value};
  }
  if (type == kSkipped) {
    const Fields f(record, kSkipped);
    return Skipped{f.text("benchmark"), f.text("reason")};
  }
  if (type == kError) {
    const Fields f(record, kError);
    return Error{f.text("benchmark"), f.text("message")};
  }
  if (type == kEnd) {
    const Fields f(record, kEnd);
    End end{f.text("benchmark")};
    const auto status = parse_end_status(f.text("status"));
    if (!status) f.bad("status", "\"ok\", \"skipped\" or \"error\"");
    end.status = *status;
    return end;
  }
  if (type == kKernelProfile) return kernel_profile_from(record);
  // Quoted as JSON so that a hostile type cannot smuggle control characters;
  // cut, so that it cannot fill a message.
  constexpr std::size_t kShown = 40;
  std::string shown = json(type.substr(0, kShown)).dump(-1, ' ', true, json::error_handler_t::replace);
  if (type.size() > kShown) shown += "...";
  throw BadRecord("a record of unknown type " + shown);
}

Sample sample_from_json(const json& json) {
  Record record = record_from_json(json);
  if (auto* sample = std::get_if<Sample>(&record)) return std::move(*sample);
  throw BadRecord("expected a 'sample' record, not '" + std::string(type_of(record)) + "'");
}

bool unit_cannot_be_negative(std::string_view unit) {
  if (is_time_unit(unit) || is_size_unit(unit)) return true;
  // Rates: "ops/sec", "bytes/sec", "msg/sec", "ops/second"; bit rates "Mbps".
  if (const auto slash = unit.rfind('/'); slash != std::string_view::npos) return is_time_unit(unit.substr(slash + 1));
  return unit.size() >= 3 && unit.substr(unit.size() - 3) == "bps";
}

}  // namespace kbench::records
