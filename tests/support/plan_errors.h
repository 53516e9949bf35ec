#pragma once
// The message a plan text is refused with, "" when it is accepted: for tests
// of the plan's error lines.
#include <string>

#include "common/errors.h"
#include "plan/plan.h"

namespace kbench::testing {

inline std::string plan_error(const std::string& yaml) {
  try {
    plan::parse_plan(yaml, "p.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace kbench::testing
