// micromm/fork and micromm/munmap: the cost of fork() and of munmap() for a
// process owning a large populated anonymous mapping, once with small (4KB)
// folios and once with PMD-sized (2MB) THP folios. These are the paths folio
// batching changes (copy_pte_range, zap_pte_range), so a kernel patch there
// shows up as a difference between the p:1 and p:512 rows.
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/benchmark.h"
#include "benchmarks/mm_probe.h"
#include "common/errors.h"
#include "timing/affinity.h"
#include "timing/clock.h"

namespace kbench::bench {
namespace {

using mm::anon_huge_fraction;
using mm::kGiB;
using mm::kMiB;
using mm::size_label;
using mm::thp_mode;

constexpr std::uint64_t kPmdBytes = 2 * kMiB;
// The mapping size the seed's "d:10" rows were taken with; other sizes are
// named in the result class (", s:256MB") so they never mix with it.
constexpr std::uint64_t kSeedMappingBytes = kGiB;
// Below this share of PMD-mapped memory a "p:512" row would measure small
// folios under a large-folio name.
constexpr double kMinThpCoverage = 0.5;

// Why 2MB folios cannot be had here, or "".
std::string thp_unavailable() {
  if (sysconf(_SC_PAGESIZE) != 4096) return "the base page size is not 4KB, so p:512 is not a 2MB folio";
  const std::string mode = thp_mode();
  if (mode.empty()) return "transparent hugepages are not available (no /sys/kernel/mm/transparent_hugepage)";
  if (mode == "never") return "transparent hugepages are disabled (transparent_hugepage/enabled = never)";
  return "";
}

struct MicroParams {
  std::vector<int> folio_pages;  // 1 and/or 512
  double duration = 0;           // seconds of wall clock per result class
  std::string duration_text;     // as given, for the name
  std::uint64_t mapping = 0;
};

MicroParams parse_micro_params(const Params& params) {
  MicroParams p;
  // Each value's kind and range were checked against params().
  for (const auto& item : param_list(params, "p")) p.folio_pages.push_back(std::stoi(item));
  p.duration = param_double(params, "d");
  p.duration_text = param_string(params, "d");
  p.mapping = parse_size(param_string(params, "size"), "parameter 'size'");
  if (p.mapping % kPmdBytes != 0) {
    throw InputError("micromm: parameter 'size' = '" + param_string(params, "size") +
                     "': expected a multiple of 2MB (the THP size)");
  }
  return p;
}

std::string label(const std::string& op, const MicroParams& p, int folio) {
  std::string name = op + ": p:" + std::to_string(folio) + ", d:" + p.duration_text;
  if (p.mapping != kSeedMappingBytes) name += ", s:" + size_label(p.mapping);
  return name;
}

// A populated private anonymous mapping of `bytes`, 2MB-aligned, backed by
// 4KB folios (folio == 1) or 2MB THP folios (folio == 512).
class PopulatedMapping {
 public:
  PopulatedMapping(std::uint64_t bytes, int folio) : bytes_(bytes) {
    // Over-map by one PMD so the range can be aligned for THP.
    reserved_ = bytes + kPmdBytes;
    void* raw = mmap(nullptr, reserved_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw RunError("micromm: mmap of " + size_label(reserved_) + " failed: " + std::strerror(errno));
    raw_ = static_cast<char*>(raw);
    const auto addr = reinterpret_cast<std::uintptr_t>(raw_);
    base_ = reinterpret_cast<char*>((addr + kPmdBytes - 1) / kPmdBytes * kPmdBytes);
    // Give back the unaligned head and tail so only the aligned range exists.
    const std::uint64_t head = static_cast<std::uint64_t>(base_ - raw_);
    if (head) munmap(raw_, head);
    const std::uint64_t tail = reserved_ - head - bytes_;
    if (tail) munmap(base_ + bytes_, tail);
    raw_ = base_;
    reserved_ = bytes_;
    // NOHUGEPAGE keeps p:1 on small folios even when THP is "always".
    if (madvise(base_, bytes_, folio == 512 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
      const int err = errno;
      release();
      throw RunError(std::string("micromm: madvise(") + (folio == 512 ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE") +
                     ") failed: " + std::strerror(err));
    }
    if (madvise(base_, bytes_, MADV_POPULATE_WRITE) != 0) {
      // Kernels before 5.14: write every page instead.
      volatile char* bytes_v = base_;
      for (std::uint64_t off = 0; off < bytes_; off += 4096) bytes_v[off] = 1;
    }
  }
  ~PopulatedMapping() { release(); }
  PopulatedMapping(const PopulatedMapping&) = delete;
  PopulatedMapping& operator=(const PopulatedMapping&) = delete;

  double huge_fraction() const { return anon_huge_fraction(base_, bytes_); }
  // Times munmap() of the whole mapping; the object owns nothing afterwards.
  double timed_unmap() {
    const double start = timing::monotonic_seconds();
    const int rc = munmap(base_, bytes_);
    const double seconds = timing::monotonic_seconds() - start;
    if (rc != 0) throw RunError(std::string("micromm: munmap failed: ") + std::strerror(errno));
    base_ = nullptr;
    return seconds;
  }

 private:
  void release() {
    if (base_) munmap(base_, bytes_);
    base_ = nullptr;
  }
  std::uint64_t bytes_ = 0;
  std::uint64_t reserved_ = 0;
  char* raw_ = nullptr;
  char* base_ = nullptr;
};

// fork() + the child's immediate _exit() + the parent's waitpid(): what a
// shell pays to start a command from a process that owns the mapping.
double timed_fork() {
  const pid_t parent = getpid();
  const double start = timing::monotonic_seconds();
  const pid_t child = fork();
  if (child < 0) throw RunError(std::string("micromm/fork: fork failed: ") + std::strerror(errno));
  if (child == 0) {
    // Never outlive an agent killed between fork and wait.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    _exit(0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw RunError(std::string("micromm/fork: waitpid failed: ") + std::strerror(errno));
  }
  const double seconds = timing::monotonic_seconds() - start;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw RunError("micromm/fork: child did not exit cleanly (status " + std::to_string(status) + ")");
  }
  return seconds;
}

class MicroMm final : public Benchmark {
 public:
  explicit MicroMm(std::string op) : op_(std::move(op)) {}

  std::string name() const override { return "micromm/" + op_; }
  std::string description() const override {
    return op_ == "fork"
               ? "mean time of fork()+child exit+waitpid() for a process owning a populated anonymous mapping "
                 "of 4KB (p:1) or 2MB THP (p:512) folios, repeated for d seconds"
               : "mean time of munmap() of a populated anonymous mapping of 4KB (p:1) or 2MB THP (p:512) "
                 "folios, repeated (re-populating untimed) for d seconds";
  }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec{"p", "1,512", "1,512",
                  "folio size in base pages: 1 = 4KB small folios, 512 = 2MB THP folios (MADV_HUGEPAGE)"}
            .choice({"1", "512"})
            .list_of(),
        ParamSpec{"d", "10", "0.5",
                  "seconds of wall clock spent repeating the operation per result class; the result is the mean "
                  "per operation"}
            .number(0.001, 3600),
        ParamSpec{"size", "1GB", "64MB", "size of the populated mapping (a multiple of 2MB; named as s: unless 1GB)"}
            .size(2 << 20, 1024.0 * (1 << 30)),
    };
  }

