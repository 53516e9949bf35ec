#include "tracing/tracefs.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/errors.h"

namespace kbench::tracing {
namespace {

std::string_view trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string join(const std::vector<std::string>& words, const char* separator) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : separator) + word;
  return out;
}

// Writes the saved originals back, last change first; a setting that cannot
// be written does not stop the others.
void write_back(const Tracefs& tracefs, const std::vector<std::pair<std::string, std::string>>& saved) noexcept {
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    try {
      tracefs.write(it->first, it->second);
    } catch (...) {
    }
  }
}

bool is_tracefs_root(const std::string& dir) {
  struct stat st {};
  return ::stat((dir + "/available_tracers").c_str(), &st) == 0 || ::stat((dir + "/tracing_on").c_str(), &st) == 0;
}

// Filter files read "#### all functions enabled ####" when empty and list
// one entry per line otherwise: the value to write back is the entries.
std::string filter_value(std::string_view text) {
  std::vector<std::string> entries;
  for (auto line : lines_of(text)) {
    line = trim(line);
    if (!line.empty() && line.front() != '#') entries.emplace_back(line);
  }
  return join(entries, " ");
}

std::optional<std::uint64_t> number_after(std::string_view text, std::string_view key) {
  for (auto line : lines_of(text)) {
    line = trim(line);
    if (line.substr(0, key.size()) != key) continue;
    auto rest = trim(line.substr(key.size()));
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (error == std::errc()) return value;
  }
  return std::nullopt;
}

}  // namespace

bool Tracefs::exists(std::string_view name) const {
  struct stat st {};
  return ::stat(path(name).c_str(), &st) == 0;
}

