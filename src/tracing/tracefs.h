#pragma once
// The kernel's tracefs as kfunc/* uses it: finding (or mounting) it, telling
// what it lacks, resolving a function name to the symbol ftrace knows, a
// function_graph set-up that restores every setting it changed, and parsing
// the `trace` text function_graph writes.
//
// The root is injectable (a Tracefs is just a directory), so the checks and
// parsers are tested on fake trees and sample texts; KBENCH_TRACEFS_ROOT
// points the agent at another directory the same way.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kbench::tracing {

// One tracefs directory. Paths are relative to the root, e.g.
// "per_cpu/cpu1/stats".
class Tracefs {
 public:
  explicit Tracefs(std::string root) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }
  std::string path(std::string_view name) const { return root_ + "/" + std::string(name); }
  bool exists(std::string_view name) const;
  // nullopt when the file cannot be read (missing, or not permitted).
  std::optional<std::string> read(std::string_view name) const;
  // Opens with O_TRUNC and writes `value` in one write(2), as `echo value >
  // file` does; throws RunError naming the file and the errno text.
  void write(std::string_view name, std::string_view value) const;

 private:
  std::string root_;
};

// The tracefs to use: $KBENCH_TRACEFS_ROOT when set; else /sys/kernel/tracing
// when mounted (or mountable: it is mounted then), else
// /sys/kernel/debug/tracing. Throws SkipBenchmark with the reason when none
// is usable.
Tracefs open_tracefs();

// Why function_graph tracing of one function cannot be done through
// `tracefs` by the calling process, or nullopt when it can: no tracers file,
// no function_graph among the tracers ("tracefs at R offers tracers blk
// function nop; kfunc needs function_graph"), no permission to write,
// another tracer in use, available_filter_functions unreadable.
std::optional<std::string> function_graph_unavailable(const Tracefs& tracefs);

// The space-separated tracers of available_tracers.
std::vector<std::string> parse_tracers(std::string_view available_tracers);

// The names available_filter_functions lists (first word of each line; the
// "[module]" column and address columns are dropped).
std::vector<std::string> parse_filter_functions(std::string_view text);

// The symbol ftrace traces for `function`: the exact name when listed, else
// the one compiler-suffixed variant (function.isra.0, .constprop.N, .part.N,
// .cold is never traced). nullopt when the function is not listed; throws
// InputError naming the candidates when several suffixed variants are.
std::optional<std::string> resolve_symbol(const std::vector<std::string>& functions, const std::string& function);

// One completed call in function_graph output.
struct GraphCall {
  int cpu = -1;  // -1 when the CPU column is off
  std::string function;
  double duration_ns = 0;
};

struct GraphTrace {
  std::vector<GraphCall> calls;
  std::uint64_t lost_events = 0;  // sum of "[LOST n EVENTS]" lines
  bool buffer_restarted = false;  // a "##### CPU n buffer started ####" line
};

// One line of function_graph output: a call with its duration (a leaf
// "f();" or the closing "} /* f */" of a nested call), or nullopt for
// headers, context-switch and interrupt markers and entries without a
// duration. A closing "}" without the funcgraph-tail comment has an empty
// function name (parse_graph_trace pairs it with its opening line).
std::optional<GraphCall> parse_graph_line(std::string_view line);

// Every call in a `trace` text, with the lost-event lines counted.
GraphTrace parse_graph_trace(std::string_view text);

// The "overrun" and "dropped events" counts of a per_cpu/cpuN/stats text;
// nullopt when neither is present.
std::optional<std::uint64_t> parse_lost_from_stats(std::string_view stats);

// The size in KB a per_cpu/cpuN/buffer_size_kb text states: "1408", or
// "7 (expanded: 1408)" before the buffers were first expanded (1408: what
// they become when a tracer starts).
std::optional<long> parse_buffer_size_kb(std::string_view text);

// tracing_cpumask's format: hexadecimal, comma every 32 bits ("1", "80",
// "1,00000000").
std::string cpumask_of(int cpu);

// The settings a function_graph session of a few functions on one CPU
// changes. The constructor records every original value first, then writes;
// the destructor (and restore()) writes the originals back in reverse order,
// also after a failed start, and never throws. The originals are also kept
// in a journal file (journal_directory()/kbench-tracefs-<pid>.journal) until
// restored, so that a process killed with the tracer set up (the agent's
// supervisor SIGKILLs its worker on SIGINT) is undone afterwards by
// restore_abandoned_sessions().
class FunctionGraphSession {
 public:
  struct Options {
    std::vector<std::string> functions;  // set_ftrace_filter and set_graph_function
    int cpu = 0;                         // tracing_cpumask, and the buffer sized
    long buffer_kb = 0;                  // this CPU's buffer at least this large
  };
  FunctionGraphSession(const Tracefs& tracefs, Options options);
  ~FunctionGraphSession() { restore(); }
  FunctionGraphSession(const FunctionGraphSession&) = delete;
  FunctionGraphSession& operator=(const FunctionGraphSession&) = delete;

  // Empties this CPU's buffer and resets its counters' baseline.
  void clear();
  void start();  // tracing_on = 1
  void stop();   // tracing_on = 0
  // current_tracer nop / function_graph. With tracing_on 0 alone the tracer's
  // hooks stay patched into the traced functions and still cost time, so an
  // untraced baseline needs the tracer removed. Attaching empties the buffer.
  void detach();
  void attach();
  // Events lost on the CPU since clear() (stats overrun + dropped events).
  std::uint64_t lost_since_clear() const;
  // This CPU's `trace` text (read while stopped; it is not consumed).
  std::string read_trace() const;
  // What was changed, for the benchmark's notes.
  std::string describe() const;
  void restore() noexcept;

 private:
  void change(const std::string& name, const std::string& value);
  void write_journal() const;
  std::string cpu_dir() const { return "per_cpu/cpu" + std::to_string(options_.cpu); }

  Tracefs tracefs_;
  Options options_;
  // (file, value to write back), in the order the changes were made.
  std::vector<std::pair<std::string, std::string>> saved_;
  std::uint64_t lost_baseline_ = 0;
  std::string journal_;
};

// Where journals are written: $KBENCH_TRACEFS_JOURNAL_DIR, else /tmp.
std::string journal_directory();

// Restores the settings of every journal whose process is gone (killed with
// the tracer set up) and removes it. Returns one line per journal restored,
// e.g. "restored 7 tracefs settings of /sys/kernel/tracing left by pid 123".
// Never throws.
std::vector<std::string> restore_abandoned_sessions() noexcept;

}  // namespace kbench::tracing