  std::vector<ResultClass> result_classes(const Params& params) const override {
    const MicroParams p = parse_micro_params(params);
    std::vector<ResultClass> out;
    for (const int folio : p.folio_pages) {
      if (folio == 512 && !thp_unavailable().empty()) continue;
      out.push_back({label(op_, p, folio), "seconds", Better::Lower});
    }
    return out;
  }

  void prepare(const Params& params, const Placement& where) override {
    const MicroParams p = parse_micro_params(params);
    placement_ = where.cpu >= 0 ? "cpu" + std::to_string(timing::pin_to_cpu(where.cpu).front()) : "not pinned";
    if (op_ == "fork") placement_ += " (the child inherits the parent's affinity)";
    unavailable_ = thp_unavailable();
    if (result_classes(params).empty()) throw SkipBenchmark("p:512 needs THP: " + unavailable_);
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement& /*where*/) override {
    const MicroParams p = parse_micro_params(params);
    std::vector<Measurement> out;
    for (const int folio : p.folio_pages) {
      if (folio == 512 && !thp_unavailable().empty()) continue;
      const double mean = op_ == "fork" ? measure_fork(p, folio) : measure_munmap(p, folio);
      out.push_back({{label(op_, p, folio), "seconds", Better::Lower}, mean});
    }
    return out;
  }

