#pragma once
// The message of the error a call throws: what tests of an error line compare.
// Header-only, shared by the test binaries.
#include <string>
#include <utility>

#include "common/errors.h"

namespace kbench::testing {

// The message of the `Error` that `action` throws; `if_none` when it throws
// none. Any other exception propagates, and so fails the test.
template <typename Error = InputError, typename Action>
std::string error_of(Action&& action, std::string if_none = "") {
  try {
    std::forward<Action>(action)();
  } catch (const Error& error) {
    return error.what();
  }
  return if_none;
}

}  // namespace kbench::testing
