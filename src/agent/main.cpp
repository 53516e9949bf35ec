// kbench-agent: runs benchmarks on the machine under test and reports in JSON
// Lines on stdout (docs/agent-protocol.md). Statically linked and free of
// database or YAML code, so it can be copied onto any Linux machine or VM.
#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/containment.h"
#include "benchmarks/benchmark.h"
#include "benchmarks/harness.h"
#include "common/cpu_list.h"
#include "common/elf_machine.h"
#include "common/errors.h"
#include "common/params.h"
#include "common/records.h"
#include "sysinfo/fingerprint.h"
#include "sysinfo/fingerprint_view.h"
#include "timing/affinity.h"
#include "timing/clock.h"
#include "timing/cycle_counter.h"

namespace {

using nlohmann::json;
namespace bench = kbench::bench;
namespace records = kbench::records;

// The JSON Lines writer. Every line is flushed: the controller reads the
// stream live and commits each repeat as soon as its repeat_end arrives.
void write_record(const records::Record& record) {
  // Strings from the system (hostname, cmdline) need not be UTF-8; replace
  // bad bytes rather than lose the record.
  std::cout << records::to_json(record).dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
  // A failure is also told on stderr, for a person running the agent by hand.
  if (const auto* error = std::get_if<records::Error>(&record)) {
    std::cerr << "kbench-agent: " << error->benchmark << ": " << error->message << '\n';
  }
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
    for (const auto& spec : benchmark->params()) params.push_back(kbench::to_json(spec));
    json classes = json::array();
    const auto defaults = bench::resolve_params(*benchmark, bench::Size::Default, {});
    for (const auto& rc : benchmark->result_classes(defaults)) {
      json entry = records::to_json(rc);
      entry["label"] = rc.label();
      classes.push_back(entry);
    }
    json entry = {{"name", name},
                  {"description", benchmark->description()},
                  {"params", params},
                  {"result_classes", classes}};
    // An open family (kfunc/<function>): every name with this prefix runs,
    // with this entry's params and result classes.
    if (const auto prefix = registry.family_prefix(name)) entry["family"] = *prefix;
    benchmarks.push_back(entry);
  }
  std::cout << json{{"benchmarks", benchmarks}}.dump(2) << '\n' << std::flush;
  return kbench::kExitOk;
}

int print_fingerprint() {
  namespace key = kbench::sysinfo::fingerprint_key;
  json data = kbench::sysinfo::fingerprint();
  try {
    const auto& calibration = kbench::timing::calibration();
    // Fewer brackets than a benchmark's prepare() takes: a fingerprint is
    // asked for at every session's start and end.
    const auto overhead = kbench::timing::measure_timer_overhead(50000);
    data[key::kTimer] = {{"counter", kbench::timing::counter::kName},
                      // Which instructions bracket a measurement: end()'s
                      // depends on whether the CPU has rdtscp.
                      {"begin_read", kbench::timing::counter::kBeginSequence},
                      {"end_read", kbench::timing::counter::end_sequence()},
                      {"ticks_per_second", calibration.ticks_per_second},
                      {"nominal_hz", calibration.nominal_hz > 0 ? json(calibration.nominal_hz) : json(nullptr)},
                      // How far the calibration is from CNTFRQ_EL0: firmware that
                      // programs a wrong frequency shows here.
                      {"nominal_deviation", calibration.nominal_hz > 0
                                                ? json(calibration.ticks_per_second / calibration.nominal_hz - 1)
                                                : json(nullptr)},
                      {"overhead_ticks", overhead.cost_ticks},
                      {"overhead_ns", calibration.ticks_to_ns(overhead.cost_ticks)},
                      {"overhead_statistic", overhead.statistic}};
  } catch (const std::exception&) {
    data[key::kTimer] = nullptr;  // an unusable counter is a fact, not a failure
  }
  // What the controller checks --cpus against before a session begins, also
  // on a remote SUT.
  data[key::kCpusAllowed] = kbench::format_cpu_list(kbench::timing::current_affinity());
  data[key::kContainment] = kbench::agent::containment_method();
  write_record(records::Fingerprint{data});
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
  bool kernel_profile = false;
};

std::string known_names() {
  std::string out;
  for (const auto& name : bench::Registry::instance().names()) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

// --cpu and --cpus name CPUs this process may use.
std::vector<int> parse_allowed_cpus(const std::string& text, const std::string& what) {
  const auto cpus = kbench::parse_cpu_list(text, what);
  kbench::require_cpus(cpus, kbench::timing::current_affinity(), what, text, "the CPUs this process may use");
  return cpus;
}

int run_benchmark(const RunRequest& request) {
  // Everything that can be wrong with the input is checked before the first
  // line is written: a bad request leaves stdout empty.
  const auto& registry = bench::Registry::instance();
  auto benchmark = registry.create(request.benchmark);
  if (!benchmark) {
    return fail_input("unknown benchmark '" + request.benchmark + "' (known: " + known_names() + ")");
  }
  kbench::Params overrides;
  for (const auto& text : request.params) {
    auto [key, value] = kbench::parse_param_assignment(text);
    if (!overrides.emplace(key, value).second) {
      throw kbench::InputError("--param " + text + ": parameter '" + key + "' given twice");
    }
  }
  const auto size = kbench::parse_size_name(request.size, "--size");
  const kbench::Params params = bench::resolve_params(*benchmark, size, overrides);
  bench::RunSettings settings;
  settings.size = request.size;
  settings.warmups = request.warmups;
  settings.repeats = request.repeats;
  settings.kernel_profile = request.kernel_profile;
  if (request.cpus) {
    // The whole agent (and every task a benchmark starts) stays on these CPUs;
    // single-task benchmarks pin to the first unless --cpu says otherwise.
    const auto cpus = parse_allowed_cpus(*request.cpus, "--cpus");
    kbench::timing::restrict_to_cpus(cpus, "--cpus '" + *request.cpus + "'");
    settings.where.cpu = cpus.front();
  }
  if (request.cpu) {
    const auto cpu = parse_allowed_cpus(*request.cpu, "--cpu");
    if (cpu.size() != 1) throw kbench::InputError("--cpu '" + *request.cpu + "': expected one CPU number");
    settings.where.cpu = cpu.front();
  }
  return bench::run_benchmark(*benchmark, request.benchmark, params, settings, write_record);
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
  // Names the machine it was built for: which of the agents beside kbench
  // (kbench-agent, kbench-agent-aarch64) this is.
  app.set_version_flag("--version", std::string("kbench-agent ") + KBENCH_VERSION + " (" +
                                        kbench::kBuiltForMachine + ")");
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
  run->add_flag("--kernel-profile", request.kernel_profile,
                "Sample the kernel during the repeats (perf cpu-clock) and end with a kernel_profile record");
  run->footer(
      "Examples:\n"
      "  kbench-agent run --benchmark syscall/getppid --param calls=20000 --repeats 2 --warmups 1\n"
      "  kbench-agent run -b perf/syscall --size quick --cpu 1\n"
      "  kbench-agent run -b syscall/getppid --repeats 3 --kernel-profile\n"
      "Exit status: 0 ok or skipped, 1 benchmark failed, 2 bad input.\n");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
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
