#include <algorithm>

#include "benchmarks/benchmark.h"
#include "common/errors.h"

namespace kbench::bench {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(std::string name, Factory factory) {
  entries_.emplace_back(std::move(name), std::move(factory));
  std::sort(entries_.begin(), entries_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : entries_) out.push_back(name);
  return out;
}

std::unique_ptr<Benchmark> Registry::create(const std::string& name) const {
  for (const auto& [entry_name, factory] : entries_) {
    if (entry_name == name) return factory();
  }
  return nullptr;
}

Params resolve_params(const Benchmark& benchmark, Size size, const Params& overrides) {
  return ::kbench::resolve_params(benchmark.name(), benchmark.params(), size, overrides);
}

}  // namespace kbench::bench
