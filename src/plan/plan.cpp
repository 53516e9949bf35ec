#include "plan/plan.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include "common/device_tree.h"
#include "common/errors.h"

namespace kbench::plan {

namespace {

struct Context {
  std::string file;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& expected) const {
    const auto mark = node.Mark();
    std::string where = file;
    if (mark.line >= 0) where += ":" + std::to_string(mark.line + 1);
    throw InputError(where + ": " + key + ": expected " + expected);
  }

  // yaml-cpp throws its own "bad conversion" for a key like [a] or {b: c}.
  std::string key_name(const YAML::Node& key, const std::string& path) const {
    if (!key.IsScalar()) fail(key, path, "a plain name as the key, not a list or mapping");
    return key.as<std::string>();
  }

  void only_keys(const YAML::Node& map, const std::string& path, const std::set<std::string>& allowed) const {
    if (!map.IsMap()) fail(map, path, "a mapping");
    for (const auto& item : map) {
      const auto key = key_name(item.first, path.empty() ? "plan" : path);
      if (!allowed.count(key)) {
        std::string known;
        for (const auto& k : allowed) known += (known.empty() ? "" : ", ") + k;
        fail(item.first, path.empty() ? key : path + "." + key, "one of the keys " + known + " (unknown key)");
      }
    }
  }

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "a scalar value");
    return node.as<std::string>();
  }

  int positive_int(const YAML::Node& node, const std::string& key, int minimum, int maximum) const {
    const std::string text = scalar(node, key);
    try {
      std::size_t used = 0;
      const int value = std::stoi(text, &used);
      if (used == text.size() && value >= minimum && value <= maximum) return value;
    } catch (const std::exception&) {
    }
    fail(node, key, "an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum) + ", got '" + text + "'");
  }

  // yaml-cpp keeps both entries of a repeated key and lookups find the
  // first, so a plan's second "repeats:" would be ignored without a word.
  void no_duplicate_keys(const YAML::Node& node) const {
    if (node.IsMap()) {
      std::set<std::string> seen;
      for (const auto& item : node) {
        const std::string key = item.first.IsScalar() ? item.first.Scalar() : std::string();
        if (item.first.IsScalar() && !seen.insert(key).second) {
          const auto mark = item.first.Mark();
          throw InputError(file + ":" + std::to_string(mark.line + 1) + ": duplicate key '" + key + "'");
        }
        no_duplicate_keys(item.first);
        no_duplicate_keys(item.second);
      }
    } else if (node.IsSequence()) {
      for (const auto& item : node) no_duplicate_keys(item);
    }
  }

  std::map<std::string, std::string> string_map(const YAML::Node& node, const std::string& key) const {
    if (!node.IsMap()) fail(node, key, "a mapping of names to values");
    std::map<std::string, std::string> out;
    for (const auto& item : node) {
      const std::string name = key_name(item.first, key);
      out[name] = scalar(item.second, key + "." + name);
    }
    return out;
  }

  // The keys `node` gives, checked as settings() checks them.
  SettingsPatch settings_patch(const YAML::Node& node, const std::string& path) const {
    if (!node.IsMap()) fail(node, path, "a mapping of settings (warmups, repeats, sessions, timeout, size)");
    BenchmarkSettings parsed;
    settings(node, path, parsed);
    SettingsPatch patch;
    if (node["warmups"]) patch.warmups = parsed.warmups;
    if (node["repeats"]) patch.repeats = parsed.repeats;
    if (node["sessions"]) patch.sessions = parsed.sessions;
    if (node["timeout"]) patch.timeout = parsed.timeout;
    if (node["size"]) patch.size = parsed.size;
    if (node["kernel_profile"]) patch.kernel_profile = parsed.kernel_profile;
    return patch;
  }

  void settings(const YAML::Node& node, const std::string& path, BenchmarkSettings& into) const {
    only_keys(node, path, {"warmups", "repeats", "sessions", "timeout", "size", "kernel_profile"});
    if (node["warmups"]) into.warmups = positive_int(node["warmups"], path + ".warmups", 0, kMaxWarmups);
    if (node["repeats"]) into.repeats = positive_int(node["repeats"], path + ".repeats", 1, kMaxRepeats);
    if (node["sessions"]) into.sessions = positive_int(node["sessions"], path + ".sessions", 1, kMaxSessions);
    if (node["timeout"]) {
      const auto text = scalar(node["timeout"], path + ".timeout");
      try {
        into.timeout = parse_timeout(text, path + ".timeout");
      } catch (const InputError&) {
        fail(node["timeout"], path + ".timeout",
             "a duration in whole seconds from 1s to 24h such as 90s, 10m or 1h, got '" + text + "'");
      }
    }
    if (node["size"]) {
      into.size = scalar(node["size"], path + ".size");
      if (into.size != "quick" && into.size != "default") {
        fail(node["size"], path + ".size", "quick or default, got '" + into.size + "'");
      }
    }
    if (node["kernel_profile"]) {
      const auto text = scalar(node["kernel_profile"], path + ".kernel_profile");
      if (text != "true" && text != "false") {
        fail(node["kernel_profile"], path + ".kernel_profile", "true or false, got '" + text + "'");
      }
      into.kernel_profile = text == "true";
    }
  }
};

