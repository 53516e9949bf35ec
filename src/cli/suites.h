#pragma once
#include <string>

namespace kbench::cli {

// Path of the shipped plan for a suite name (quick, default): $KBENCH_PLANS_DIR,
// then ../share/kbench/plans and ../plans next to the kbench binary, then the
// source tree's plans/. Throws InputError for an unknown suite.
std::string suite_plan_path(const std::string& suite);

}  // namespace kbench::cli
