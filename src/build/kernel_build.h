#pragma once
// Kernels built from source trees for swprofiles with `build:`. Builds are
// out of tree and cached by a key of everything that decides the result
// (tree state, config, fragments, compiler and its version, make arguments,
// architecture), so an unchanged swprofile is never rebuilt, and successive
// commits of one tree share an object directory and build incrementally.
// Layout of the cache (docs/builds.md):
//   <cache>/out/<key>/  vmlinuz-<release>, config-<release>, [modules-<release>.tar], info.json, build.log
//   <cache>/obj/<hash>/ the object directory (everything but the tree state in the hash)
//   <cache>/src/<hash>/ a kbench-owned git worktree of the source, for refs
//   <cache>/logs/       logs of builds in progress or failed
//   <cache>/lock        flock: one build at a time per cache
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "plan/plan.h"

namespace kbench::build {

struct BuildOptions {
  std::string cache_dir;  // default: $KBENCH_BUILD_CACHE, else $XDG_CACHE_HOME/kbench/kernels, else ~/.cache/kbench/kernels
  int jobs = 0;           // 0: nproc
  std::function<void(const std::string&)> progress;  // one line per event (e.g. "gcc: building 1a2b3c4d (incremental)")
};

struct BuiltKernel {
  std::string image;    // <cache>/out/<key>/vmlinuz-<release>  (Debian layout: config-<release> beside it)
  std::string config;   // <cache>/out/<key>/config-<release>
  std::string modules;  // tarball of lib/modules/<release>, empty when CONFIG_MODULES is off
  std::string release;  // make kernelrelease
  std::string key;      // hex sha256 of the build key
  std::string commit;   // git commit built ("" when not a git tree)
  bool cached = false;  // true: nothing was built (output for this key existed)
  double seconds = 0;   // wall time of make (0 when cached)
  nlohmann::json info;  // {key, commit, tree, dirty, config_sha256, compiler, compiler_version, make_args, fragments, built_utc, seconds}
};

// A make that failed: the message names the swprofile and holds the last 30
// lines of the build log (and where the whole log is).
struct BuildFailed : RunError {
  using RunError::RunError;
};

// The cache directory BuildOptions::cache_dir defaults to.
std::string default_cache_dir();

// Resolves ref to a commit, computes the key, returns cached output or builds
// out of tree (make O=<cache>/obj/<hash of config+compiler+args+source>) so
// successive commits build incrementally. ccache used when on PATH.
// InputError: bad spec (source not a dir, ref unknown, compiler missing,
// fragment missing, a fragment option the config refuses).
// BuildFailed (derives RunError): message names the swprofile and holds the tail (last 30 lines) of the build log.
BuiltKernel build_kernel(const plan::KernelBuildSpec& spec, const std::string& profile_name, const BuildOptions& options);

// The key's parts for a spec as the tree is now (what build_kernel hashes):
// {tree: {...}, config, fragments, compiler, compiler_version, make_args, arch}.
// Throws InputError as build_kernel does for a bad spec.
nlohmann::json build_key_parts(const plan::KernelBuildSpec& spec, const std::string& profile_name);

// The key's parts, exposed for tests: same inputs -> same key; any change -> another key.
std::string build_key(const nlohmann::json& key_parts);

// What `plan check` asks without building: the ref resolves, the compiler is
// on PATH. Throws InputError naming the swprofile.
void check_build_spec(const plan::KernelBuildSpec& spec, const std::string& profile_name);

// Every selected swprofile with build: built (or found), and its
// kernel.image/config/modules and build_info set. `selected` empty: all.
// Modules are handed on only to SUTs that install them (not qemu, which
// boots the image alone).
void resolve_builds(plan::Plan& plan, const std::vector<std::string>& selected, const BuildOptions& options);

}  // namespace kbench::build
