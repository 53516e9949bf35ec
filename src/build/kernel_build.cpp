#include "build/kernel_build.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/utc_time.h"
#include "process/git.h"
#include "process/process.h"
#include "sysinfo/sha256.h"

namespace kbench::build {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Makes builds reproducible: the same inputs give the same image bytes, so a
// rebuild after the cache was wiped is the same kernel (and ccache hits).
const process::Environment kReproducibleEnvironment = {
    {"KBUILD_BUILD_TIMESTAMP", "1970-01-01 00:00:00 UTC"},
    {"KBUILD_BUILD_USER", "kbench"},
    {"KBUILD_BUILD_HOST", "kbench"},
    {"KBUILD_BUILD_VERSION", "1"},
};

constexpr std::size_t kLogTailLines = 30;

// ---- processes -------------------------------------------------------------

struct Command {
  std::vector<std::string> argv;
  process::Environment environment;
};

// The build's commands stay in kbench's process group (death_signal 0): a
// terminal's Ctrl-C stops make as it stops kbench, and make then deletes the
// targets it was writing.
process::CommandResult capture(const Command& command) {
  return process::run(command.argv, {.environment = command.environment, .death_signal = 0});
}

// Runs the command with stdout and stderr appended to the log.
int run_logged(const Command& command, int log_fd) {
  const process::Child child =
      process::spawn(command.argv, {.environment = command.environment, .output_fd = log_fd, .death_signal = 0});
  return process::exit_code(process::wait_for_exit(child.pid));
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate.string();
  }
  return {};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string host_arch() {
  utsname host{};
  uname(&host);
  return host.machine;
}

// ---- the tree state ----------------------------------------------------------

struct TreeState {
  nlohmann::json parts;   // what the key hashes: {tree, dirty} for git, {files} otherwise
  bool git = false;
  std::string commit;     // the commit built (HEAD for the working tree)
  std::string top;        // the repository's top directory
  std::string prefix;     // the source's path inside the repository ("" at the top)
  bool dirty = false;
};

// "" when git fails: not a repository, no such commit.
std::string git_line(const std::string& dir, const std::vector<std::string>& args) {
  return process::try_git_output(dir, args).value_or(std::string());
}

// The tree object of `commit` at the source's place in the repository.
std::string tree_of(const TreeState& state, const std::string& commit) {
  std::string prefix = state.prefix;
  if (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return git_line(state.top, {"rev-parse", "--verify", "--quiet", commit + ":" + prefix});
}

// The working tree beyond HEAD: the diff of tracked files and the contents of
// untracked files that are not ignored. Empty when the tree is clean.
std::string working_tree_changes(const std::string& source) {
  sysinfo::Sha256 hash;
  bool changed = false;
  const auto diff = process::run_git(source, {"diff", "HEAD", "--binary", "--no-color", "--no-ext-diff", "--", "."},
                                     [&](const char* data, std::size_t size) {
                                       changed = true;
                                       hash.update(std::string_view(data, size));
                                     });
  if (diff.exit_status != 0) {
    throw RunError("git diff HEAD in " + source + " failed (status " +
                   std::to_string(process::exit_code(diff.wait_status)) + ")");
  }
  const auto untracked =
      process::run_git(source, {"ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", "."});
  if (untracked.exit_status != 0) throw RunError("git ls-files in " + source + " failed");
  const std::string top = git_line(source, {"rev-parse", "--show-toplevel"});
  std::size_t start = 0;
  while (start < untracked.out.size()) {
    const auto end = untracked.out.find('\0', start);
    const std::string name = untracked.out.substr(start, end - start);
    start = end == std::string::npos ? untracked.out.size() : end + 1;
    if (name.empty()) continue;
    changed = true;
    const fs::path path = fs::path(top) / name;
    std::error_code ec;
    const std::string content =
        fs::is_symlink(path, ec) ? fs::read_symlink(path, ec).string() : sysinfo::file_sha256(path);
    hash.update("untracked\0" + name + '\0' + content + '\n');
  }
  return changed ? hash.hex_digest() : std::string();
}

// A tree outside git: the paths, sizes and modification times of its files.
std::string files_fingerprint(const std::string& source) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(source, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    struct stat info{};
    if (lstat(it->path().c_str(), &info) != 0 || S_ISDIR(info.st_mode)) continue;
    lines.push_back(fmt::format("{}\t{}\t{}.{:09}", fs::relative(it->path(), source).string(), info.st_size,
                                info.st_mtim.tv_sec, info.st_mtim.tv_nsec));
  }
  std::sort(lines.begin(), lines.end());
  sysinfo::Sha256 hash;
  for (const auto& line : lines) hash.update(line + "\n");
  return hash.hex_digest();
}

TreeState tree_state(const plan::KernelBuildSpec& spec, const std::string& profile) {
  TreeState state;
  const std::string where = "swprofile " + profile + ": build.source " + spec.source;
  std::error_code ec;
  if (!fs::is_directory(spec.source, ec)) throw InputError(where + ": expected a directory holding a kernel tree");
  state.top = git_line(spec.source, {"rev-parse", "--show-toplevel"});
  state.git = !state.top.empty();
  if (!state.git) {
    if (!spec.ref.empty()) throw InputError(where + ": expected a git repository (build.ref '" + spec.ref + "' is a git ref)");
    state.parts = {{"files", files_fingerprint(spec.source)}};
    return state;
  }
  state.prefix = git_line(spec.source, {"rev-parse", "--show-prefix"});
  const std::string ref = spec.ref.empty() ? "HEAD" : spec.ref;
  state.commit = git_line(spec.source, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"});
  if (state.commit.empty()) {
    throw InputError(where + ": build.ref '" + ref + "': expected a commit, tag or branch of that repository");
  }
  const std::string tree = tree_of(state, state.commit);
  if (tree.empty()) throw InputError(where + ": commit " + state.commit + " has no " + state.prefix);
  std::string dirty;
  if (spec.ref.empty()) dirty = working_tree_changes(spec.source);
  state.dirty = !dirty.empty();
  // A clean working tree has the key of its HEAD named as a ref.
  state.parts = {{"tree", tree}, {"dirty", dirty}};
  return state;
}

// ---- compiler, config and fragments ------------------------------------------

struct Toolchain {
  std::string compiler;  // gcc | clang
  std::string version;   // the first line of --version
  std::vector<std::string> make_variables;  // CC=..., LLVM=1
};

Toolchain toolchain(const plan::KernelBuildSpec& spec, const std::string& profile) {
  Toolchain tools;
  tools.compiler = spec.compiler;
  if (find_on_path(spec.compiler).empty()) {
    throw InputError("swprofile " + profile + ": build.compiler " + spec.compiler + ": not found on PATH (expected " +
                     (spec.compiler == "clang" ? "Debian's clang, lld and llvm" : "Debian's gcc") + ")");
  }
  if (spec.compiler == "clang" && find_on_path("ld.lld").empty()) {
    throw InputError("swprofile " + profile + ": build.compiler clang: ld.lld not found on PATH (LLVM=1 links with "
                     "it; Debian packages lld and llvm)");
  }
  const auto version = capture(Command{{spec.compiler, "--version"}, {}});
  tools.version = trimmed(version.out.substr(0, version.out.find('\n')));
  const bool ccache = !find_on_path("ccache").empty();
  if (spec.compiler == "clang") tools.make_variables.push_back("LLVM=1");
  tools.make_variables.push_back("CC=" + std::string(ccache ? "ccache " : "") + spec.compiler);
  return tools;
}

bool is_option_line(const std::string& fragment) { return fragment.rfind("CONFIG_", 0) == 0 || fragment.rfind("# CONFIG_", 0) == 0; }

std::string fragment_text(const std::string& fragment, const std::string& profile) {
  if (is_option_line(fragment)) return fragment + "\n";
  std::ifstream in(fragment, std::ios::binary);
  if (!in) throw InputError("swprofile " + profile + ": build.fragments: " + fragment + ": expected a readable fragment file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// CONFIG_X -> value ("n" for "# CONFIG_X is not set"), in the order given.
using ConfigOptions = std::vector<std::pair<std::string, std::string>>;

std::optional<std::pair<std::string, std::string>> parse_config_line(const std::string& line) {
  if (line.rfind("CONFIG_", 0) == 0) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    return std::make_pair(line.substr(0, eq), line.substr(eq + 1));
  }
  static const std::string suffix = " is not set";
  if (line.rfind("# CONFIG_", 0) == 0 && line.size() > suffix.size() + 2 &&
      line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return std::make_pair(line.substr(2, line.size() - 2 - suffix.size()), std::string("n"));
  }
  return std::nullopt;
}

ConfigOptions parse_config_text(const std::string& text) {
  ConfigOptions options;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (auto option = parse_config_line(line)) options.push_back(*option);
  }
  return options;
}

std::string config_line(const std::string& name, const std::string& value) {
  return value == "n" ? "# " + name + " is not set" : name + "=" + value;
}

// The fragments' options written over the config (the later fragment wins).
void merge_fragments(const std::string& config_path, const ConfigOptions& wanted) {
  std::map<std::string, std::string> pending(wanted.begin(), wanted.end());
  for (const auto& [name, value] : wanted) pending[name] = value;
  const std::string original = read_file(config_path);
  std::istringstream lines(original);
  std::string merged;
  for (std::string line; std::getline(lines, line);) {
    const auto option = parse_config_line(line);
    if (option && pending.count(option->first)) {
      merged += config_line(option->first, pending[option->first]) + "\n";
      pending.erase(option->first);
    } else {
      merged += line + "\n";
    }
  }
  for (const auto& [name, value] : wanted) {
    if (pending.count(name)) {
      merged += config_line(name, pending[name]) + "\n";
      pending.erase(name);
    }
  }
  // An unchanged .config keeps its time, so make sees no config change and
  // an incremental build stays incremental.
  if (merged != original) std::ofstream(config_path, std::ios::binary | std::ios::trunc) << merged;
}

// ---- the cache -----------------------------------------------------------------

class CacheLock {
 public:
  CacheLock(const std::string& cache, const BuildOptions& options) {
    const std::string path = cache + "/lock";
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw RunError("build cache lock " + path + ": " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (options.progress) options.progress("waiting for another kbench build using " + cache);
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) throw RunError("build cache lock " + path + ": " + std::strerror(errno));
    }
  }
  ~CacheLock() { close(fd_); }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_ = -1;
};

std::string log_tail(const std::string& path) {
  std::deque<std::string> tail;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (tail.size() > kLogTailLines) tail.pop_front();
  }
  std::string text;
  for (const auto& line : tail) text += line + "\n";
  return trimmed(text);
}

