#pragma once
// The JSON Lines protocol between kbench-agent and the controller. One JSON
// object per line, each with a "type". docs/agent-protocol.md documents it.
//
//   {"type":"fingerprint","data":{...}}                       kbench-agent fingerprint
//   {"type":"benchmark","benchmark":"syscall/getpid","params":{...},
//    "size":"quick","cpu":0,"warmups":1,"repeats":5}         start of a run
//   {"type":"sample","benchmark":B,"resultclass":"mean","unit":"ns",
//    "better":"lower","repeat":0,"value":123.4}               one value
//   {"type":"repeat_end","benchmark":B,"repeat":0,"seconds":1.2}
//                                                             the repeat's samples are complete
//   {"type":"info","benchmark":B,"key":"timer_overhead_ticks","value":...}
//   {"type":"skipped","benchmark":B,"reason":"..."}
//   {"type":"error","benchmark":B,"message":"..."}
//   {"type":"end","benchmark":B,"status":"ok"|"skipped"|"error"}
#include <nlohmann/json.hpp>
#include <string>

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

struct Sample {
  std::string benchmark;
  ResultClass result_class;
  int repeat = 0;
  double value = 0;
};

nlohmann::json to_json(const Sample& sample);
// Throws InputError naming the field when the record is not a valid sample.
Sample sample_from_json(const nlohmann::json& record);

}  // namespace kbench::records
