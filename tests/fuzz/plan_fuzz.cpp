// The plan parser on arbitrary YAML text. Bad input may only ever be an
// InputError (one line, exit 2); any other exception, a crash or a sanitizer
// report is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/errors.h"
#include "plan/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const kbench::plan::Plan plan = kbench::plan::parse_plan(text, "fuzz.yaml");
    for (const auto& entry : plan.benchmarks) (void)plan.settings_for(entry);
  } catch (const kbench::InputError&) {
  }
  return 0;
}