std::optional<BuiltKernel> cached_output(const std::string& out_dir) {
  const std::string info_path = out_dir + "/info.json";
  std::error_code ec;
  if (!fs::is_regular_file(info_path, ec)) return std::nullopt;
  const auto info = nlohmann::json::parse(read_file(info_path), nullptr, false);
  if (!info.is_object() || !info.contains("release")) return std::nullopt;
  BuiltKernel kernel;
  kernel.info = info;
  kernel.release = info["release"].get<std::string>();
  kernel.key = info.value("key", "");
  kernel.commit = info.value("commit", "");
  kernel.image = out_dir + "/vmlinuz-" + kernel.release;
  kernel.config = out_dir + "/config-" + kernel.release;
  const std::string modules = out_dir + "/modules-" + kernel.release + ".tar";
  if (fs::exists(modules, ec)) kernel.modules = modules;
  if (!fs::is_regular_file(kernel.image, ec)) return std::nullopt;
  return kernel;
}

struct ImageTarget {
  std::string target;  // make target
  std::string path;    // where it lands in the object directory
};

ImageTarget image_target(const std::string& arch) {
  if (arch == "aarch64" || arch == "arm64") return {"Image", "arch/arm64/boot/Image"};
  return {"bzImage", "arch/x86/boot/bzImage"};
}

