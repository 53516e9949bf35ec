// kbench-agent: runs benchmarks on the machine under test and reports in JSON
// Lines on stdout (docs/agent-protocol.md). Statically linked and free of
// database or YAML code, so it can be copied onto any Linux machine or VM.
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/containment.h"
#include "bench/benchmark.h"
#include "common/errors.h"
#include "common/params.h"
#include "common/records.h"
#include "sysinfo/fingerprint.h"
#include "timing/affinity.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"

namespace {

using nlohmann::json;
namespace bench = kbench::bench;
namespace records = kbench::records;

// Every line is flushed: the controller reads the stream live and commits
// each repeat as soon as its repeat_end arrives.
void emit(const json& record) {
  // Strings from the system (hostname, cmdline) need not be UTF-8; replace
  // bad bytes rather than lose the record.
  std::cout << record.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
}

int fail_input(const std::string& message) {
  std::cerr << "kbench-agent: " << message << '\n';
  return kbench::kExitUsage;
}

int list_catalogue() {
  json benchmarks = json::array();
  const auto& registry = bench::Registry::instance();
  for (const auto& name : registry.names()) {
    const auto benchmark = registry.create(name);
    json params = json::array();
    for (const auto& spec : benchmark->params()) {
      params.push_back({{"name", spec.name},
                        {"default", spec.default_value},
                        {"quick", spec.quick_value},
                        {"help", spec.help}});
    }
    json classes = json::array();
    const auto defaults = bench::resolve_params(*benchmark, bench::Size::Default, {});
    for (const auto& rc : benchmark->result_classes(defaults)) {
      classes.push_back({{"name", rc.name},
                         {"unit", rc.unit},
                         {"better", std::string(kbench::to_string(rc.better))},
                         {"label", rc.label()}});
    }
    benchmarks.push_back({{"name", name},
                          {"description", benchmark->description()},
                          {"params", params},
                          {"result_classes", classes}});
  }
  std::cout << json{{"benchmarks", benchmarks}}.dump(2) << '\n' << std::flush;
  return kbench::kExitOk;
}

int print_fingerprint() {
  json data = kbench::sysinfo::fingerprint();
  try {
    const auto& calibration = kbench::timing::calibration();
    data["timer"] = {{"counter", kbench::timing::counter::kName},
                     {"ticks_per_second", calibration.ticks_per_second},
                     {"nominal_hz", calibration.nominal_hz > 0 ? json(calibration.nominal_hz)
                                                              : json(nullptr)}};
  } catch (const std::exception&) {
    data["timer"] = nullptr;  // an unusable counter is a fact, not a failure
  }
  data["containment"] = kbench::agent::containment_method();
  emit({{"type", records::kFingerprint}, {"data", data}});
  return kbench::kExitOk;
}

struct RunRequest {
  std::string benchmark;
  std::vector<std::string> params;
  int warmups = 1;
  int repeats = 5;
  std::string size = "default";
  std::optional<std::string> cpu;
  std::optional<std::string> cpus;
};

std::string known_names() {
  std::string out;
  for (const auto& name : bench::Registry::instance().names()) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

int parse_cpu(const std::string& text) {
  int cpu = -1;
  std::size_t used = 0;
  try {
    cpu = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const auto allowed = kbench::timing::current_affinity();
  std::string allowed_text;
  for (int c : allowed) allowed_text += (allowed_text.empty() ? "" : ",") + std::to_string(c);
  if (used == 0 || used != text.size() || cpu < 0 ||
      std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
    throw kbench::InputError("--cpu '" + text + "': expected a CPU number this process may use (" +
                             allowed_text + ")");
  }
  return cpu;
}

// "0,2-3" -> {0, 2, 3}; every CPU must be one this process may use.
std::vector<int> parse_cpu_list(const std::string& text) {
  const auto allowed = kbench::timing::current_affinity();
  std::vector<int> cpus;
  std::size_t start = 0;
  auto bad = [&] {
    std::string allowed_text;
    for (int c : allowed) allowed_text += (allowed_text.empty() ? "" : ",") + std::to_string(c);
    return kbench::InputError("--cpus '" + text + "': expected a list such as 0,2-3 of CPUs this process may use (" +
                              allowed_text + ")");
  };
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto dash = item.find('-');
    int first = -1, last = -1;
    try {
      std::size_t used = 0;
      first = std::stoi(item.substr(0, dash), &used);
      if (used != item.substr(0, dash).size()) throw bad();
      last = first;
      if (dash != std::string::npos) {
        last = std::stoi(item.substr(dash + 1), &used);
        if (used != item.size() - dash - 1) throw bad();
      }
    } catch (const std::exception&) {
      throw bad();
    }
    if (first < 0 || last < first) throw bad();
    for (int c = first; c <= last; ++c) {
      if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) throw bad();
      cpus.push_back(c);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cpus;
}

// Checks one repeat's measurements against the declared result classes and
// returns them in declared order. Throws RunError naming what is wrong.
std::vector<bench::Measurement> checked(const std::vector<bench::Measurement>& measured,
                                        const std::vector<kbench::ResultClass>& declared) {
  std::vector<bench::Measurement> ordered;
  for (const auto& rc : declared) {
    int found = 0;
    for (const auto& m : measured) {
      if (m.result_class == rc) {
        ++found;
        if (!std::isfinite(m.value)) {
          throw kbench::RunError("result class '" + rc.label() + "' has the non-finite value " +
                                 std::to_string(m.value));
        }
        ordered.push_back(m);
      }
    }
    if (found != 1) {
      throw kbench::RunError("result class '" + rc.label() + "' reported " + std::to_string(found) +
                             " times in one repeat, expected once");
    }
  }
  for (const auto& m : measured) {
    if (std::find(declared.begin(), declared.end(), m.result_class) == declared.end()) {
      throw kbench::RunError("undeclared result class '" + m.result_class.label() + "' reported");
    }
  }
  return ordered;
}

void emit_notes(const std::string& name, const std::map<std::string, std::string>& notes,
                const std::map<std::string, std::string>& already_sent) {
  for (const auto& [key, value] : notes) {
    const auto sent = already_sent.find(key);
    if (sent != already_sent.end() && sent->second == value) continue;
    emit({{"type", records::kInfo}, {"benchmark", name}, {"key", key}, {"value", value}});
  }
}

// Context switches the kernel forced on the agent so far: a repeat with many
// was disturbed by other work on its CPU.
long involuntary_switches() {
  rusage usage{};
  return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_nivcsw : 0;
}

// The 1-minute load average, when above the number of online CPUs, as a
// warning worth storing with the samples.
std::optional<std::string> busy_warning() {
  double load[1] = {0};
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (getloadavg(load, 1) != 1 || cpus <= 0 || load[0] <= double(cpus)) return std::nullopt;
  char text[128];
  std::snprintf(text, sizeof text, "machine busy: 1-minute load average %.2f on %ld online CPUs",
                load[0], cpus);
  return std::string(text);
}

int run_benchmark(const RunRequest& request) {
  // Everything that can be wrong with the input is checked before the first
  // line is written: a bad request leaves stdout empty.
  const auto& registry = bench::Registry::instance();
  auto benchmark = registry.create(request.benchmark);
  if (!benchmark) {
    return fail_input("unknown benchmark '" + request.benchmark + "' (known: " + known_names() + ")");
  }
  const std::string& name = request.benchmark;
  kbench::Params overrides;
  for (const auto& text : request.params) {
    auto [key, value] = kbench::parse_param_assignment(text);
    if (!overrides.emplace(key, value).second) {
      throw kbench::InputError("--param " + text + ": parameter '" + key + "' given twice");
    }
  }
  const auto size = request.size == "quick" ? bench::Size::Quick : bench::Size::Default;
  const kbench::Params params = bench::resolve_params(*benchmark, size, overrides);
  const auto declared = benchmark->result_classes(params);
  bench::Placement where;
  if (request.cpus) {
    // The whole agent (and every task a benchmark starts) stays on these CPUs;
    // single-task benchmarks pin to the first unless --cpu says otherwise.
    const auto cpus = parse_cpu_list(*request.cpus);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) throw kbench::InputError("--cpus '" + *request.cpus + "': the kernel refused this CPU set");
    where.cpu = cpus.front();
  }
  if (request.cpu) where.cpu = parse_cpu(*request.cpu);

  const json start = {{"type", records::kBenchmark},
                      {"benchmark", name},
                      {"params", params},
                      {"size", request.size},
                      {"cpu", where.cpu >= 0 ? json(where.cpu) : json(nullptr)},
                      {"warmups", request.warmups},
                      {"repeats", request.repeats}};
  auto finish_with = [&](const char* status, const json& record, int exit_code) {
    if (!record.is_null()) emit(record);
    emit({{"type", records::kEnd}, {"benchmark", name}, {"status", status}});
    return exit_code;
  };
  auto error_record = [&](const std::string& message) {
    std::cerr << "kbench-agent: " << name << ": " << message << '\n';
    return json{{"type", records::kError}, {"benchmark", name}, {"message", message}};
  };

  bool started = false;
  try {
    try {
      benchmark->prepare(params, where);
    } catch (const kbench::InputError&) {
      benchmark->finish();
      throw;  // bad parameter value: exit 2 with stdout still empty
    }
    emit(start);
    started = true;
    const auto affinity = kbench::timing::current_affinity();
    emit({{"type", records::kInfo}, {"benchmark", name}, {"key", "affinity"}, {"value", affinity}});
    if (const auto warning = busy_warning()) {
      emit({{"type", records::kInfo}, {"benchmark", name}, {"key", "busy"}, {"value", *warning}});
    }
    const auto notes_after_prepare = benchmark->notes();
    emit_notes(name, notes_after_prepare, {});

    for (int i = 0; i < request.warmups; ++i) checked(benchmark->run_repeat(params, where), declared);
    for (int repeat = 0; repeat < request.repeats; ++repeat) {
      const double began = kbench::timing::monotonic_seconds();
      const long switches_before = involuntary_switches();
      const auto measured = checked(benchmark->run_repeat(params, where), declared);
      const double seconds = kbench::timing::monotonic_seconds() - began;
      const long switches = involuntary_switches() - switches_before;
      for (const auto& m : measured) {
        emit(records::to_json(records::Sample{name, m.result_class, repeat, m.value}));
      }
      emit({{"type", records::kRepeatEnd}, {"benchmark", name}, {"repeat", repeat},
            {"seconds", seconds}, {"involuntary_switches", switches}});
    }
    emit_notes(name, benchmark->notes(), notes_after_prepare);
    benchmark->finish();
    return finish_with("ok", nullptr, kbench::kExitOk);
  } catch (const kbench::SkipBenchmark& skip) {
    benchmark->finish();
    if (!started) emit(start);
    return finish_with("skipped",
                       {{"type", records::kSkipped}, {"benchmark", name}, {"reason", skip.what()}},
                       kbench::kExitOk);
  } catch (const kbench::InputError& bad) {
    if (!started) throw;
    // A parameter only found bad mid-run: the stream has begun, so close it.
    benchmark->finish();
    return finish_with("error", error_record(bad.what()), kbench::kExitUsage);
  } catch (const std::exception& failure) {
    benchmark->finish();
    if (!started) emit(start);
    return finish_with("error", error_record(failure.what()), kbench::kExitFailure);
  }
}

constexpr const char* kExamples = R"(Examples:
  kbench-agent list
  kbench-agent fingerprint
  kbench-agent run --benchmark syscall/getpid --size quick --warmups 1 --repeats 5 --cpu 0
  kbench-agent run --benchmark perf/syscall --param loops=1000000 --repeats 3
)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kbench-agent: runs kernel benchmarks on this machine and writes JSON Lines to stdout"};
  app.footer(kExamples);
  app.require_subcommand(1);

