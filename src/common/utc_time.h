#pragma once
#include <string>

namespace kbench {

// The current time as ISO 8601 UTC to the second ("2026-11-30T21:45:00Z"):
// the form stored for session starts and ends, sortable as text.
std::string utc_now_iso8601();

}  // namespace kbench
