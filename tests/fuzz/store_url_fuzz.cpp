// Store URLs (--store, KBENCH_STORE): parse_store_url either names a backend
// and a location or throws InputError; nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/errors.h"
#include "store/result_store.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string url(reinterpret_cast<const char*>(data), size);
  try {
    const kbench::store::StoreUrl parsed = kbench::store::parse_store_url(url);
    // An accepted URL names a backend and a place: never an empty path that
    // would fall back to some default store.
    if (parsed.scheme.empty() || parsed.path.empty()) __builtin_trap();
  } catch (const kbench::InputError&) {
  }
  return 0;
}