// yaml-cpp makes an alias the very node its anchor names, so `&a [*a]` is a
// node inside itself (walking it never ends), and nested aliases repeat a
// node exponentially (nine levels of nine aliases in 1 KB make 387 million
// nodes to walk). Read as parser events, an alias is one event whose size is
// known from its anchor's, so both are refused before the tree is walked.
class AliasCheck : public YAML::EventHandler {
 public:
  explicit AliasCheck(const std::string& file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { leaf(anchor); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(anchor);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back({anchor, 1});
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open_.push_back({anchor, 1});
  }
  void OnMapEnd() override { close(); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // An anchor is known here only once its node has ended.
    const auto named = nodes_by_anchor_.find(anchor);
    if (named == nodes_by_anchor_.end()) {
      fail(mark, "an alias of a node that ends before it (this one is inside the node it names, which would "
                 "contain itself)");
    }
    repeated_ += named->second;
    if (repeated_ > kMaxNodesRepeatedByAliases) {
      fail(mark, "aliases that repeat at most " + std::to_string(kMaxNodesRepeatedByAliases) +
                     " nodes in all (nested aliases repeat more)");
    }
    add(named->second);
  }

 private:
  // Far more than a hand-written plan repeats, and few enough to walk at once.
  static constexpr std::size_t kMaxNodesRepeatedByAliases = 100000;

  struct OpenNode {
    YAML::anchor_t anchor;
    std::size_t nodes;  // itself and what it holds so far, aliases counted at their size
  };

  void leaf(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) nodes_by_anchor_[anchor] = 1;
    add(1);
  }
  void close() {
    const OpenNode done = open_.back();
    open_.pop_back();
    if (done.anchor != YAML::NullAnchor) nodes_by_anchor_[done.anchor] = done.nodes;
    add(done.nodes);
  }
  void add(std::size_t nodes) {
    if (!open_.empty()) open_.back().nodes += nodes;
  }
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& expected) const {
    throw InputError(file_ + ":" + std::to_string(mark.line + 1) + ": expected " + expected);
  }

  std::string file_;
  std::vector<OpenNode> open_;
  std::map<YAML::anchor_t, std::size_t> nodes_by_anchor_;
  std::size_t repeated_ = 0;
};

// Throws InputError for an alias inside the node it names, or for aliases
// that repeat too many nodes. `yaml_text` is valid YAML (YAML::Load took it).
void check_aliases(const std::string& yaml_text, const std::string& file) {
  std::istringstream in(yaml_text);
  YAML::Parser parser(in);
  AliasCheck check(file);
  parser.HandleNextDocument(check);
}

}  // namespace

BenchmarkSettings SettingsPatch::over(BenchmarkSettings settings) const {
  if (warmups) settings.warmups = *warmups;
  if (repeats) settings.repeats = *repeats;
  if (sessions) settings.sessions = *sessions;
  if (timeout) settings.timeout = *timeout;
  if (size) settings.size = *size;
  if (kernel_profile) settings.kernel_profile = *kernel_profile;
  return settings;
}

BenchmarkSettings Plan::settings_for(const BenchmarkEntry& entry) const {
  if (entry.overrides) return *entry.overrides;
  const auto family = family_defaults.find(entry.name.substr(0, entry.name.find('/')));
  return family == family_defaults.end() ? defaults : family->second.over(defaults);
}

Plan Plan::for_sut(const SutSpec& one) const {
  Plan copy = *this;
  copy.sut = one;
  copy.suts.clear();
  return copy;
}

bool is_config_target(const std::string& config) {
  static const std::regex target("[A-Za-z0-9_-]*config");
  return std::regex_match(config, target);
}

bool valid_sut_class(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

std::chrono::milliseconds parse_duration(const std::string& text, const std::string& what) {
  static const std::regex part("([0-9]+)(ms|s|m|h)");
  std::chrono::milliseconds total{0};
  std::size_t consumed = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), part); it != std::sregex_iterator(); ++it) {
    if (static_cast<std::size_t>(it->position()) != consumed) break;
    // More digits would throw out of stoll or overflow the sum (found by plan_fuzz).
    if ((*it)[1].length() > 9 || total > std::chrono::hours(24 * 365 * 100)) break;
    const long long n = std::stoll((*it)[1]);
    const std::string unit = (*it)[2];
    if (unit == "ms") total += std::chrono::milliseconds(n);
    else if (unit == "s") total += std::chrono::seconds(n);
    else if (unit == "m") total += std::chrono::minutes(n);
    else total += std::chrono::hours(n);
    consumed += static_cast<std::size_t>(it->length());
  }
  if (text.empty() || consumed != text.size() || total.count() <= 0) {
    throw InputError(what + " '" + text + "': expected a duration such as 90s, 10m or 1h30m");
  }
  return total;
}

