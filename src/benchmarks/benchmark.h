#pragma once
// The interface every benchmark family implements. One family per file in
// src/benchmarks/; each file registers its benchmarks with KBENCH_REGISTER.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/params.h"
#include "common/result_class.h"

namespace kbench::bench {

// Declared with a kind and range (common/params.h) so that one shared check
// validates values on the agent and in the controller alike.
using ParamSpec = ::kbench::ParamSpec;
using Size = ::kbench::Size;

struct Measurement {
  ResultClass result_class;
  double value = 0;
};

// Where a benchmark runs: set by the agent from --cpu before run_repeat().
struct Placement {
  int cpu = -1;  // -1: not pinned
};

class Benchmark {
 public:
  virtual ~Benchmark() = default;

  virtual std::string name() const = 0;         // "suite/name"
  virtual std::string description() const = 0;  // one line: what is measured and how
  virtual std::vector<ParamSpec> params() const = 0;
  // The result classes one repeat reports for these (complete) parameters.
  virtual std::vector<ResultClass> result_classes(const Params& params) const = 0;
  // Throws SkipBenchmark when the machine cannot run it, InputError for bad
  // combinations of parameter values (each value alone has been checked
  // against its ParamSpec already). Called once before the warmups.
  virtual void prepare(const Params& /*params*/, const Placement& /*where*/) {}
  // One repeat: exactly one Measurement per declared result class.
  virtual std::vector<Measurement> run_repeat(const Params& params, const Placement& where) = 0;
  // Called once at the end, also after a failed repeat: release everything.
  virtual void finish() {}
  // Facts worth recording with the results, e.g. where tasks were placed
  // ("placement": "server cpu0, client cpu0") or a fallback taken. The agent
  // emits each as an "info" record after prepare() and after the last repeat.
  virtual std::map<std::string, std::string> notes() const { return {}; }
};

using Factory = std::function<std::unique_ptr<Benchmark>()>;
// Makes the benchmark of one name of an open family (kfunc/<function>).
using NamedFactory = std::function<std::unique_ptr<Benchmark>(const std::string& name)>;

class Registry {
 public:
  static Registry& instance();
  void add(std::string name, Factory factory);
  // An open family: every name `prefix<anything>` resolves through `factory`
  // (which throws InputError for a suffix it cannot take); the catalogue
  // lists `listed` (e.g. kfunc/finish_task_switch) as the family's default.
  void add_family(std::string prefix, std::string listed, NamedFactory factory);
  std::vector<std::string> names() const;  // sorted
  // The prefix of the open family whose listed name is `name` ("kfunc/" for
  // kfunc/finish_task_switch), nullopt for a benchmark of its own.
  std::optional<std::string> family_prefix(const std::string& name) const;
  // nullptr when unknown.
  std::unique_ptr<Benchmark> create(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, Factory>> entries_;
  std::vector<std::pair<std::string, NamedFactory>> families_;
  std::map<std::string, std::string> listed_prefixes_;  // listed name -> prefix
};

// Complete parameters for `size`, with `overrides` applied and every value
// checked against its ParamSpec (kbench::resolve_params). Throws InputError.
Params resolve_params(const Benchmark& benchmark, Size size, const Params& overrides);

// An integer parameter as an int: its range was checked against its ParamSpec.
inline int int_param(const Params& params, const std::string& key) {
  return static_cast<int>(param_int(params, key));
}

struct Registrar {
  Registrar(std::string name, Factory factory) {
    Registry::instance().add(std::move(name), std::move(factory));
  }
  Registrar(std::string prefix, std::string listed, NamedFactory factory) {
    Registry::instance().add_family(std::move(prefix), std::move(listed), std::move(factory));
  }
};

}  // namespace kbench::bench

#define KBENCH_CONCAT_INNER(a, b) a##b
#define KBENCH_CONCAT(a, b) KBENCH_CONCAT_INNER(a, b)
// KBENCH_REGISTER("syscall/getpid", [] { return std::make_unique<Getpid>(); });
#define KBENCH_REGISTER(name, factory) \
  static const ::kbench::bench::Registrar KBENCH_CONCAT(kbench_registrar_, __COUNTER__)(name, factory)
// KBENCH_REGISTER_FAMILY("kfunc/", "kfunc/finish_task_switch",
//                        [](const std::string& name) { return std::make_unique<Kfunc>(name); });
#define KBENCH_REGISTER_FAMILY(prefix, listed, factory) \
  static const ::kbench::bench::Registrar KBENCH_CONCAT(kbench_registrar_, __COUNTER__)(prefix, listed, factory)
