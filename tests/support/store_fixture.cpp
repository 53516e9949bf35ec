// store-fixture: writes a real SQLite resultstore from a JSON description,
// through the same ResultStore API `kbench run` writes with. The report,
// trend and dashboard tests use it to plant what real runs cannot be made to
// show on demand: an outlier boot, two modes, a step at a known swprofile.
//
//   store-fixture OUT.db SPEC.json
//
// SPEC: {"sut": "vm",                                 (default "fixture")
//        "sut_class": "...",                          (optional)
//        "sessions": [{"swprofile": "A",
//                      "sut": "...",                  (optional, overrides the top one)
//                      "started_at": "2026-01-01T00:00:00Z",   (optional)
//                      "fingerprint": {...},          (optional)
//                      "benchmarks": [{"name": "syscall/getpid", "params": {"k": "v"},
//                                      "results": [{"class": "mean", "unit": "ns",
//                                                   "better": "lower",
//                                                   "values": [one per repeat]}],
//                                      "kernel_profile": {"functions": {"f": 30, "g [mod]": 5},
//                                                         "unresolved": 1}}]}],   (optional)
//                                      (or "kernel_profile": {"unavailable": "reason"})
//        "logs": [{"kind": "bisect", "name": "a..b", "text": "..."}]}   (optional, stored after the sessions)
// Every result of one benchmark must have the same number of values (one per
// repeat). Sessions are written in order, each finished, each benchmark "ok".
// A kernel profile's samples are its functions' counts and `unresolved`
// summed; its period is 250 us.
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/records.h"
#include "common/result_class.h"
#include "store/result_store.h"

namespace st = kbench::store;
using nlohmann::json;

namespace {

st::Sut make_sut(const std::string& name) {
  st::Sut sut;
  sut.name = name;
  sut.hostname = name;
  sut.arch = "x86_64";
  sut.cpu_model = "fixture";
  sut.cpu_count = 2;
  sut.memory_gib = 8;
  return sut;
}

kbench::records::KernelProfile kernel_profile(const st::BenchmarkKey& key, const json& spec) {
  kbench::records::KernelProfile profile;
  profile.benchmark = key.name;
  if (spec.contains("unavailable")) {
    profile.unavailable = spec["unavailable"].get<std::string>();
    return profile;
  }
  profile.period_ns = 250000;
  profile.functions = spec.value("functions", json::object()).get<std::map<std::string, std::uint64_t>>();
  profile.unresolved = spec.value("unresolved", std::uint64_t{0});
  profile.samples = profile.unresolved;
  for (const auto& [function, count] : profile.functions) profile.samples += count;
  return profile;
}

void write_session(st::ResultStore& store, const json& spec, const json& session, int index) {
  st::SessionStart start;
  start.sut = make_sut(session.value("sut", spec.value("sut", std::string("fixture"))));
  start.swprofile = session.at("swprofile").get<std::string>();
  start.fingerprint = session.value("fingerprint", json{{"kernel_release", start.swprofile}});
  if (spec.contains("sut_class") && !start.fingerprint.contains("sut_class")) {
    start.fingerprint["sut_class"] = spec["sut_class"];
  }
  char started[32];
  std::snprintf(started, sizeof started, "2026-01-01T%02d:%02d:00Z", index / 60 % 24, index % 60);
  start.started_at = session.value("started_at", std::string(started));
  for (const auto& benchmark : session.at("benchmarks")) {
    start.planned.push_back({benchmark.at("name").get<std::string>(),
                             benchmark.value("params", json::object()).get<kbench::Params>()});
  }
  const std::int64_t id = store.begin_session(start);
  for (const auto& benchmark : session.at("benchmarks")) {
    const st::BenchmarkKey key{benchmark.at("name").get<std::string>(),
                               benchmark.value("params", json::object()).get<kbench::Params>()};
    const auto& results = benchmark.at("results");
    const std::size_t repeats = results.at(0).at("values").size();
    for (std::size_t repeat = 0; repeat < repeats; ++repeat) {
      std::vector<kbench::records::Sample> samples;
      for (const auto& result : results) {
        const auto better = kbench::parse_better(result.value("better", std::string("lower")));
        if (!better) throw std::runtime_error("better: expected higher or lower");
        const auto& values = result.at("values");
        if (values.size() != repeats) {
          throw std::runtime_error(key.name + ": every result needs " + std::to_string(repeats) + " values");
        }
        samples.push_back({"",
                           {result.at("class").get<std::string>(), result.value("unit", std::string("ns")), *better},
                           static_cast<int>(repeat),
                           values.at(repeat).get<double>()});
      }
      store.add_repeat(id, key, static_cast<int>(repeat), samples);
    }
    if (benchmark.contains("kernel_profile")) {
      store.add_kernel_profile(id, key, kernel_profile(key, benchmark["kernel_profile"]));
    }
    store.record_outcome(id, key, st::Outcome{});
  }
  store.finish_session(id);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT.db SPEC.json\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream in(argv[2]);
    if (!in) throw std::runtime_error(std::string("cannot read ") + argv[2]);
    const json spec = json::parse(in);
    auto store = st::open_store(std::string("sqlite://") + argv[1], st::OpenMode::CreateIfMissing);
    int index = 0;
    for (const auto& session : spec.at("sessions")) write_session(*store, spec, session, index++);
    for (const auto& log : spec.value("logs", json::array())) {
      store->add_log(log.at("kind").get<std::string>(), log.at("name").get<std::string>(),
                     log.at("text").get<std::string>());
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "store-fixture: %s: %s\n", argv[2], error.what());
    return 2;
  }
  return 0;
}