std::optional<std::string> Tracefs::read(std::string_view name) const {
  std::ifstream in(path(name), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

void Tracefs::write(std::string_view name, std::string_view value) const {
  const std::string file = path(name);
  const int fd = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw RunError("cannot open " + file + " for writing: " + std::strerror(errno));
  // An empty write still truncates: that is how filters are cleared. The
  // filter files take one word per write(2) and report the bytes of that
  // word only, so a list is written in a loop, like `echo a b > file`.
  std::size_t done = 0;
  while (done < value.size()) {
    const ssize_t written = ::write(fd, value.data() + done, value.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      const std::string why = written < 0 ? std::strerror(errno) : "nothing written";
      ::close(fd);
      throw RunError("writing '" + std::string(value) + "' to " + file + " failed: " + why);
    }
    done += static_cast<std::size_t>(written);
  }
  if (::close(fd) != 0) {
    throw RunError("writing '" + std::string(value) + "' to " + file + " failed: " + std::strerror(errno));
  }
}

Tracefs open_tracefs() {
  if (const char* injected = std::getenv("KBENCH_TRACEFS_ROOT"); injected && *injected) {
    if (!is_tracefs_root(injected)) {
      throw SkipBenchmark(std::string("KBENCH_TRACEFS_ROOT=") + injected + " holds no tracefs (no available_tracers)");
    }
    return Tracefs(injected);
  }
  const std::string standard = "/sys/kernel/tracing";
  if (is_tracefs_root(standard)) return Tracefs(standard);
  if (is_tracefs_root("/sys/kernel/debug/tracing")) return Tracefs("/sys/kernel/debug/tracing");
  if (::mount("nodev", standard.c_str(), "tracefs", 0, nullptr) == 0 && is_tracefs_root(standard)) {
    return Tracefs(standard);
  }
  throw SkipBenchmark("tracefs is not mounted at " + standard + " and mounting it failed (" + std::strerror(errno) +
                      "); kfunc needs tracefs");
}

std::vector<std::string> parse_tracers(std::string_view available_tracers) {
  std::vector<std::string> tracers;
  std::istringstream words{std::string(available_tracers)};
  for (std::string word; words >> word;) tracers.push_back(word);
  return tracers;
}

std::optional<std::string> function_graph_unavailable(const Tracefs& tracefs) {
  const auto tracers_text = tracefs.read("available_tracers");
  if (!tracers_text) {
    if (!tracefs.exists("available_tracers")) return "tracefs at " + tracefs.root() + " has no available_tracers";
    return "cannot read " + tracefs.path("available_tracers") + " (kfunc needs root)";
  }
  const auto tracers = parse_tracers(*tracers_text);
  if (std::find(tracers.begin(), tracers.end(), "function_graph") == tracers.end()) {
    return "tracefs offers tracers " + (tracers.empty() ? std::string("(none)") : join(tracers, " ")) +
           "; kfunc needs function_graph (CONFIG_FUNCTION_GRAPH_TRACER)";
  }
  for (const char* needed : {"current_tracer", "set_ftrace_filter", "set_graph_function", "max_graph_depth",
                             "tracing_cpumask", "tracing_on"}) {
    if (!tracefs.exists(needed)) return "tracefs at " + tracefs.root() + " has no " + needed;
  }
  if (::access(tracefs.path("current_tracer").c_str(), W_OK) != 0) {
    return "cannot write " + tracefs.path("current_tracer") + " (" + std::strerror(errno) + "; kfunc needs root)";
  }
  const auto current = tracefs.read("current_tracer");
  if (current && std::string(trim(*current)) != "nop") {
    return "tracefs is in use: current_tracer is " + std::string(trim(*current)) + ", not nop";
  }
  if (!tracefs.read("available_filter_functions")) {
    return "cannot read " + tracefs.path("available_filter_functions");
  }
  return std::nullopt;
}

std::vector<std::string> parse_filter_functions(std::string_view text) {
  std::vector<std::string> functions;
  for (auto line : lines_of(text)) {
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    functions.emplace_back(line.substr(0, line.find_first_of(" \t")));
  }
  return functions;
}

std::optional<std::string> resolve_symbol(const std::vector<std::string>& functions, const std::string& function) {
  std::vector<std::string> suffixed;
  for (const auto& name : functions) {
    if (name == function) return name;
    // GCC's clones keep the name and add ".<kind>.<n>" (isra, constprop,
    // part, and combinations); ".cold" parts are not entry points.
    if (name.size() > function.size() + 1 && name.starts_with(function) &&
        name[function.size()] == '.' && name.find(".cold") == std::string::npos &&
        std::find(suffixed.begin(), suffixed.end(), name) == suffixed.end()) {
      suffixed.push_back(name);
    }
  }
  if (suffixed.empty()) return std::nullopt;
  if (suffixed.size() > 1) {
    throw InputError("kfunc/" + function + ": the kernel has several traceable variants (" + join(suffixed, ", ") +
                     "); name one of them, e.g. kfunc/" + suffixed.front());
  }
  return suffixed.front();
}

std::optional<GraphCall> parse_graph_line(std::string_view line) {
  // " 1) + 10.123 us   |  finish_task_switch.isra.0();"
  // " 1)   0.845 us    |  } /* schedule */", with funcgraph-abstime a
  // timestamp column first, with funcgraph-proc a task column between.
  const auto bar = line.rfind('|');
  if (bar == std::string_view::npos) return std::nullopt;
  const std::string_view left = line.substr(0, bar);
  std::string_view right = trim(line.substr(bar + 1));
  if (right.empty() || left.find("=>") != std::string_view::npos) return std::nullopt;
  if (trim(left).substr(0, 1) == "#") return std::nullopt;

  // The duration: the last "<number> <unit>" of the columns left of the bar.
  static const std::regex duration_re(R"(([0-9]+(?:\.[0-9]+)?)\s*(ns|us|ms|s)\s*$)");
  const std::string left_text(trim(left));
  std::smatch match;
  if (!std::regex_search(left_text, match, duration_re)) return std::nullopt;
  const double number = std::strtod(match[1].str().c_str(), nullptr);
  const std::string unit = match[2].str();
  const double scale = unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : 1e9;

  GraphCall call;
  call.duration_ns = number * scale;
  static const std::regex cpu_re(R"((?:^|\s)([0-9]+)\))");
  std::smatch cpu_match;
  if (std::regex_search(left_text, cpu_match, cpu_re)) call.cpu = std::stoi(cpu_match[1].str());

  // funcgraph-retval appends "/* = 0x0 */" to a leaf; funcgraph-tail names
  // the function on its closing brace: "} /* schedule */".
  if (right.front() == '}') {
    const auto open = right.find("/*");
    if (open != std::string_view::npos) {
      auto inside = right.substr(open + 2);
      inside = trim(inside.substr(0, inside.find("*/")));
      if (inside.substr(0, 1) != "=") call.function = std::string(inside.substr(0, inside.find_first_of(" \t")));
    }
    return call;
  }
  const auto paren = right.find("();");
  if (paren == std::string_view::npos) return std::nullopt;  // "f() {": no duration yet
  call.function = std::string(trim(right.substr(0, paren)));
  return call;
}

GraphTrace parse_graph_trace(std::string_view text) {
  GraphTrace trace;
  static const std::regex lost_re(R"(\[LOST ([0-9]+) EVENTS\])");
  // Opened nested calls per CPU, to name a closing "}" without a tail comment.
  std::map<int, std::vector<std::string>> open_calls;
  static const std::regex opening_re(R"(\|\s*([A-Za-z0-9_.$]+)\(\)\s*\{\s*$)");
  for (const auto line : lines_of(text)) {
    const std::string line_text(line);
    std::smatch match;
    if (std::regex_search(line_text, match, lost_re)) {
      trace.lost_events += std::stoull(match[1].str());
      continue;
    }
    if (line_text.find("buffer started") != std::string::npos && line_text.find("#####") != std::string::npos) {
      trace.buffer_restarted = true;
      continue;
    }
    auto call = parse_graph_line(line);
    if (!call) {
      if (std::regex_search(line_text, match, opening_re)) {
        int cpu = -1;
        static const std::regex cpu_re(R"(^\s*([0-9]+)\))");
        std::smatch cpu_match;
        if (std::regex_search(line_text, cpu_match, cpu_re)) cpu = std::stoi(cpu_match[1].str());
        open_calls[cpu].push_back(match[1].str());
      }
      continue;
    }
    const bool closing = trim(line.substr(line.rfind('|') + 1)).substr(0, 1) == "}";
    if (closing) {
      auto& stack = open_calls[call->cpu];
      if (!stack.empty()) {
        if (call->function.empty()) call->function = stack.back();
        stack.pop_back();
      }
      if (call->function.empty()) continue;  // its opening line was before the buffer's start
    }
    trace.calls.push_back(std::move(*call));
  }
  return trace;
}

std::optional<std::uint64_t> parse_lost_from_stats(std::string_view stats) {
  const auto overrun = number_after(stats, "overrun:");
  const auto dropped = number_after(stats, "dropped events:");
  if (!overrun && !dropped) return std::nullopt;
  return overrun.value_or(0) + dropped.value_or(0);
}

std::optional<long> parse_buffer_size_kb(std::string_view text) {
  static const std::regex expanded_re(R"(expanded:\s*([0-9]+))");
  const std::string line(trim(text));
  std::smatch match;
  if (std::regex_search(line, match, expanded_re)) return std::stol(match[1].str());
  long value = 0;
  const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), value);
  if (error != std::errc()) return std::nullopt;
  return value;
}