std::chrono::seconds parse_timeout(const std::string& text, const std::string& what) {
  const InputError expected(what + " '" + text + "': expected a duration in whole seconds from " +
                            std::to_string(kMinTimeout.count()) + "s to " +
                            std::to_string(std::chrono::duration_cast<std::chrono::hours>(kMaxTimeout).count()) +
                            "h, e.g. 90s, 10m or 1h30m");
  // More digits than any accepted duration has would overflow the parser.
  if (text.size() > 32) throw expected;
  std::chrono::milliseconds parsed{0};
  try {
    parsed = parse_duration(text, what);
  } catch (const std::exception&) {
    throw expected;
  }
  if (parsed < kMinTimeout || parsed > kMaxTimeout || parsed.count() % 1000 != 0) throw expected;
  return std::chrono::duration_cast<std::chrono::seconds>(parsed);
}

namespace {

bool is_blank(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); });
}

bool has_control_characters(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

// The offset of the first byte that does not begin a well-formed UTF-8
// sequence (no overlong forms, surrogates or code points past U+10FFFF, as
// the json writer demands), or npos when there is none.
std::size_t first_byte_not_utf8(const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    std::size_t length = 1;
    unsigned char second_low = 0x80, second_high = 0xBF;
    if (lead < 0x80) {
      ++at;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) second_low = 0xA0;   // overlong
      if (lead == 0xED) second_high = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) second_low = 0x90;   // overlong
      if (lead == 0xF4) second_high = 0x8F;  // past U+10FFFF
    } else {
      return at;
    }
    if (at + length > text.size() || byte(at + 1) < second_low || byte(at + 1) > second_high) return at;
    for (std::size_t i = 2; i < length; ++i) {
      if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return at;
    }
    at += length;
  }
  return std::string::npos;
}

// An include names a file relative to the directory of the plan naming it.
std::string include_path(const std::string& including_plan, const std::string& name) {
  const std::filesystem::path target(name);
  if (target.is_absolute()) return name;
  return (std::filesystem::path(including_plan).parent_path() / target).string();
}

Plan parse_plan_text(const std::string& yaml_text, const std::string& name_for_errors, bool is_include);

// A path of a build spec: relative ones are relative to the plan's directory.
std::string plan_relative_path(const std::string& plan_file, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path target(name);
  const fs::path joined = target.is_absolute() ? target : fs::path(plan_file).parent_path() / target;
  return fs::absolute(joined).lexically_normal().string();
}

bool is_readable_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && std::ifstream(path).good();
}

