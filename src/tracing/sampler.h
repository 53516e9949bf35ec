#pragma once
// Where a workload's kernel time goes: samples of the kernel instruction
// pointer taken by the software cpu-clock event of perf_event_open (an
// hrtimer, so it needs no hardware PMU and works in VMs and under QEMU TCG),
// resolved to function names through /proc/kallsyms. No perf binary: the
// agent carries this itself.
//
// The symbol table is parsed from text, so lookups are tested on fixture
// texts; the sampler itself is the real mechanism.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kbench::tracing {

// The kernel cannot be profiled here (perf_event_open refused or absent,
// kallsyms addresses hidden). what() is the reason, one line, for
// "profile unavailable: <reason>".
struct ProfileUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The text symbols of a kallsyms text ("ffffffff81000000 T _stext",
// "ffffffffc0a01000 t foo\t[mod]"), sorted by address, for IP lookups.
class KernelSymbols {
 public:
  struct Symbol {
    std::uint64_t address = 0;
    std::string name;
    std::string module;  // "" for the kernel image
  };

  // Keeps the symbols of types t, T, w and W (code); data, absolute and
  // malformed lines are dropped. Of several symbols at one address the first
  // listed is kept.
  static KernelSymbols parse(std::string_view kallsyms);
  // /proc/kallsyms, or $KBENCH_KALLSYMS when set. Throws ProfileUnavailable
  // when it cannot be read or every address reads as zero.
  static KernelSymbols load();

  // The symbol an address lies in: the last one at or below it. nullopt
  // below the first symbol and beyond the last one (whose end kallsyms does
  // not tell).
  const Symbol* lookup(std::uint64_t address) const;
  // "name", or "name [module]" for a module's function.
  static std::string display_name(const Symbol& symbol);

  std::size_t size() const { return symbols_.size(); }
  // Every address read as zero: kptr_restrict hides them from this process.
  bool addresses_hidden() const { return addresses_hidden_; }

 private:
  std::vector<Symbol> symbols_;
  bool addresses_hidden_ = false;
};

// Samples per kernel function ("name" or "name [module]").
struct KernelProfile {
  std::map<std::string, std::uint64_t> functions;
  std::uint64_t samples = 0;     // kernel samples read from the buffers
  std::uint64_t lost = 0;        // samples the kernel dropped (buffer full)
  std::uint64_t unresolved = 0;  // samples at no known symbol
  std::uint64_t period_ns = 0;

  // Adds another profile's counts (the same period).
  void add(const KernelProfile& other);
};

// The explanation for perf_event_open failing with `error` (an errno), given
// kernel.perf_event_paranoid (nullopt: the sysctl is missing, which means no
// perf events in this kernel).
std::string perf_open_refusal(int error, std::optional<int> paranoid);

// Samples the kernel IP every `period_ns` of CPU time of a task and (with
// inherit) every thread and child it starts after the sampler was made: one
// cpu-clock event per online CPU (an inherited event's buffer must be per
// CPU), created disabled.
class KernelSampler {
 public:
  struct Options {
    pid_t pid = 0;  // 0: the calling process
    bool inherit = true;
    std::uint64_t period_ns = 250000;  // 4 kHz of CPU time
    // Each CPU's ring buffer, in pages (a power of two): at 4 kHz and 16
    // bytes a sample, 256 pages hold 16 s of one CPU's samples between drains.
    std::size_t buffer_pages = 256;
  };

  // Throws ProfileUnavailable with the reason when the kernel refuses.
  explicit KernelSampler(Options options);
  KernelSampler();
  ~KernelSampler();
  KernelSampler(const KernelSampler&) = delete;
  KernelSampler& operator=(const KernelSampler&) = delete;

  void start();  // enables the events (and their inherited copies)
  void stop();   // disables them
  // Reads the samples in the buffers so far into the counts by IP; call it
  // after stop() at least every few seconds of sampled CPU time.
  void drain();
  // Everything drained so far (drain() first), resolved with `symbols`.
  KernelProfile profile(const KernelSymbols& symbols);

 private:
  struct Buffer;
  void drain_one(Buffer& buffer);

  Options options_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::map<std::uint64_t, std::uint64_t> by_ip_;
  std::uint64_t lost_ = 0;
};

}  // namespace kbench::tracing