std::string arch_of(const plan::KernelBuildSpec& spec) {
  for (const auto& arg : spec.make_args) {
    if (arg.rfind("ARCH=", 0) == 0) return arg.substr(5);
  }
  return host_arch();
}

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace

std::string default_cache_dir() {
  if (const char* dir = std::getenv("KBENCH_BUILD_CACHE"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/kbench/kernels";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/kbench/kernels";
}

std::string build_key(const nlohmann::json& key_parts) { return sysinfo::sha256_hex(key_parts.dump()); }

namespace {

// Everything but the tree state: what the object directory is shared by.
nlohmann::json configuration_parts(const plan::KernelBuildSpec& spec, const std::string& profile,
                                   const Toolchain& tools) {
  nlohmann::json fragments = nlohmann::json::array();
  for (const auto& fragment : spec.fragments) fragments.push_back(sysinfo::sha256_hex(fragment_text(fragment, profile)));
  nlohmann::json config;
  if (plan::is_config_target(spec.config)) {
    config = spec.config;
  } else {
    std::error_code ec;
    if (!fs::is_regular_file(spec.config, ec)) {
      throw InputError("swprofile " + profile + ": build.config " + spec.config + ": expected a readable config file");
    }
    config = {{"file_sha256", sysinfo::file_sha256(spec.config)}};
  }
  return {{"format", 1},
          {"config", config},
          {"fragments", fragments},
          {"compiler", tools.compiler},
          {"compiler_version", tools.version},
          {"make_args", spec.make_args},
          {"arch", arch_of(spec)}};
}

}  // namespace

nlohmann::json build_key_parts(const plan::KernelBuildSpec& spec, const std::string& profile_name) {
  const Toolchain tools = toolchain(spec, profile_name);
  nlohmann::json parts = configuration_parts(spec, profile_name, tools);
  parts["tree"] = tree_state(spec, profile_name).parts;
  return parts;
}

void check_build_spec(const plan::KernelBuildSpec& spec, const std::string& profile_name) {
  const Toolchain tools = toolchain(spec, profile_name);
  configuration_parts(spec, profile_name, tools);
  std::error_code ec;
  if (!fs::is_directory(spec.source, ec)) {
    throw InputError("swprofile " + profile_name + ": build.source " + spec.source + ": expected a directory");
  }
  if (!spec.ref.empty()) {
    const std::string top = git_line(spec.source, {"rev-parse", "--show-toplevel"});
    if (top.empty()) {
      throw InputError("swprofile " + profile_name + ": build.source " + spec.source + ": expected a git repository (build.ref '" +
                       spec.ref + "' is a git ref)");
    }
    if (git_line(spec.source, {"rev-parse", "--verify", "--quiet", spec.ref + "^{commit}"}).empty()) {
      throw InputError("swprofile " + profile_name + ": build.source " + spec.source + ": build.ref '" + spec.ref +
                       "': expected a commit, tag or branch of that repository");
    }
  }
}

BuiltKernel build_kernel(const plan::KernelBuildSpec& spec, const std::string& profile_name, const BuildOptions& options) {
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(profile_name + ": " + line);
  };
  const std::string cache = fs::absolute(options.cache_dir.empty() ? default_cache_dir() : options.cache_dir).lexically_normal().string();
  const Toolchain tools = toolchain(spec, profile_name);
  const TreeState tree = tree_state(spec, profile_name);
  nlohmann::json parts = configuration_parts(spec, profile_name, tools);
  const nlohmann::json configuration = parts;
  parts["tree"] = tree.parts;
  const std::string key = build_key(parts);
  const std::string short_key = key.substr(0, 12);
  const std::string out_dir = cache + "/out/" + key;

  if (auto found = cached_output(out_dir)) {
    found->cached = true;
    say("cached " + short_key + " (" + found->release + ")");
    return *found;
  }
  std::error_code ec;
  for (const char* sub : {"out", "obj", "src", "logs"}) fs::create_directories(cache + "/" + sub, ec);
  if (!fs::is_directory(cache + "/out", ec)) throw RunError("build cache " + cache + ": cannot create it");
  const CacheLock lock(cache, options);
  // Another kbench may have built it while this one waited.
  if (auto found = cached_output(out_dir)) {
    found->cached = true;
    say("cached " + short_key + " (" + found->release + ")");
    return *found;
  }

  // The tree make reads: a ref is checked out in kbench's own worktree of the
  // repository (the user's checkout is never touched); checking out the next
  // commit there rewrites only the files that differ, so make rebuilds only
  // what depends on them.
  std::string srctree = spec.source;
  if (!spec.ref.empty()) {
    const std::string worktree = cache + "/src/" + sysinfo::sha256_hex(tree.top).substr(0, 16);
    if (!fs::exists(worktree + "/.git", ec)) {
      fs::remove_all(worktree, ec);
      process::run_git(tree.top, {"worktree", "prune"});
      const auto added = process::run_git(tree.top, {"worktree", "add", "--detach", "--force", worktree, tree.commit});
      if (added.exit_status != 0) throw RunError("swprofile " + profile_name + ": git worktree add " + worktree + " failed");
    } else {
      const auto moved = process::run_git(worktree, {"checkout", "--detach", "--force", "--quiet", tree.commit});
      if (moved.exit_status != 0) throw RunError("swprofile " + profile_name + ": git checkout " + tree.commit + " in " + worktree + " failed");
    }
    srctree = (fs::path(worktree) / tree.prefix).lexically_normal().string();
    while (srctree.size() > 1 && srctree.back() == '/') srctree.pop_back();
  }
  nlohmann::json object_parts = configuration;
  object_parts["srctree"] = fs::canonical(srctree, ec).string();
  const std::string obj_dir = cache + "/obj/" + build_key(object_parts).substr(0, 16);
  const bool incremental = fs::exists(obj_dir + "/.config", ec);
  fs::create_directories(obj_dir, ec);

  const std::string log_path = cache + "/logs/" + key + ".log";
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw RunError("build log " + log_path + ": " + std::strerror(errno));
  struct CloseLog {
    int fd;
    ~CloseLog() { close(fd); }
  } close_log{log_fd};

  const int jobs = options.jobs > 0 ? options.jobs : default_jobs();
  auto make = [&](std::vector<std::string> targets) {
    Command command;
    command.argv = {"make", "--no-print-directory", "-C", srctree, "O=" + obj_dir, "-j" + std::to_string(jobs)};
    command.argv.insert(command.argv.end(), tools.make_variables.begin(), tools.make_variables.end());
    command.argv.insert(command.argv.end(), spec.make_args.begin(), spec.make_args.end());
    command.argv.insert(command.argv.end(), targets.begin(), targets.end());
    command.environment = kReproducibleEnvironment;
    return command;
  };
  const auto started = Clock::now();
  auto run_make = [&](const std::vector<std::string>& targets) {
    Command command = make(targets);
    std::string line = "$";
    for (const auto& word : command.argv) line += " " + (word.find(' ') == std::string::npos ? word : "'" + word + "'");
    line += "\n";
    if (write(log_fd, line.data(), line.size()) < 0) {
    }
    const int status = run_logged(command, log_fd);
    if (status != 0) {
      std::string what;
      for (const auto& target : targets) what += (what.empty() ? "" : " ") + target;
      throw BuildFailed(fmt::format("swprofile {}: kernel build failed: make {} exited with status {} (log: {}); its "
                                    "last {} lines:\n{}",
                                    profile_name, what, status, log_path, kLogTailLines, log_tail(log_path)));
    }
  };
  say(fmt::format("building {} ({}{}, {} jobs)", short_key, incremental ? "incremental in " : "fresh in ", obj_dir, jobs));

  // The config: the target or the file, the fragments over it, then
  // olddefconfig settles what they imply.
  const std::string config_path = obj_dir + "/.config";
  if (plan::is_config_target(spec.config)) {
    run_make({spec.config});
  } else {
    fs::copy_file(spec.config, config_path, fs::copy_options::overwrite_existing, ec);
    if (ec) throw RunError("cannot copy " + spec.config + " to " + config_path + ": " + ec.message());
  }
  ConfigOptions wanted;
  for (const auto& fragment : spec.fragments) {
    for (auto& option : parse_config_text(fragment_text(fragment, profile_name))) wanted.push_back(std::move(option));
  }
  if (!wanted.empty()) merge_fragments(config_path, wanted);
  if (!wanted.empty() || !plan::is_config_target(spec.config)) run_make({"olddefconfig"});
  // An option the config refused (an unmet dependency, a misspelt name)
  // would silently measure another kernel than the one asked for.
  std::map<std::string, std::string> final_config;
  for (auto& [name, value] : parse_config_text(read_file(config_path))) final_config[name] = value;
  std::map<std::string, std::string> last_wanted;
  for (const auto& [name, value] : wanted) last_wanted[name] = value;
  for (const auto& [name, value] : last_wanted) {
    const auto found = final_config.find(name);
    const std::string got = found == final_config.end() ? "n" : found->second;
    if (got != value) {
      throw InputError(fmt::format(
          "swprofile {}: build.fragments: {} did not take: the config has {} after olddefconfig (an unmet "
          "dependency, or no such option in this tree; see 'Depends on' in make O={} menuconfig, /{})",
          profile_name, config_line(name, value),
          found == final_config.end() ? "no " + name : config_line(name, got), obj_dir, name.substr(7)));
    }
  }
  const bool modules = final_config.count("CONFIG_MODULES") && final_config["CONFIG_MODULES"] == "y";
  const std::string arch = arch_of(spec);
  const ImageTarget image = image_target(arch);
  std::vector<std::string> targets = {image.target};
  if (modules) targets.push_back("modules");
  run_make(targets);

  Command release_command = make({"-s", "kernelrelease"});
  const auto release_out = capture(release_command);
  const std::string release = trimmed(release_out.out);
  if (release_out.exit_status != 0 || release.empty() || release.find_first_of("/ \n") != std::string::npos) {
    throw BuildFailed("swprofile " + profile_name + ": make kernelrelease printed no release (log: " + log_path + ")");
  }

  // The output, assembled beside its place and renamed into it: a killed
  // build never leaves a half-written entry that looks cached.
  const std::string staging = out_dir + ".partial";
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  fs::copy_file(obj_dir + "/" + image.path, staging + "/vmlinuz-" + release, fs::copy_options::overwrite_existing, ec);
  if (ec) throw BuildFailed("swprofile " + profile_name + ": make " + image.target + " left no " + obj_dir + "/" + image.path);
  fs::copy_file(config_path, staging + "/config-" + release, fs::copy_options::overwrite_existing, ec);
  if (modules) {
    const std::string install = staging + "/modules-install";
    run_make({"modules_install", "INSTALL_MOD_PATH=" + install});
    Command tar{{"tar", "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-C", install, "-cf",
                 staging + "/modules-" + release + ".tar", "lib/modules/" + release},
                {}};
    if (run_logged(tar, log_fd) != 0) throw BuildFailed("swprofile " + profile_name + ": tar of the modules failed (log: " + log_path + ")");
    fs::remove_all(install, ec);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  nlohmann::json info = {
      {"key", key},
      {"commit", tree.commit},
      {"tree", tree.parts.contains("tree") ? tree.parts["tree"] : tree.parts["files"]},
      {"dirty", tree.dirty},
      {"source", spec.source},
      {"ref", spec.ref},
      {"config", spec.config},
      {"config_sha256", sysinfo::file_sha256(config_path)},
      {"fragments", spec.fragments},
      {"compiler", tools.compiler},
      {"compiler_version", tools.version},
      {"make_args", spec.make_args},
      {"arch", arch},
      {"release", release},
      {"built_utc", utc_now_iso8601()},
      {"seconds", std::round(seconds * 10) / 10},
  };
  std::ofstream(staging + "/info.json") << info.dump(2) << "\n";
  fs::copy_file(log_path, staging + "/build.log", fs::copy_options::overwrite_existing, ec);
  fs::remove_all(out_dir, ec);
  fs::rename(staging, out_dir, ec);
  if (ec) throw RunError("build cache: cannot move " + staging + " to " + out_dir + ": " + ec.message());
  fs::remove(log_path, ec);

  auto built = cached_output(out_dir);
  if (!built) throw RunError("build cache: " + out_dir + " is incomplete after the build");
  built->cached = false;
  built->seconds = seconds;
  say(fmt::format("built {} ({}) in {:.0f} s", short_key, release, seconds));
  return *built;
}

void resolve_builds(plan::Plan& plan, const std::vector<std::string>& selected, const BuildOptions& options) {
  // A VM boots the image alone; deployed SUTs install the modules too.
  const auto installs = [](const plan::SutSpec& sut) { return plan::sut_method(sut).has(sut::Capability::Modules); };
  bool installs_modules = plan.sut ? installs(*plan.sut) : false;
  for (const auto& sut : plan.suts) installs_modules = installs_modules || installs(sut);
  for (auto& profile : plan.swprofiles) {
    if (!profile.build) continue;
    if (!selected.empty() && std::find(selected.begin(), selected.end(), profile.name) == selected.end()) continue;
    const BuiltKernel built = build_kernel(*profile.build, profile.name, options);
    profile.kernel = plan::KernelSource{};
    profile.kernel.image = built.image;
    profile.kernel.config = built.config;
    if (installs_modules) profile.kernel.modules = built.modules;
    profile.build_info = built.info;
  }
}

}  // namespace kbench::build
