// perf/mem: memory bandwidth of memset() and the cost of populating fresh
// anonymous mappings, with the semantics of `perf bench mem memset` and
// `perf bench mem mmap` (tools/perf/bench/mem-functions.c), so that the
// result class names can be the perf command lines that would produce them.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
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

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

namespace kbench::bench {
namespace {

using mm::anon_huge_fraction;
using mm::kGiB;
using mm::kKiB;
using mm::kMiB;
using mm::read_first_line;
using mm::size_label;
using mm::thp_mode;

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::uint64_t hugetlb_free_pages(std::uint64_t page_bytes) {
  const std::string path = "/sys/kernel/mm/hugepages/hugepages-" +
                           std::to_string(page_bytes / kKiB) + "kB/free_hugepages";
  const std::string line = read_first_line(path);
  if (line.empty()) return 0;
  return std::strtoull(line.c_str(), nullptr, 10);
}

enum class HugeSource { Thp, Hugetlb };

struct MemParams {
  std::vector<std::string> tests;  // "memset", "mmap"
  std::uint64_t memset_size = 0;
  std::uint64_t memset_chunk = 0;
  std::int64_t memset_loops = 0;
  std::uint64_t mmap_size = 0;
  std::int64_t mmap_loops = 0;
  std::vector<std::uint64_t> pages;
  std::vector<std::string> faults;  // "demand", "populate"
  HugeSource huge = HugeSource::Thp;
};

bool wants(const MemParams& p, const std::string& test) {
  return std::find(p.tests.begin(), p.tests.end(), test) != p.tests.end();
}

MemParams parse_mem_params(const Params& params) {
  MemParams p;
  // Each value alone was checked against params(); the rules between
  // values and the page sizes are checked here.
  p.tests = split_list(param_string(params, "tests"));
  p.memset_size = parse_size(param_string(params, "memset_size"), "parameter 'memset_size'");
  p.memset_chunk = parse_size(param_string(params, "memset_chunk"), "parameter 'memset_chunk'");
  p.memset_loops = param_int(params, "memset_loops");
  p.mmap_size = parse_size(param_string(params, "mmap_size"), "parameter 'mmap_size'");
  p.mmap_loops = param_int(params, "mmap_loops");
  if (p.memset_chunk > p.memset_size) {
    throw InputError("perf/mem: parameter 'memset_chunk' = '" + param_string(params, "memset_chunk") +
                     "': expected a size between 1B and memset_size");
  }
  for (const auto& text : split_list(param_string(params, "pages"))) {
    const std::uint64_t page = parse_size(text, "parameter 'pages'");
    if (page != 4 * kKiB && page != 2 * kMiB && page != kGiB) {
      throw InputError("parameter 'pages=" + param_string(params, "pages") + "': page size '" + text +
                       "' is not one of 4KB, 2MB, 1GB");
    }
    if (p.mmap_size == 0 || p.mmap_size % page != 0) {
      throw InputError("parameter 'mmap_size=" + param_string(params, "mmap_size") +
                       "': expected a non-zero multiple of every page size in 'pages' (" + text + ")");
    }
    p.pages.push_back(page);
  }
  if (p.pages.empty() && wants(p, "mmap")) throw InputError("parameter 'pages' is empty: expected e.g. 4KB,2MB");
  p.faults = split_list(param_string(params, "faults"));
  p.huge = param_string(params, "huge") == "hugetlb" ? HugeSource::Hugetlb : HugeSource::Thp;
  return p;
}

// Why a page size cannot be measured on this machine with these parameters,
// or "" when it can. Deterministic for a given machine state, so that
// result_classes() and run_repeat() agree.
std::string page_size_unavailable(const MemParams& p, std::uint64_t page) {
  const long base = sysconf(_SC_PAGESIZE);
  if (page == 4 * kKiB) {
    return base == 4096 ? "" : "the base page size is " + std::to_string(base) + " bytes, not 4KB";
  }
  if (page == 2 * kMiB && p.huge == HugeSource::Thp) {
    const std::string mode = thp_mode();
    if (mode.empty()) return "transparent hugepages are not available (no /sys/kernel/mm/transparent_hugepage)";
    if (mode == "never") return "transparent hugepages are disabled (transparent_hugepage/enabled = never)";
    const std::string pmd = read_first_line("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    if (!pmd.empty() && std::strtoull(pmd.c_str(), nullptr, 10) != 2 * kMiB) {
      return "the THP size (hpage_pmd_size) is " + pmd + " bytes, not 2MB";
    }
    return "";
  }
  if (page == kGiB && p.huge == HugeSource::Thp) {
    return "1GB pages need huge=hugetlb (THP only provides PMD-sized pages)";
  }
  // hugetlb: the whole mapping must fit in free pre-allocated pages.
  const std::uint64_t free_pages = hugetlb_free_pages(page);
  const std::uint64_t needed = p.mmap_size / page;
  if (free_pages < needed) {
    return "hugetlb has " + std::to_string(free_pages) + " free " + size_label(page) + " pages, " +
           std::to_string(needed) + " needed (see /sys/kernel/mm/hugepages)";
  }
  return "";
}

std::string memset_label(const MemParams& p) {
  std::string name = "memset -k " + size_label(p.memset_chunk) + " -f default -s " + size_label(p.memset_size);
  if (p.memset_loops != 1) name += " -l " + std::to_string(p.memset_loops);
  return name;
}

std::string mmap_label(const MemParams& p, std::uint64_t page, const std::string& fault) {
  return "mmap -p " + size_label(page) + " -f " + fault + " -s " + size_label(p.mmap_size) + " -l " +
         std::to_string(p.mmap_loops);
}

// memset through a volatile pointer: the compiler must not drop stores to a
// buffer it can see is never read.
void* (*volatile g_memset)(void*, int, std::size_t) = std::memset;

class Mem final : public Benchmark {
 public:
  std::string name() const override { return "perf/mem"; }
  std::string description() const override {
    return "memset() bandwidth over a pre-faulted buffer, and mmap()+first-touch bandwidth with demand or "
           "eager (populate) faults for 4KB and 2MB pages, as perf bench mem memset/mmap";
  }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec{"tests", "memset,mmap", "memset,mmap", "which tests to run: memset, mmap (comma-separated)"}
            .choice({"memset", "mmap"})
            .list_of(),
        ParamSpec{"memset_size", "2GB", "256MB", "memset: buffer size (perf -s)"}.size(1, 1024.0 * kGiB),
        ParamSpec{"memset_chunk", "1GB", "64MB", "memset: bytes per memset() call (perf -k)"}.size(1, 1024.0 * kGiB),
        ParamSpec{"memset_loops", "4", "4",
                  "memset: passes over the buffer per repeat (perf -l; omitted from the name when 1)"}
            .integer(1, 1e9),
        ParamSpec{"mmap_size", "1GB", "64MB", "mmap: mapping size (perf -s)"}.size(4096, 1024.0 * kGiB),
        ParamSpec{"mmap_loops", "2", "2", "mmap: mappings created, touched and unmapped per repeat (perf -l)"}
            .integer(1, 1e9),
        ParamSpec{"pages", "4KB,2MB", "4KB,2MB", "mmap: page sizes to measure: 4KB, 2MB, 1GB (perf -p)"}
            .size(4 * kKiB, kGiB)
            .list_of(),
        ParamSpec{"faults", "demand,populate", "demand,populate", "mmap: fault modes: demand, populate (perf -f)"}
            .choice({"demand", "populate"})
            .list_of(),
        ParamSpec{"huge", "thp", "thp",
                  "mmap: where 2MB pages come from: thp (MADV_HUGEPAGE) or hugetlb (MAP_HUGETLB, needs free "
                  "pre-allocated huge pages)"}
            .choice({"thp", "hugetlb"}),
    };
  }

