#include <algorithm>

#include "bench/benchmark.h"
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
  Params params;
  std::string known;
  for (const auto& spec : benchmark.params()) {
    params[spec.name] = size == Size::Quick ? spec.quick_value : spec.default_value;
    known += (known.empty() ? "" : ", ") + spec.name;
  }
  for (const auto& [key, value] : overrides) {
    if (!params.count(key)) {
      throw InputError("--param " + key + "=" + value + ": " + benchmark.name() +
                       " has no parameter '" + key + "' (known: " +
                       (known.empty() ? "none" : known) + ")");
    }
    params[key] = value;
  }
  return params;
}

}  // namespace kbench::bench