// `build:` of a swprofile. Everything that can be checked without git or
// make is checked here (src/build/kernel_build.h checks refs and compilers).
KernelBuildSpec kernel_build_spec(const Context& ctx, const YAML::Node& node) {
  const std::string at = "swprofiles[].build";
  ctx.only_keys(node, at, {"source", "ref", "config", "fragments", "compiler", "make_args"});
  KernelBuildSpec spec;
  spec.line = node.Mark().line + 1;
  auto text = [&](const char* key) {
    const std::string value = ctx.scalar(node[key], at + "." + key);
    if (is_blank(value) || has_control_characters(value)) {
      ctx.fail(node[key], at + "." + key, "a non-blank value without control characters");
    }
    return value;
  };
  if (!node["source"]) ctx.fail(node, at + ".source", "the kernel source tree to build (source: DIR)");
  spec.source = plan_relative_path(ctx.file, text("source"));
  {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(spec.source, ec)) {
      ctx.fail(node["source"], at + ".source", "a directory holding a kernel tree, got '" + spec.source + "'");
    }
    if (!fs::is_regular_file(fs::path(spec.source) / "Makefile", ec) ||
        !fs::is_regular_file(fs::path(spec.source) / "Kconfig", ec)) {
      ctx.fail(node["source"], at + ".source",
               "a kernel tree (a directory with a Makefile and a Kconfig), got '" + spec.source + "'");
    }
  }
  if (node["ref"]) {
    spec.ref = text("ref");
    // git would read a ref beginning with '-' as an option.
    if (spec.ref.front() == '-' || spec.ref.find_first_of(" \t") != std::string::npos) {
      ctx.fail(node["ref"], at + ".ref", "a git ref (commit, tag or branch), got '" + spec.ref + "'");
    }
  }
  if (node["config"]) {
    spec.config = text("config");
    if (!is_config_target(spec.config)) {
      spec.config = plan_relative_path(ctx.file, spec.config);
      if (!is_readable_file(spec.config)) {
        ctx.fail(node["config"], at + ".config",
                 "a make config target (defconfig, tinyconfig, ...) or a readable config file, got '" +
                     node["config"].as<std::string>() + "'");
      }
    }
  }
  if (const auto fragments = node["fragments"]) {
    if (!fragments.IsSequence()) ctx.fail(fragments, at + ".fragments", "a list of fragment files or CONFIG_X=value lines");
    static const std::regex option_line("CONFIG_[A-Za-z0-9_]+=[^\n]+|# CONFIG_[A-Za-z0-9_]+ is not set");
    for (const auto& item : fragments) {
      const std::string value = ctx.scalar(item, at + ".fragments[]");
      if (std::regex_match(value, option_line)) {
        spec.fragments.push_back(value);
      } else if (value.rfind("CONFIG_", 0) == 0) {
        ctx.fail(item, at + ".fragments[]", "CONFIG_NAME=VALUE (y, m, n, a number or a string), got '" + value + "'");
      } else {
        const std::string path = plan_relative_path(ctx.file, value);
        if (!is_readable_file(path)) {
          ctx.fail(item, at + ".fragments[]", "a readable fragment file or a CONFIG_X=value line, got '" + value + "'");
        }
        spec.fragments.push_back(path);
      }
    }
  }
  if (node["compiler"]) {
    spec.compiler = text("compiler");
    if (spec.compiler != "gcc" && spec.compiler != "clang") {
      ctx.fail(node["compiler"], at + ".compiler", "gcc or clang, got '" + spec.compiler + "'");
    }
  }
  if (const auto args = node["make_args"]) {
    if (args.IsScalar()) {
      std::istringstream words(args.as<std::string>());
      for (std::string w; words >> w;) spec.make_args.push_back(w);
    } else if (args.IsSequence()) {
      for (const auto& w : args) spec.make_args.push_back(ctx.scalar(w, at + ".make_args[]"));
    } else {
      ctx.fail(args, at + ".make_args", "a list of make arguments such as KCFLAGS=-O2");
    }
    for (const auto& arg : spec.make_args) {
      // kbench chooses the object directory, the compiler and the job count.
      for (const char* own : {"O=", "CC=", "LLVM=", "-j", "-C"}) {
        if (arg.rfind(own, 0) == 0) {
          ctx.fail(args, at + ".make_args",
                   std::string("arguments other than O=, CC=, LLVM=, -j and -C (kbench sets them), got '") + arg + "'");
        }
      }
      if (has_control_characters(arg) || arg.empty()) ctx.fail(args, at + ".make_args", "arguments without control characters");
    }
  }
  return spec;
}

// Why `sut` cannot boot a kernel with a swprofile's own device tree, "" when
// it can. sut.boot does not: an arm64 kexec without --dtb hands on the
// running kernel's device tree, so the swprofile's would reach every later
// boot, the restore included; GRUB boots with the firmware's.
std::string device_tree_refusal(const SutSpec& sut) {
  const sut::Method& method = sut_method(sut);
  if (method.has(sut::Capability::DeviceTree)) return "";
  std::string refusal = "sut" + (sut.name.empty() ? std::string() : " " + sut.name) + " with connection " + method.name;
  if (!method.has(sut::Capability::Deploy)) return refusal;
  if (!sut.boot) return refusal + " (it measures the running kernel)";
  if (sut.boot->method == "kexec") {
    return refusal + " and sut.boot (a kexec would pass the device tree on to the boots after it)";
  }
  return refusal + " and sut.boot method " + sut.boot->method + " (GRUB boots with the firmware's device tree)";
}

KernelSource kernel_source(const Context& ctx, const YAML::Node& node, const std::string& swprofile) {
  KernelSource kernel;
  if (node.IsScalar()) {
    kernel.image = ctx.scalar(node, "swprofiles[].kernel");
    return kernel;
  }
  ctx.only_keys(node, "swprofiles[].kernel", {"image", "modules", "config", "deb", "release", "dtb"});
  auto text = [&](const char* key) {
    if (!node[key]) return std::string();
    const std::string value = ctx.scalar(node[key], std::string("swprofiles[].kernel.") + key);
    if (is_blank(value) || has_control_characters(value)) {
      ctx.fail(node[key], std::string("swprofiles[].kernel.") + key, "a non-blank value");
    }
    return value;
  };
  kernel.image = text("image");
  kernel.modules = text("modules");
  kernel.config = text("config");
  kernel.deb = text("deb");
  kernel.release = text("release");
  kernel.dtb = text("dtb");
  if (kernel.release.find_first_of(" /") != std::string::npos) {
    ctx.fail(node["release"], "swprofiles[].kernel.release", "a kernel release as uname -r prints it, got '" +
                                                                  kernel.release + "'");
  }
  if (!kernel.deb.empty() && (!kernel.image.empty() || !kernel.modules.empty())) {
    ctx.fail(node, "swprofiles[].kernel", "either deb or image (with modules), not both");
  }
  if (kernel.deb.empty() && kernel.image.empty() && (!kernel.modules.empty() || !kernel.config.empty())) {
    ctx.fail(node, "swprofiles[].kernel.image", "the kernel image that the modules and config belong to");
  }
  if (kernel.empty()) ctx.fail(node, "swprofiles[].kernel", "deb, image (with modules) or release");
  if (!kernel.dtb.empty()) {
    if (kernel.image.empty()) ctx.fail(node, "swprofiles[].kernel.image", "the kernel image that the dtb belongs to");
    if (const std::string problem = device_tree_problem(kernel.dtb); !problem.empty()) {
      ctx.fail(node["dtb"], "swprofiles[].kernel.dtb",
               "a flattened device tree file for swprofile " + swprofile + ", got " + kernel.dtb + " (" + problem +
                   ")");
    }
  }
  return kernel;
}