std::string cpumask_of(int cpu) {
  // 32-bit groups, most significant first, separated by commas.
  const int groups = cpu / 32 + 1;
  std::string out;
  for (int group = groups - 1; group >= 0; --group) {
    char buffer[16];
    const unsigned value = group == cpu / 32 ? 1u << (cpu % 32) : 0u;
    std::snprintf(buffer, sizeof buffer, group == groups - 1 ? "%x" : "%08x", value);
    if (!out.empty()) out += ',';
    out += buffer;
  }
  return out;
}

FunctionGraphSession::FunctionGraphSession(const Tracefs& tracefs, Options options)
    : tracefs_(tracefs), options_(std::move(options)) {
  journal_ = journal_directory() + "/kbench-tracefs-" + std::to_string(::getpid()) + ".journal";
  try {
    const std::string functions = join(options_.functions, " ");
    change("tracing_on", "0");
    change("set_ftrace_filter", functions);
    change("set_graph_function", functions);
    change("max_graph_depth", "1");
    change("tracing_cpumask", cpumask_of(options_.cpu));
    // Before the first tracer ever ran, the buffers are minimal ("7
    // (expanded: 1408)") and starting a tracer expands them all. Resizing
    // one CPU would count as that expansion and leave the others minimal
    // (and this one minimal again after the restore): expand them all first,
    // as any tracer start does. That one change is not undone.
    if (const auto top = tracefs_.read("buffer_size_kb"); top && top->find("expanded:") != std::string::npos) {
      if (const auto expanded = parse_buffer_size_kb(*top)) tracefs_.write("buffer_size_kb", std::to_string(*expanded));
    }
    const std::string buffer = cpu_dir() + "/buffer_size_kb";
    const long current = parse_buffer_size_kb(tracefs_.read(buffer).value_or("")).value_or(0);
    if (options_.buffer_kb > current) change(buffer, std::to_string(options_.buffer_kb));
    change("current_tracer", "function_graph");
  } catch (...) {
    restore();
    throw;
  }
}

void FunctionGraphSession::change(const std::string& name, const std::string& value) {
  const auto original = tracefs_.read(name);
  if (!original) throw RunError("cannot read " + tracefs_.path(name));
  std::string saved;
  if (name == "set_ftrace_filter" || name == "set_graph_function") {
    saved = filter_value(*original);
  } else if (name.find("buffer_size_kb") != std::string::npos) {
    saved = std::to_string(parse_buffer_size_kb(*original).value_or(0));
  } else {
    saved = std::string(trim(*original));
  }
  // Recorded before the write: a write that fails half-way is undone too.
  saved_.emplace_back(name, saved);
  write_journal();
  tracefs_.write(name, value);
}

