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

void Registry::add_family(std::string prefix, std::string listed, NamedFactory factory) {
  add(listed, [factory, listed] { return factory(listed); });
  listed_prefixes_[listed] = prefix;
  families_.emplace_back(std::move(prefix), std::move(factory));
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : entries_) out.push_back(name);
  return out;
}

std::optional<std::string> Registry::family_prefix(const std::string& name) const {
  const auto it = listed_prefixes_.find(name);
  if (it == listed_prefixes_.end()) return std::nullopt;
  return it->second;
}

std::unique_ptr<Benchmark> Registry::create(const std::string& name) const {
  for (const auto& [entry_name, factory] : entries_) {
    if (entry_name == name) return factory();
  }
  for (const auto& [prefix, factory] : families_) {
    if (name.size() > prefix.size() && name.starts_with(prefix)) return factory(name);
  }
  return nullptr;
}

Params resolve_params(const Benchmark& benchmark, Size size, const Params& overrides) {
  return ::kbench::resolve_params(benchmark.name(), benchmark.params(), size, overrides);
}

}  // namespace kbench::bench
