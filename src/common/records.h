#pragma once
// The JSON Lines protocol between kbench-agent and the controller: one JSON
// object per line, each with a "type". Every record has a struct here, and
// both sides convert through to_json / record_from_json, so the writer and
// the reader cannot drift apart. docs/agent-protocol.md documents it.
//
//   {"type":"fingerprint","data":{...}}                       kbench-agent fingerprint
//   {"type":"benchmark","benchmark":"syscall/getpid","params":{...},
//    "size":"quick","cpu":0,"warmups":1,"repeats":5,
//    "result_classes":[{"name":"mean","unit":"ns","better":"lower"},...]}
//                                                             start of a run
//   {"type":"sample","benchmark":B,"resultclass":"mean","unit":"ns",
//    "better":"lower","repeat":0,"value":123.4}               one value
//   {"type":"repeat_end","benchmark":B,"repeat":0,"seconds":1.2,"involuntary_switches":0}
//                                                             the repeat's samples are complete
//   {"type":"info","benchmark":B,"key":"timer_overhead_ticks","value":...}
//   {"type":"skipped","benchmark":B,"reason":"..."}
//   {"type":"error","benchmark":B,"message":"..."}
//   {"type":"kernel_profile","benchmark":B,"period_ns":250000,"samples":N,
//    "lost":0,"unresolved":0,"unlisted":0,"functions":{"fn":count,...}}
//   {"type":"kernel_profile","benchmark":B,"unavailable":"reason"}
//                                                             run with --kernel-profile
//   {"type":"end","benchmark":B,"status":"ok"|"skipped"|"error"}
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/params.h"
#include "common/result_class.h"

namespace kbench::records {

inline constexpr const char* kFingerprint = "fingerprint";
inline constexpr const char* kBenchmark = "benchmark";
inline constexpr const char* kSample = "sample";
inline constexpr const char* kRepeatEnd = "repeat_end";
inline constexpr const char* kInfo = "info";
inline constexpr const char* kSkipped = "skipped";
inline constexpr const char* kError = "error";
inline constexpr const char* kEnd = "end";
inline constexpr const char* kKernelProfile = "kernel_profile";

// A record that does not follow the protocol (missing or mistyped field,
// unknown type, value out of range). Not the user's input: an agent fault.
struct BadRecord : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Fingerprint {
  nlohmann::json data = nlohmann::json::object();  // docs/agent-protocol.md lists the keys
};

// The start of a run: what the agent is about to measure.
struct BenchmarkStart {
  std::string benchmark;
  Params params;  // effective: the size's values with the overrides applied
  std::string size = "default";
  std::optional<int> cpu;  // nullopt: not pinned
  int warmups = 0;
  int repeats = 1;
  // What every repeat reports for these parameters on this machine (result
  // classes can embed parameters and depend on the machine, so only the
  // agent can say; the controller holds each repeat to this list).
  std::vector<ResultClass> result_classes;
};

struct Sample {
  std::string benchmark;
  ResultClass result_class;
  int repeat = 0;
  double value = 0;
};

struct RepeatEnd {
  std::string benchmark;
  int repeat = 0;
  double seconds = 0;
  long involuntary_switches = 0;
};

struct Info {
  std::string benchmark;
  std::string key;
  nlohmann::json value;  // a string, or the affinity array
};

struct Skipped {
  std::string benchmark;
  std::string reason;
};

struct Error {
  std::string benchmark;
  std::string message;
};

enum class EndStatus { Ok, Skipped, Error };
std::string_view to_string(EndStatus status);

struct End {
  std::string benchmark;
  EndStatus status = EndStatus::Ok;
};

// Where the measured repeats' kernel time went (`run --kernel-profile`):
// cpu-clock samples of the kernel IP per function, summed over the repeats,
// or why there is no profile.
struct KernelProfile {
  std::string benchmark;
  std::optional<std::string> unavailable;  // set: nothing else is
  std::uint64_t period_ns = 0;             // CPU time between samples
  std::uint64_t samples = 0;               // kernel samples taken
  std::uint64_t lost = 0;                  // dropped by the kernel (buffer full)
  std::uint64_t unresolved = 0;            // at no known kernel symbol
  std::uint64_t unlisted = 0;              // in functions beyond the record's cap
  std::map<std::string, std::uint64_t> functions;
};

// The most functions one kernel_profile record lists (the rest are counted in
// `unlisted`): it keeps the record well under the reader's line limit.
inline constexpr std::size_t kMaxProfileFunctions = 2000;

using Record = std::variant<Fingerprint, BenchmarkStart, Sample, RepeatEnd, Info, Skipped, Error, End, KernelProfile>;

// The "type" word of a record.
std::string_view type_of(const Record& record);
// The benchmark a record belongs to ("" for a fingerprint).
const std::string& benchmark_of(const Record& record);

nlohmann::json to_json(const Fingerprint& record);
nlohmann::json to_json(const BenchmarkStart& record);
nlohmann::json to_json(const Sample& record);
nlohmann::json to_json(const RepeatEnd& record);
nlohmann::json to_json(const Info& record);
nlohmann::json to_json(const Skipped& record);
nlohmann::json to_json(const Error& record);
nlohmann::json to_json(const End& record);
nlohmann::json to_json(const KernelProfile& record);
nlohmann::json to_json(const Record& record);

// The record in `json`, every field checked (types, non-empty names, units
// and directions, finite values, no negative times, rates or sizes). Fields
// the reader does not know are ignored, so a newer agent may add some.
// Throws BadRecord naming the record type and the field.
Record record_from_json(const nlohmann::json& json);
// The same for a sample only; throws BadRecord for any other record.
Sample sample_from_json(const nlohmann::json& json);

// A result class as the catalogue and the benchmark record write it:
// {"name":..., "unit":..., "better":"higher"|"lower"}.
nlohmann::json to_json(const ResultClass& result_class);
ResultClass result_class_from_json(const nlohmann::json& json);

// True for units of quantities that cannot be negative: times (ns, usec,
// seconds, ticks, ...), sizes (B, bytes, MB, ...) and rates of anything per
// unit of time (ops/sec, Mbps). A negative value in such a unit is a fault of
// the benchmark, whatever it measured. Other units (%, a score) may be negative.
bool unit_cannot_be_negative(std::string_view unit);

}  // namespace kbench::records
