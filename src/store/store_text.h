#pragma once
// How both resultstore backends spell values in their tables, and the glob
// matching both offer: backend-neutral, so SQLite and PostgreSQL stores store
// and read the same text. Internal to src/store/.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/params.h"
#include "common/result_class.h"
#include "store/result_store.h"

namespace kbench::store {

// The parameters as stored: JSON of the sorted map, so equal sets give equal text.
std::string canonical_params(const Params& params);
Params params_from_text(const std::string& text);
Better better_from_text(const std::string& text);
// The kernel release a fingerprint names ("kernel_release" or kernel.release), else "".
std::string kernel_release_of(const nlohmann::json& fingerprint);
std::string glob_or_all(const std::string& glob);
// The session's "planned" column: a JSON list of {name, params}.
std::string planned_text(const std::vector<BenchmarkKey>& planned);
std::vector<BenchmarkKey> planned_from_text(const std::string& text);
// The fingerprint's "sut_class" string, else "".
std::string sut_class_of(const nlohmann::json& fingerprint);
// A new session uid: 32 random hex digits.
std::string new_session_uid();
// SQLite's GLOB (case-sensitive; * any run, ? one character, [...] a set,
// [^...] its complement, no escape character) as an anchored POSIX regular
// expression, for backends without GLOB (PostgreSQL's ~ operator).
std::string glob_to_regex(const std::string& glob);

}  // namespace kbench::store