// `at`: "sut" or "suts[]", the prefix of the keys named in errors.
BootSpec boot_spec(const Context& ctx, const YAML::Node& node, const SutSpec& sut, const std::string& at) {
  ctx.only_keys(node, at + ".boot", {"method", "timeout", "power_cycle", "console_log"});
  BootSpec boot;
  boot.line = node.Mark().line + 1;
  // The machine kbench runs on boots too (a systemd unit resumes the plan
  // after each boot), but only as a plan's one SUT: a fleet's workers run
  // side by side, and one of them cannot reboot the machine under the others.
  const sut::Method& method = sut_method(sut);
  const auto& methods = sut::MethodRegistry::instance();
  if (at == "sut" && !method.has(sut::Capability::Deploy)) {
    ctx.fail(node, at + ".boot",
             at + ".connection.method " + spoken_list(methods.names_with(sut::Capability::Deploy)) +
                 " (kbench boots kernels on ssh SUTs and on the machine it runs on)");
  }
  const auto boots_beside_others = [](const sut::Method& m) {
    return m.has(sut::Capability::Deploy) && !m.has(sut::Capability::OnController);
  };
  if (at != "sut" && !boots_beside_others(method)) {
    ctx.fail(node, at + ".boot",
             at + ".connection.method " + spoken_list(methods.names_where(boots_beside_others)) +
                 " (the machine kbench runs on boots kernels only as a plan's single sut)");
  }
  if (node["method"]) {
    boot.method = ctx.scalar(node["method"], at + ".boot.method");
    if (boot.method != "kexec" && boot.method != "reboot") {
      ctx.fail(node["method"], at + ".boot.method", "kexec or reboot, got '" + boot.method + "'");
    }
  }
  if (node["timeout"]) {
    const auto text = ctx.scalar(node["timeout"], at + ".boot.timeout");
    try {
      boot.timeout = parse_timeout(text, at + ".boot.timeout");
    } catch (const InputError&) {
      ctx.fail(node["timeout"], at + ".boot.timeout",
               "a duration in whole seconds from 1s to 24h such as 90s, 10m or 1h, got '" + text + "'");
    }
  }
  if (node["power_cycle"]) boot.power_cycle = ctx.scalar(node["power_cycle"], at + ".boot.power_cycle");
  if (node["console_log"]) boot.console_log = ctx.scalar(node["console_log"], at + ".boot.console_log");
  // The machine kbench runs on is not watched from outside: a kernel that
  // panics reboots it (panic=10), and the run after the boot judges it.
  for (const char* key : {"timeout", "power_cycle", "console_log"}) {
    if (method.has(sut::Capability::OnController) && node[key]) {
      ctx.fail(node[key], at + ".boot." + key,
               std::string("no ") + key + " with connection " + method.name +
                   " (nothing outside the machine waits for its boots: "
                   "a kernel that panics reboots it, and the run after the boot judges it)");
    }
  }
  return boot;
}

// One SUT: the plan's `sut` (at "sut") or an entry of `suts` (at "suts[]").
SutSpec sut_spec(const Context& ctx, const YAML::Node& sut, const std::string& at) {
  ctx.only_keys(sut, at, {"name", "connection", "boot", "class"});
  SutSpec spec;
  spec.line = sut.Mark().line + 1;
  if (sut["name"]) {
    spec.name = ctx.scalar(sut["name"], at + ".name");
    if (const auto expected = name_expectation(spec.name); !expected.empty()) {
      ctx.fail(sut["name"], at + ".name", expected + ", got '" + spec.name + "'");
    }
  }
  if (const auto declared = sut["class"]) {
    spec.sut_class = ctx.scalar(declared, at + ".class");
    if (!valid_sut_class(spec.sut_class)) {
      ctx.fail(declared, at + ".class",
               "a SUT class name of letters, digits, '.', '_' and '-' (at most 64), got '" + spec.sut_class + "'");
    }
  }
  if (const auto conn = sut["connection"]) {
    ctx.only_keys(conn, at + ".connection", {"method", "params"});
    if (conn["method"]) spec.method = ctx.scalar(conn["method"], at + ".connection.method");
    const auto& methods = sut::MethodRegistry::instance();
    const sut::Method* method = methods.find(spec.method);
    if (!method) {
      ctx.fail(conn["method"], at + ".connection.method",
               spoken_list(methods.names()) + ", got '" + spec.method + "'");
    }
    if (conn["params"]) spec.params = ctx.string_map(conn["params"], at + ".connection.params");
    if (const auto problem = method->problem_with(spec.params)) {
      const YAML::Node params = conn["params"];
      const YAML::Node where = params && params[problem->key] ? params[problem->key] : conn;
      ctx.fail(where, at + ".connection.params." + problem->key, problem->expected);
    }
  }
  if (const auto boot = sut["boot"]) spec.boot = boot_spec(ctx, boot, spec, at);
  return spec;
}

}  // namespace