  auto* list = app.add_subcommand("list", "Print the benchmark catalogue as one JSON document");
  list->footer("Example:\n  kbench-agent list | jq '.benchmarks[].name'\n");

  auto* fingerprint = app.add_subcommand(
      "fingerprint", "Print the machine and software fingerprint as one JSON Lines record");
  fingerprint->footer("Example:\n  kbench-agent fingerprint\n");

  RunRequest request;
  auto* run = app.add_subcommand("run", "Run one benchmark; JSON Lines records on stdout");
  run->add_option("--benchmark,-b", request.benchmark, "Benchmark name, e.g. syscall/getpid")
      ->required();
  run->add_option("--param,-p", request.params, "Parameter override key=value (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--warmups,-w", request.warmups, "Repeats run and discarded first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  run->add_option("--repeats,-r", request.repeats, "Repeats reported")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  run->add_option("--size,-s", request.size, "Parameter defaults: quick or default")
      ->check(CLI::IsMember({"quick", "default"}))
      ->capture_default_str();
  run->add_option("--cpu,-c", request.cpu, "CPU to pin the benchmark to");
  run->add_option("--cpus", request.cpus, "CPUs the agent and its tasks may use, e.g. 0,2-3 (first: --cpu default)");
  run->footer(
      "Examples:\n"
      "  kbench-agent run --benchmark syscall/getppid --param calls=20000 --repeats 2 --warmups 1\n"
      "  kbench-agent run -b perf/syscall --size quick --cpu 1\n"
      "Exit status: 0 ok or skipped, 1 benchmark failed, 2 bad input.\n");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    return fail_input(std::string(error.what()) + " (see kbench-agent --help)");
  }

  try {
    if (*list) return list_catalogue();
    if (*fingerprint) return print_fingerprint();
    return kbench::agent::run_contained([&] { return run_benchmark(request); });
  } catch (const kbench::InputError& bad) {
    return fail_input(bad.what());
  } catch (const std::exception& failure) {
    std::cerr << "kbench-agent: " << failure.what() << '\n';
    return kbench::kExitFailure;
  }
}