  std::vector<ResultClass> result_classes(const Params& params) const override {
    const MemParams p = parse_mem_params(params);
    std::vector<ResultClass> out;
    if (wants(p, "memset")) out.push_back({memset_label(p), "bytes/sec", Better::Higher});
    if (wants(p, "mmap")) {
      for (const auto page : p.pages) {
        if (!page_size_unavailable(p, page).empty()) continue;
        for (const auto& fault : p.faults) out.push_back({mmap_label(p, page, fault), "bytes/sec", Better::Higher});
      }
    }
    return out;
  }

  void prepare(const Params& params, const Placement& where) override {
    const MemParams p = parse_mem_params(params);
    placement_ = where.cpu >= 0 ? "cpu" + std::to_string(timing::pin_to_cpu(where.cpu).front()) : "not pinned";
    std::string unavailable;
    if (wants(p, "mmap")) {
      for (const auto page : p.pages) {
        const std::string why = page_size_unavailable(p, page);
        if (!why.empty()) unavailable += (unavailable.empty() ? "" : "; ") + size_label(page) + ": " + why;
      }
    }
    unavailable_ = unavailable;
    if (result_classes(params).empty()) {
      throw SkipBenchmark("no requested page size can be measured here: " + unavailable);
    }
    if (wants(p, "memset")) {
      buffer_size_ = p.memset_size;
      void* buf = mmap(nullptr, buffer_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (buf == MAP_FAILED) {
        buffer_size_ = 0;
        throw RunError("perf/mem: mmap of the " + size_label(p.memset_size) + " memset buffer failed: " +
                       std::strerror(errno));
      }
      buffer_ = static_cast<char*>(buf);
      // Fault every page in, as perf does, so the timed passes measure stores only.
      g_memset(buffer_, -1, buffer_size_);
    }
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement& /*where*/) override {
    const MemParams p = parse_mem_params(params);
    std::vector<Measurement> out;
    if (wants(p, "memset")) {
      if (!buffer_) throw RunError("perf/mem: run_repeat() before prepare()");
      const double start = timing::monotonic_seconds();
      for (std::int64_t loop = 0; loop < p.memset_loops; ++loop) {
        for (std::uint64_t off = 0; off < p.memset_size; off += p.memset_chunk) {
          g_memset(buffer_ + off, static_cast<int>(loop), std::min(p.memset_chunk, p.memset_size - off));
        }
      }
      const double seconds = timing::monotonic_seconds() - start;
      out.push_back({{memset_label(p), "bytes/sec", Better::Higher},
                     static_cast<double>(p.memset_size) * static_cast<double>(p.memset_loops) / seconds});
    }
    if (wants(p, "mmap")) {
      for (const auto page : p.pages) {
        if (!page_size_unavailable(p, page).empty()) continue;
        for (const auto& fault : p.faults) {
          double seconds = 0;
          for (std::int64_t loop = 0; loop < p.mmap_loops; ++loop) {
            seconds += map_and_touch(p, page, fault == "populate");
          }
          out.push_back({{mmap_label(p, page, fault), "bytes/sec", Better::Higher},
                         static_cast<double>(p.mmap_size) * static_cast<double>(p.mmap_loops) / seconds});
        }
      }
    }
    return out;
  }

  void finish() override {
    if (buffer_) munmap(buffer_, buffer_size_);
    buffer_ = nullptr;
    buffer_size_ = 0;
  }

  std::map<std::string, std::string> notes() const override {
    std::map<std::string, std::string> n{{"placement", placement_.empty() ? "not pinned" : placement_}};
    const std::string mode = thp_mode();
    n["thp"] = "transparent_hugepage/enabled = " + (mode.empty() ? std::string("absent") : mode) +
               "; 2MB pages with huge=thp come from MADV_HUGEPAGE on a 2MB-aligned mapping, populate "
               "= MADV_POPULATE_WRITE after it";
    if (!unavailable_.empty()) n["page sizes not measured"] = unavailable_;
    if (thp_fraction_ >= 0) {
      char text[64];
      std::snprintf(text, sizeof text, "%.1f%%", thp_fraction_ * 100.0);
      n["2MB demand mapping backed by THP"] = text;
    }
    return n;
  }

  ~Mem() override { finish(); }

 private:
  // One perf "loop": map, fault every page in, measured; unmap, not measured.
  double map_and_touch(const MemParams& p, std::uint64_t page, bool populate) {
    const bool thp = page != 4 * kKiB && p.huge == HugeSource::Thp;
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
    if (page != 4 * kKiB && !thp) {
      flags |= MAP_HUGETLB | ((page == kGiB ? 30 : 21) << MAP_HUGE_SHIFT);
    }
    if (populate && !thp) flags |= MAP_POPULATE;

    const double start = timing::monotonic_seconds();
    std::uint64_t mapped = p.mmap_size;
    char* region = static_cast<char*>(mmap(nullptr, mapped, PROT_READ | PROT_WRITE, flags, -1, 0));
    if (region == MAP_FAILED) {
      throw RunError("perf/mem: mmap of " + size_label(p.mmap_size) + " with " + size_label(page) +
                     " pages failed: " + std::strerror(errno));
    }
    char* base = region;
    if (thp && reinterpret_cast<std::uintptr_t>(region) % page != 0) {
      // The kernel did not align the mapping for THP: map one page more and
      // trim, so that every 2MB of the range can be a PMD mapping.
      munmap(region, mapped);
      mapped = p.mmap_size + page;
      region = static_cast<char*>(mmap(nullptr, mapped, PROT_READ | PROT_WRITE, flags, -1, 0));
      if (region == MAP_FAILED) {
        throw RunError("perf/mem: mmap of " + size_label(mapped) + " failed: " + std::strerror(errno));
      }
      const auto addr = reinterpret_cast<std::uintptr_t>(region);
      base = reinterpret_cast<char*>((addr + page - 1) / page * page);
    }
    if (thp) {
      if (madvise(base, p.mmap_size, MADV_HUGEPAGE) != 0) {
        const int err = errno;
        munmap(region, mapped);
        throw RunError(std::string("perf/mem: madvise(MADV_HUGEPAGE) failed: ") + std::strerror(err));
      }
      if (populate && madvise(base, p.mmap_size, MADV_POPULATE_WRITE) != 0) {
        const int err = errno;
        munmap(region, mapped);
        throw RunError(std::string("perf/mem: madvise(MADV_POPULATE_WRITE) failed: ") + std::strerror(err));
      }
    }
    // One write per page, as perf's mmap_page_touch does.
    volatile char* bytes = base;
    for (std::uint64_t off = 0; off < p.mmap_size; off += page) bytes[off] = static_cast<char>(bytes[off] + 1);
    const double seconds = timing::monotonic_seconds() - start;

    if (thp && !populate && thp_fraction_ < 0) thp_fraction_ = anon_huge_fraction(base, p.mmap_size);
    munmap(region, mapped);
    return seconds;
  }

  char* buffer_ = nullptr;
  std::uint64_t buffer_size_ = 0;
  std::string placement_;
  std::string unavailable_;
  double thp_fraction_ = -1;
};

KBENCH_REGISTER("perf/mem", [] { return std::make_unique<Mem>(); });

}  // namespace
}  // namespace kbench::bench