std::string name_expectation(const std::string& name) {
  if (is_blank(name) || has_control_characters(name)) return "a non-blank name without control characters";
  // Reports and json outputs carry names as text.
  if (const std::size_t bad = first_byte_not_utf8(name); bad != std::string::npos) {
    return "a name in UTF-8 (byte " + std::to_string(bad + 1) + " is not)";
  }
  return "";
}

std::string KernelSource::describe() const {
  if (!deb.empty()) return deb;
  if (!image.empty()) return image + (modules.empty() ? "" : " + " + modules) + (dtb.empty() ? "" : " + dtb " + dtb);
  return release.empty() ? std::string() : "installed " + release;
}

namespace {

// After suts: and swprofiles: are read: crossover pairs two SUTs that differ
// only by chance (one class) under two swprofiles that swap between them.
void parse_design(const Context& ctx, const YAML::Node& node, Plan& plan) {
  const std::string text = ctx.scalar(node, "design");
  plan.design_line = node.Mark().line + 1;
  if (text == "interleaved") {
    plan.design = Design::Interleaved;
    return;
  }
  if (text == "duet") {
    plan.design = Design::Duet;
    if (!plan.sut || !sut_method(*plan.sut).has(sut::Capability::GuestOnController)) {
      ctx.fail(node, "design",
               "duet with one sut: whose connection boots a VM on this machine (method qemu), got " +
                   (plan.sut ? "method " + plan.sut->method : std::string(plan.suts.empty() ? "no SUT" : "a suts: list")));
    }
    if (plan.swprofiles.size() != 2) {
      ctx.fail(node, "design", "duet with exactly 2 swprofiles, got " + std::to_string(plan.swprofiles.size()));
    }
    return;
  }
  if (text != "crossover") ctx.fail(node, "design", "interleaved, crossover or duet, got '" + text + "'");
  plan.design = Design::Crossover;
  if (plan.suts.size() != 2) {
    const std::string got = plan.suts.empty() ? (plan.sut ? "a single sut:" : "no SUT")
                                              : std::to_string(plan.suts.size()) + " SUTs";
    ctx.fail(node, "design", "crossover with a suts: list of exactly 2 SUTs of one class, got " + got);
  }
  auto quoted = [](const std::string& name) { return name.empty() ? std::string("none") : "'" + name + "'"; };
  const std::string& first = plan.suts[0].sut_class;
  const std::string& second = plan.suts[1].sut_class;
  if (first.empty() || first != second) {
    ctx.fail(node, "design",
             "crossover's 2 SUTs to declare the same class:, got " + quoted(first) + " and " + quoted(second));
  }
  if (plan.swprofiles.size() != 2) {
    ctx.fail(node, "design", "crossover with exactly 2 swprofiles, got " + std::to_string(plan.swprofiles.size()));
  }
}

}  // namespace

Plan parse_plan(const std::string& yaml_text, const std::string& name_for_errors) {
  try {
    return parse_plan_text(yaml_text, name_for_errors, false);
  } catch (const YAML::Exception& e) {
    // A node of a shape no check expected (yaml-cpp's conversions throw):
    // still bad input in this file, never an internal error.
    throw InputError(name_for_errors + ":" + std::to_string(e.mark.line + 1) + ": expected the plan format (" +
                     e.msg + ")");
  }
}

namespace {

Plan parse_plan_text(const std::string& yaml_text, const std::string& name_for_errors, bool is_include) {
  Context ctx{name_for_errors};
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(name_for_errors + ":" + std::to_string(e.mark.line + 1) + ": expected valid YAML (" + e.msg + ")");
  }
  check_aliases(yaml_text, name_for_errors);
  Plan plan;
  plan.path = name_for_errors;
  if (!root.IsMap()) ctx.fail(root, "plan", "a mapping with the keys sut, swprofiles, benchmarks, defaults");
  ctx.no_duplicate_keys(root);
  if (is_include) {
    ctx.only_keys(root, "", {"benchmarks", "defaults"});
  } else {
    ctx.only_keys(root, "", {"include", "order", "design", "sut", "suts", "swprofiles", "benchmarks", "defaults"});
  }
  if (const auto order = root["order"]) {
    const std::string text = ctx.scalar(order, "order");
    if (text == "shuffled") plan.order = Order::Shuffled;
    else if (text == "listed") plan.order = Order::Listed;
    else ctx.fail(order, "order", "listed or shuffled, got '" + text + "'");
  }

