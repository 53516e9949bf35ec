#include "plan/plan.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

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

  int positive_int(const YAML::Node& node, const std::string& key, int minimum) const {
    const std::string text = scalar(node, key);
    try {
      std::size_t used = 0;
      const int value = std::stoi(text, &used);
      if (used == text.size() && value >= minimum) return value;
    } catch (const std::exception&) {
    }
    fail(node, key, "an integer >= " + std::to_string(minimum) + ", got '" + text + "'");
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

  void settings(const YAML::Node& node, const std::string& path, BenchmarkSettings& into) const {
    only_keys(node, path, {"warmups", "repeats", "sessions", "timeout", "size"});
    if (node["warmups"]) into.warmups = positive_int(node["warmups"], path + ".warmups", 0);
    if (node["repeats"]) into.repeats = positive_int(node["repeats"], path + ".repeats", 1);
    if (node["sessions"]) into.sessions = positive_int(node["sessions"], path + ".sessions", 1);
    if (node["timeout"]) {
      const auto text = scalar(node["timeout"], path + ".timeout");
      try {
        into.timeout = std::chrono::duration_cast<std::chrono::seconds>(parse_duration(text, path + ".timeout"));
      } catch (const InputError&) {
        fail(node["timeout"], path + ".timeout", "a duration such as 90s, 10m or 1h, got '" + text + "'");
      }
    }
    if (node["size"]) {
      into.size = scalar(node["size"], path + ".size");
      if (into.size != "quick" && into.size != "default") {
        fail(node["size"], path + ".size", "quick or default, got '" + into.size + "'");
      }
    }
  }
};

}  // namespace

BenchmarkSettings Plan::settings_for(const BenchmarkEntry& entry) const {
  return entry.overrides ? *entry.overrides : defaults;
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

namespace {
Plan parse_plan_document(const std::string& yaml_text, const std::string& name_for_errors) {
  Context ctx{name_for_errors};
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(name_for_errors + ":" + std::to_string(e.mark.line + 1) + ": expected valid YAML (" + e.msg + ")");
  }
  Plan plan;
  plan.path = name_for_errors;
  if (!root.IsMap()) ctx.fail(root, "plan", "a mapping with the keys sut, swprofiles, benchmarks, defaults");
  ctx.only_keys(root, "", {"sut", "swprofiles", "benchmarks", "defaults"});

  if (const auto defaults = root["defaults"]) {
    ctx.only_keys(defaults, "defaults", {"benchmark"});
    if (defaults["benchmark"]) ctx.settings(defaults["benchmark"], "defaults.benchmark", plan.defaults);
  }

  if (const auto sut = root["sut"]) {
    ctx.only_keys(sut, "sut", {"name", "connection"});
    SutSpec spec;
    if (sut["name"]) spec.name = ctx.scalar(sut["name"], "sut.name");
    if (const auto conn = sut["connection"]) {
      ctx.only_keys(conn, "sut.connection", {"method", "params"});
      if (conn["method"]) spec.method = ctx.scalar(conn["method"], "sut.connection.method");
      if (spec.method != "local" && spec.method != "ssh" && spec.method != "qemu") {
        ctx.fail(conn["method"], "sut.connection.method", "local, ssh or qemu, got '" + spec.method + "'");
      }
      if (conn["params"]) spec.params = ctx.string_map(conn["params"], "sut.connection.params");
    }
    plan.sut = spec;
  }

  if (const auto profiles = root["swprofiles"]) {
    if (!profiles.IsSequence()) ctx.fail(profiles, "swprofiles", "a list of swprofiles");
    std::set<std::string> seen;
    for (const auto& node : profiles) {
      ctx.only_keys(node, "swprofiles[]", {"name", "kernel", "cmdline", "sysctl", "initrd"});
      SwprofileSpec spec;
      spec.line = node.Mark().line + 1;
      if (!node["name"]) ctx.fail(node, "swprofiles[].name", "a name for every swprofile");
      spec.name = ctx.scalar(node["name"], "swprofiles[].name");
      if (!seen.insert(spec.name).second) {
        ctx.fail(node["name"], "swprofiles[].name", "unique names, '" + spec.name + "' appears twice");
      }
      if (node["kernel"]) spec.kernel = ctx.scalar(node["kernel"], "swprofiles[].kernel");
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
      plan.swprofiles.push_back(std::move(spec));
    }
  }

  const auto benchmarks = root["benchmarks"];
  if (!benchmarks) ctx.fail(root, "benchmarks", "a list of benchmarks");
  if (!benchmarks.IsSequence()) ctx.fail(benchmarks, "benchmarks", "a list of benchmarks");
  for (const auto& node : benchmarks) {
    BenchmarkEntry entry;
    entry.line = node.Mark().line + 1;
    if (node.IsScalar()) {
      entry.name = node.as<std::string>();
    } else {
      ctx.only_keys(node, "benchmarks[]", {"include", "name", "params", "warmups", "repeats", "sessions", "timeout", "size"});
      if (node["include"] && node["name"]) ctx.fail(node, "benchmarks[]", "either include or name, not both");
      if (node["include"]) entry.name = ctx.scalar(node["include"], "benchmarks[].include");
      else if (node["name"]) entry.name = ctx.scalar(node["name"], "benchmarks[].name");
      else ctx.fail(node, "benchmarks[]", "include: suite/name or name: suite/name");
      if (node["params"]) entry.params = ctx.string_map(node["params"], "benchmarks[].params");
      if (node["warmups"] || node["repeats"] || node["sessions"] || node["timeout"] || node["size"]) {
        BenchmarkSettings overrides = plan.defaults;
        YAML::Node settings;
        for (const char* key : {"warmups", "repeats", "sessions", "timeout", "size"}) {
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

Plan parse_plan(const std::string& yaml_text, const std::string& name_for_errors) {
  try {
    return parse_plan_document(yaml_text, name_for_errors);
  } catch (const YAML::Exception& e) {
    // A node of a shape no check above expected (yaml-cpp's conversions
    // throw): still bad input in this file, never an internal error.
    throw InputError(name_for_errors + ":" + std::to_string(e.mark.line + 1) + ": expected the plan format (" +
                     e.msg + ")");
  }
}

Plan load_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("plan " + path + ": cannot read the file (expected a readable YAML plan)");
  std::stringstream text;
  text << in.rdbuf();
  return parse_plan(text.str(), path);
}

}  // namespace kbench::plan