  std::map<std::string, std::string> notes() const override {
    std::map<std::string, std::string> n{{"placement", placement_.empty() ? "not pinned" : placement_}};
    if (!unavailable_.empty()) n["p:512 not measured"] = unavailable_;
    if (thp_coverage_ >= 0) {
      char text[64];
      std::snprintf(text, sizeof text, "%.1f%%", thp_coverage_ * 100.0);
      n["p:512 mapping backed by PMD THP"] = text;
    }
    if (!ops_text_.empty()) n["operations in the last repeat"] = ops_text_;
    return n;
  }

 private:
  void check_folios(const PopulatedMapping& mapping, int folio) {
    if (folio != 512) return;
    thp_coverage_ = mapping.huge_fraction();
    if (thp_coverage_ < kMinThpCoverage) {
      throw RunError("micromm: only " + std::to_string(static_cast<int>(thp_coverage_ * 100)) +
                     "% of the p:512 mapping got 2MB THP folios (memory fragmented or THP defrag off?)");
    }
  }

  double measure_fork(const MicroParams& p, int folio) {
    PopulatedMapping mapping(p.mapping, folio);
    check_folios(mapping, folio);
    const double end = timing::monotonic_seconds() + p.duration;
    double total = 0;
    std::int64_t ops = 0;
    do {
      total += timed_fork();
      ++ops;
    } while (timing::monotonic_seconds() < end);
    record_ops(folio, ops);
    return total / static_cast<double>(ops);
  }

  double measure_munmap(const MicroParams& p, int folio) {
    const double end = timing::monotonic_seconds() + p.duration;
    double total = 0;
    std::int64_t ops = 0;
    do {
      PopulatedMapping mapping(p.mapping, folio);
      check_folios(mapping, folio);
      total += mapping.timed_unmap();
      ++ops;
    } while (timing::monotonic_seconds() < end);
    record_ops(folio, ops);
    return total / static_cast<double>(ops);
  }

  void record_ops(int folio, std::int64_t ops) {
    const std::string entry = "p:" + std::to_string(folio) + " " + std::to_string(ops);
    const auto at = ops_text_.find("p:" + std::to_string(folio) + " ");
    if (at == std::string::npos) {
      ops_text_ += (ops_text_.empty() ? "" : ", ") + entry;
    } else {
      const auto stop = ops_text_.find(',', at);
      ops_text_.replace(at, stop == std::string::npos ? std::string::npos : stop - at, entry);
    }
  }

  std::string op_;
  std::string placement_;
  std::string unavailable_;
  std::string ops_text_;
  double thp_coverage_ = -1;
};

KBENCH_REGISTER("micromm/fork", [] { return std::make_unique<MicroMm>("fork"); });
KBENCH_REGISTER("micromm/munmap", [] { return std::make_unique<MicroMm>("munmap"); });

}  // namespace
}  // namespace kbench::bench