  std::optional<Plan> included;
  if (const auto include = root["include"]) {
    const std::string path = include_path(name_for_errors, ctx.scalar(include, "include"));
    std::string text;
    try {
      text = read_plan_text(path);
    } catch (const InputError& e) {
      ctx.fail(include, "include", std::string("a readable plan file (") + e.what() + ")");
    }
    included = parse_plan_text(text, path, true);
    plan.defaults = included->defaults;
    plan.family_defaults = included->family_defaults;
    plan.benchmarks = included->benchmarks;
  }

  if (const auto defaults = root["defaults"]) {
    ctx.only_keys(defaults, "defaults", {"benchmark", "families"});
    if (defaults["benchmark"]) ctx.settings(defaults["benchmark"], "defaults.benchmark", plan.defaults);
    if (const auto families = defaults["families"]) {
      if (!families.IsMap()) ctx.fail(families, "defaults.families", "a mapping of benchmark families to settings");
      for (const auto& item : families) {
        const std::string family = ctx.key_name(item.first, "defaults.families");
        if (family.empty() || family.find('/') != std::string::npos) {
          ctx.fail(item.first, "defaults.families", "a benchmark family (syscall, perf, ...), got '" + family + "'");
        }
        plan.family_defaults[family] = ctx.settings_patch(item.second, "defaults.families." + family);
      }
    }
  }

  if (const auto sut = root["sut"]) plan.sut = sut_spec(ctx, sut, "sut");
  if (const auto suts = root["suts"]) {
    if (root["sut"]) ctx.fail(suts, "suts", "either sut (one SUT) or suts (a list), not both");
    if (!suts.IsSequence() || suts.size() == 0) ctx.fail(suts, "suts", "a non-empty list of SUTs");
    std::set<std::string> seen;
    for (const auto& node : suts) {
      if (node.IsMap() && !node["name"]) ctx.fail(node, "suts[].name", "a name for every SUT in the list");
      SutSpec spec = sut_spec(ctx, node, "suts[]");
      if (!seen.insert(spec.name).second) {
        ctx.fail(node["name"], "suts[].name", "unique names, '" + spec.name + "' appears twice");
      }
      plan.suts.push_back(std::move(spec));
    }
  }

  if (const auto profiles = root["swprofiles"]) {
    if (!profiles.IsSequence()) ctx.fail(profiles, "swprofiles", "a list of swprofiles");
    // plan exec would find none to run; without the key, --swprofile names one.
    if (profiles.size() == 0) {
      ctx.fail(profiles, "swprofiles", "at least one swprofile (or no swprofiles key, to name one with --swprofile)");
    }
    std::set<std::string> seen;
    for (const auto& node : profiles) {
      ctx.only_keys(node, "swprofiles[]", {"name", "kernel", "build", "cmdline", "cmdline_mode", "sysctl", "initrd", "wrapper"});
      SwprofileSpec spec;
      spec.line = node.Mark().line + 1;
      if (!node["name"]) ctx.fail(node, "swprofiles[].name", "a name for every swprofile");
      spec.name = ctx.scalar(node["name"], "swprofiles[].name");
      if (const auto expected = name_expectation(spec.name); !expected.empty()) {
        ctx.fail(node["name"], "swprofiles[].name", expected + ", got '" + spec.name + "'");
      }
      if (!seen.insert(spec.name).second) {
        ctx.fail(node["name"], "swprofiles[].name", "unique names, '" + spec.name + "' appears twice");
      }
      if (const auto kernel = node["kernel"]) {
        spec.kernel = kernel_source(ctx, kernel, spec.name);
        // Checked here, with the dtb's line: the SUTs come before the swprofiles.
        if (!spec.kernel.dtb.empty()) {
          std::vector<SutSpec> suts = plan.suts;
          if (plan.sut) suts.push_back(*plan.sut);
          std::string refusal =
              suts.empty() ? "no sut (the machine kbench runs on, measured under its running kernel)" : "";
          for (const SutSpec& sut : suts) {
            if (refusal.empty()) refusal = device_tree_refusal(sut);
          }
          if (!refusal.empty()) {
            ctx.fail(kernel["dtb"], "swprofiles[].kernel.dtb",
                     "a SUT that boots swprofile " + spec.name + "'s kernel with it (connection qemu or lava), got " +
                         refusal);
          }
        }
      }
      if (const auto build = node["build"]) {
        if (node["kernel"]) ctx.fail(build, "swprofiles[].build", "either kernel (a built kernel) or build, not both");
        spec.build = kernel_build_spec(ctx, build);
      }
      if (const auto mode = node["cmdline_mode"]) {
        const std::string text = ctx.scalar(mode, "swprofiles[].cmdline_mode");
        if (text == "append") spec.cmdline_mode = CmdlineMode::Append;
        else if (text == "replace") spec.cmdline_mode = CmdlineMode::Replace;
        else ctx.fail(mode, "swprofiles[].cmdline_mode", "append or replace, got '" + text + "'");
      }
      if (node["initrd"]) spec.initrd = ctx.scalar(node["initrd"], "swprofiles[].initrd");
      if (const auto cmdline = node["cmdline"]) {
        if (cmdline.IsScalar()) {
          std::istringstream words(cmdline.as<std::string>());
          for (std::string w; words >> w;) spec.cmdline.push_back(w);
        } else if (cmdline.IsSequence()) {
          for (const auto& w : cmdline) spec.cmdline.push_back(ctx.scalar(w, "swprofiles[].cmdline[]"));
        } else {
          ctx.fail(cmdline, "swprofiles[].cmdline", "a string or a list of strings");
        }
      }
      if (node["sysctl"]) spec.sysctl = ctx.string_map(node["sysctl"], "swprofiles[].sysctl");
      if (const auto wrapper = node["wrapper"]) {
        if (!wrapper.IsSequence() || wrapper.size() == 0) {
          ctx.fail(wrapper, "swprofiles[].wrapper", "a list of words, a command and its arguments");
        }
        for (const auto& w : wrapper) {
          spec.wrapper.push_back(ctx.scalar(w, "swprofiles[].wrapper[]"));
          if (spec.wrapper.back().empty() || has_control_characters(spec.wrapper.back())) {
            ctx.fail(w, "swprofiles[].wrapper[]", "a non-empty word without control characters");
          }
        }
      }
      plan.swprofiles.push_back(std::move(spec));
    }
  }