// Line 1: the tracefs root; then "<file>\t<original value>" in the order
// changed. Rewritten whole after each change (a handful of lines).
void FunctionGraphSession::write_journal() const {
  const std::string temporary = journal_ + ".new";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << tracefs_.root() << '\n';
    for (const auto& [name, value] : saved_) out << name << '\t' << value << '\n';
    if (!out) throw RunError("cannot write the tracefs restore journal " + temporary);
  }
  if (std::rename(temporary.c_str(), journal_.c_str()) != 0) {
    throw RunError("cannot write the tracefs restore journal " + journal_ + ": " + std::strerror(errno));
  }
}

void FunctionGraphSession::clear() {
  tracefs_.write(cpu_dir() + "/trace", "");
  lost_baseline_ = parse_lost_from_stats(tracefs_.read(cpu_dir() + "/stats").value_or("")).value_or(0);
}

void FunctionGraphSession::start() { tracefs_.write("tracing_on", "1"); }
void FunctionGraphSession::stop() { tracefs_.write("tracing_on", "0"); }
void FunctionGraphSession::detach() { tracefs_.write("current_tracer", "nop"); }
void FunctionGraphSession::attach() { tracefs_.write("current_tracer", "function_graph"); }

std::uint64_t FunctionGraphSession::lost_since_clear() const {
  const auto stats = tracefs_.read(cpu_dir() + "/stats");
  if (!stats) throw RunError("cannot read " + tracefs_.path(cpu_dir() + "/stats"));
  const auto lost = parse_lost_from_stats(*stats);
  if (!lost) throw RunError(tracefs_.path(cpu_dir() + "/stats") + " states no overrun count");
  return *lost >= lost_baseline_ ? *lost - lost_baseline_ : *lost;
}

std::string FunctionGraphSession::read_trace() const {
  const auto text = tracefs_.read(cpu_dir() + "/trace");
  if (!text) throw RunError("cannot read " + tracefs_.path(cpu_dir() + "/trace"));
  return *text;
}

std::string FunctionGraphSession::describe() const {
  std::string out = "function_graph on cpu" + std::to_string(options_.cpu) + " (tracing_cpumask " +
                    cpumask_of(options_.cpu) + "), max_graph_depth 1, set_graph_function/set_ftrace_filter " +
                    join(options_.functions, " ");
  for (const auto& [name, value] : saved_) {
    if (name.find("buffer_size_kb") != std::string::npos) {
      out += ", " + name + " " + value + " -> " + std::to_string(options_.buffer_kb);
    }
  }
  return out;
}

void FunctionGraphSession::restore() noexcept {
  write_back(tracefs_, saved_);
  // The changes made the buffer hold our calls; leave it as empty as found.
  if (!saved_.empty()) {
    try {
      tracefs_.write(cpu_dir() + "/trace", "");
    } catch (...) {
    }
  }
  saved_.clear();
  if (!journal_.empty()) ::unlink(journal_.c_str());
}

std::string journal_directory() {
  const char* dir = std::getenv("KBENCH_TRACEFS_JOURNAL_DIR");
  return dir && *dir ? dir : "/tmp";
}

std::vector<std::string> restore_abandoned_sessions() noexcept {
  std::vector<std::string> restored;
  try {
    const std::string prefix = "kbench-tracefs-", suffix = ".journal";
    for (const auto& entry : std::filesystem::directory_iterator(journal_directory())) {
      const std::string file = entry.path().filename().string();
      if (file.size() <= prefix.size() + suffix.size() || !file.starts_with(prefix) || !file.ends_with(suffix)) {
        continue;
      }
      const std::string pid_text = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
      const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
      if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;  // still alive
      std::ifstream in(entry.path());
      std::string root;
      std::getline(in, root);
      std::vector<std::pair<std::string, std::string>> saved;
      for (std::string line; std::getline(in, line);) {
        const auto tab = line.find('\t');
        if (tab != std::string::npos) saved.emplace_back(line.substr(0, tab), line.substr(tab + 1));
      }
      write_back(Tracefs(root), saved);
      ::unlink(entry.path().c_str());
      restored.push_back("restored " + std::to_string(saved.size()) + " tracefs settings of " + root +
                         " left by pid " + pid_text);
    }
  } catch (...) {
    // A journal directory that cannot be listed holds no journal of ours.
  }
  return restored;
}

}  // namespace kbench::tracing
