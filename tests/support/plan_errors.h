#pragma once
// The message a plan text is refused with, "" when it is accepted: for tests
// of the plan's error lines.
#include <string>

#include "plan/plan.h"
#include "support/error_text.h"

namespace kbench::testing {

inline std::string plan_error(const std::string& yaml, const std::string& file = "p.yaml") {
  return error_of([&] { plan::parse_plan(yaml, file); });
}

}  // namespace kbench::testing