  if (const auto design = root["design"]) parse_design(ctx, design, plan);

  const auto benchmarks = root["benchmarks"];
  if (!benchmarks && included) return plan;
  if (!benchmarks) ctx.fail(root, "benchmarks", "a list of benchmarks");
  if (!benchmarks.IsSequence()) ctx.fail(benchmarks, "benchmarks", "a list of benchmarks");
  // Sessions of nothing would be stored as complete.
  if (benchmarks.size() == 0) ctx.fail(benchmarks, "benchmarks", "at least one benchmark");
  for (const auto& node : benchmarks) {
    BenchmarkEntry entry;
    entry.line = node.Mark().line + 1;
    entry.file = name_for_errors;
    if (node.IsScalar()) {
      entry.name = node.as<std::string>();
    } else {
      ctx.only_keys(node, "benchmarks[]", {"include", "name", "params", "warmups", "repeats", "sessions", "timeout", "size",
                                               "kernel_profile"});
      if (node["include"] && node["name"]) ctx.fail(node, "benchmarks[]", "either include or name, not both");
      if (node["include"]) entry.name = ctx.scalar(node["include"], "benchmarks[].include");
      else if (node["name"]) entry.name = ctx.scalar(node["name"], "benchmarks[].name");
      else ctx.fail(node, "benchmarks[]", "include: suite/name or name: suite/name");
      if (node["params"]) entry.params = ctx.string_map(node["params"], "benchmarks[].params");
      static constexpr const char* kSettingKeys[] = {"warmups", "repeats", "sessions", "timeout", "size",
                                                     "kernel_profile"};
      if (std::any_of(std::begin(kSettingKeys), std::end(kSettingKeys), [&](const char* key) { return bool(node[key]); })) {
        BenchmarkSettings overrides = plan.defaults;
        YAML::Node settings;
        for (const char* key : kSettingKeys) {
          if (node[key]) settings[key] = node[key];
        }
        ctx.settings(settings, "benchmarks[]", overrides);
        entry.overrides = overrides;
      }
    }
    if (entry.name.find('/') == std::string::npos) {
      ctx.fail(node, "benchmarks[]", "a benchmark name of the form suite/name, got '" + entry.name + "'");
    }
    plan.benchmarks.push_back(std::move(entry));
  }
  return plan;
}

}  // namespace

std::string read_plan_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("plan " + path + ": cannot read the file (expected a readable YAML plan)");
  // Read one byte past the limit, whatever the file is (a pipe or /dev/zero
  // has no size to ask for beforehand).
  std::string text(kMaxPlanBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxPlanBytes) {
    throw InputError("plan " + path + ": larger than 1 MiB (expected a YAML plan file)");
  }
  if (in.bad()) throw InputError("plan " + path + ": cannot read the file (expected a readable YAML plan)");
  return text;
}

Plan load_plan(const std::string& path) { return parse_plan(read_plan_text(path), path); }

}  // namespace kbench::plan
