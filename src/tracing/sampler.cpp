#include "tracing/sampler.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/cpu_list.h"

namespace kbench::tracing {
namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<int> read_int(const std::string& path) {
  const auto text = read_text(path);
  if (!text) return std::nullopt;
  int value = 0;
  const char* begin = text->data();
  const auto [end, error] = std::from_chars(begin, begin + text->size(), value);
  if (error != std::errc() || end == begin) return std::nullopt;
  return value;
}

// The next whitespace-separated word of `line`, consumed.
std::string_view next_word(std::string_view& line) {
  const auto begin = line.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(begin);
  const auto end = std::min(line.find_first_of(" \t\r"), line.size());
  const auto word = line.substr(0, end);
  line.remove_prefix(end);
  return word;
}

bool is_code(std::string_view type) { return type == "t" || type == "T" || type == "w" || type == "W"; }

std::vector<int> online_cpus() {
  if (const auto text = read_text("/sys/devices/system/cpu/online")) {
    auto list = std::string_view(*text);
    while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) list.remove_suffix(1);
    try {
      return parse_cpu_list(list, "/sys/devices/system/cpu/online");
    } catch (const std::exception&) {
    }
  }
  std::vector<int> cpus;
  for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_CONF); ++cpu) cpus.push_back(int(cpu));
  return cpus;
}

// Copies `length` bytes at ring offset `offset` (counted from the start,
// wrapping at `size`, a power of two).
void copy_from_ring(const char* data, std::size_t size, std::uint64_t offset, void* out, std::size_t length) {
  const std::size_t start = offset & (size - 1);
  const std::size_t first = std::min(length, size - start);
  std::memcpy(out, data + start, first);
  if (first < length) std::memcpy(static_cast<char*>(out) + first, data, length - first);
}

}  // namespace

KernelSymbols KernelSymbols::parse(std::string_view kallsyms) {
  KernelSymbols table;
  bool any_nonzero = false;
  while (!kallsyms.empty()) {
    const auto end = kallsyms.find('\n');
    auto line = kallsyms.substr(0, end);
    kallsyms.remove_prefix(end == std::string_view::npos ? kallsyms.size() : end + 1);
    const auto address_text = next_word(line);
    const auto type = next_word(line);
    const auto name = next_word(line);
    auto module = next_word(line);
    if (address_text.empty() || name.empty() || !is_code(type)) continue;
    std::uint64_t address = 0;
    const auto [stop, error] =
        std::from_chars(address_text.data(), address_text.data() + address_text.size(), address, 16);
    if (error != std::errc() || stop != address_text.data() + address_text.size()) continue;
    if (module.size() >= 2 && module.front() == '[' && module.back() == ']') {
      module = module.substr(1, module.size() - 2);
    } else {
      module = {};
    }
    any_nonzero = any_nonzero || address != 0;
    table.symbols_.push_back(Symbol{address, std::string(name), std::string(module)});
  }
  table.addresses_hidden_ = !table.symbols_.empty() && !any_nonzero;
  std::stable_sort(table.symbols_.begin(), table.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  const auto last = std::unique(table.symbols_.begin(), table.symbols_.end(),
                                [](const Symbol& a, const Symbol& b) { return a.address == b.address; });
  table.symbols_.erase(last, table.symbols_.end());
  return table;
}

KernelSymbols KernelSymbols::load() {
  const char* override_path = std::getenv("KBENCH_KALLSYMS");
  const std::string path = override_path && *override_path ? override_path : "/proc/kallsyms";
  const auto text = read_text(path);
  if (!text) throw ProfileUnavailable("cannot read " + path + ": " + std::strerror(errno));
  auto table = parse(*text);
  if (table.addresses_hidden()) {
    const auto restrict = read_int("/proc/sys/kernel/kptr_restrict");
    throw ProfileUnavailable(path + " shows every address as zero (kernel.kptr_restrict is " +
                             (restrict ? std::to_string(*restrict) : std::string("unknown")) +
                             "): kernel functions cannot be named; run as root with kptr_restrict 0 or 1");
  }
  if (table.size() == 0) throw ProfileUnavailable(path + " lists no kernel functions");
  return table;
}

const KernelSymbols::Symbol* KernelSymbols::lookup(std::uint64_t address) const {
  const auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                      [](std::uint64_t value, const Symbol& s) { return value < s.address; });
  if (after == symbols_.begin() || after == symbols_.end()) return nullptr;
  // The markers that end the kernel's text are not functions: an address
  // past them and below the next symbol is code kallsyms does not name (a
  // JIT-compiled BPF program, e.g. a seccomp filter's), not the marker's.
  const Symbol& symbol = *std::prev(after);
  if (symbol.name == "_etext" || symbol.name == "_einittext") return nullptr;
  return &symbol;
}

std::string KernelSymbols::display_name(const Symbol& symbol) {
  return symbol.module.empty() ? symbol.name : symbol.name + " [" + symbol.module + "]";
}

void KernelProfile::add(const KernelProfile& other) {
  for (const auto& [function, count] : other.functions) functions[function] += count;
  samples += other.samples;
  lost += other.lost;
  unresolved += other.unresolved;
  if (period_ns == 0) period_ns = other.period_ns;
}

std::string perf_open_refusal(int error, std::optional<int> paranoid) {
  const std::string call = std::string("perf_event_open refused (") + std::strerror(error) + ")";
  if (!paranoid || error == ENOSYS) return "this kernel has no perf events (CONFIG_PERF_EVENTS off)";
  switch (error) {
    case EACCES:
    case EPERM:
      return call + ": kernel.perf_event_paranoid is " + std::to_string(*paranoid) +
             "; kernel samples need it at 1 or below, or root (CAP_PERFMON); a seccomp filter can refuse it too";
    case ENOENT:
    case EOPNOTSUPP:
      return call + ": the kernel does not offer the software cpu-clock event";
    case ENODEV:
      return call + ": a CPU went offline while the events were opened";
    case EMFILE:
      return call + ": too many open files";
    default:
      return call;
  }
}

struct KernelSampler::Buffer {
  int fd = -1;
  void* base = nullptr;
  std::size_t mapped = 0;
  std::size_t data_size = 0;
  std::size_t page = 0;

  ~Buffer() {
    if (base) munmap(base, mapped);
    if (fd >= 0) close(fd);
  }
};

KernelSampler::KernelSampler() : KernelSampler(Options{}) {}

KernelSampler::KernelSampler(Options options) : options_(options) {
  if (options_.buffer_pages == 0 || (options_.buffer_pages & (options_.buffer_pages - 1)) != 0) {
    throw std::invalid_argument("KernelSampler: buffer_pages must be a power of two");
  }
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = std::max<std::uint64_t>(options_.period_ns, 10000);
  attr.sample_type = PERF_SAMPLE_IP;
  attr.disabled = 1;
  attr.inherit = options_.inherit ? 1 : 0;
  attr.exclude_user = 1;
  attr.exclude_hv = 1;
  const long page = sysconf(_SC_PAGESIZE);
  for (const int cpu : online_cpus()) {
    auto buffer = std::make_unique<Buffer>();
    buffer->fd = int(syscall(SYS_perf_event_open, &attr, options_.pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (buffer->fd < 0) {
      const int error = errno;
      throw ProfileUnavailable(perf_open_refusal(error, read_int("/proc/sys/kernel/perf_event_paranoid")));
    }
    buffer->page = std::size_t(page);
    buffer->data_size = options_.buffer_pages * buffer->page;
    buffer->mapped = buffer->data_size + buffer->page;
    void* base = mmap(nullptr, buffer->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, buffer->fd, 0);
    if (base == MAP_FAILED) {
      throw ProfileUnavailable("cannot map the sample buffer of CPU " + std::to_string(cpu) + " (" +
                               std::to_string(buffer->mapped / 1024) + " KiB): " + std::strerror(errno) +
                               "; kernel.perf_event_mlock_kb limits it for unprivileged users");
    }
    buffer->base = base;
    buffers_.push_back(std::move(buffer));
  }
}

KernelSampler::~KernelSampler() = default;

void KernelSampler::start() {
  for (auto& buffer : buffers_) ioctl(buffer->fd, PERF_EVENT_IOC_ENABLE, 0);
}

void KernelSampler::stop() {
  for (auto& buffer : buffers_) ioctl(buffer->fd, PERF_EVENT_IOC_DISABLE, 0);
}

void KernelSampler::drain() {
  for (auto& buffer : buffers_) drain_one(*buffer);
}

void KernelSampler::drain_one(Buffer& buffer) {
  auto* meta = static_cast<perf_event_mmap_page*>(buffer.base);
  const char* data = static_cast<const char*>(buffer.base) + buffer.page;
  const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  std::uint64_t tail = meta->data_tail;
  while (tail < head) {
    perf_event_header header{};
    copy_from_ring(data, buffer.data_size, tail, &header, sizeof header);
    if (header.size < sizeof header) break;  // never written by a sane kernel; stop rather than spin
    if (header.type == PERF_RECORD_SAMPLE && header.size >= sizeof header + sizeof(std::uint64_t)) {
      std::uint64_t ip = 0;
      copy_from_ring(data, buffer.data_size, tail + sizeof header, &ip, sizeof ip);
      ++by_ip_[ip];
    } else if (header.type == PERF_RECORD_LOST && header.size >= sizeof header + 2 * sizeof(std::uint64_t)) {
      std::uint64_t lost = 0;  // after the event id
      copy_from_ring(data, buffer.data_size, tail + sizeof header + sizeof(std::uint64_t), &lost, sizeof lost);
      lost_ += lost;
    }
    tail += header.size;
  }
  __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
}

KernelProfile KernelSampler::profile(const KernelSymbols& symbols) {
  KernelProfile profile;
  profile.period_ns = std::max<std::uint64_t>(options_.period_ns, 10000);
  profile.lost = lost_;
  for (const auto& [ip, count] : by_ip_) {
    profile.samples += count;
    if (const auto* symbol = symbols.lookup(ip)) {
      profile.functions[KernelSymbols::display_name(*symbol)] += count;
    } else {
      profile.unresolved += count;
    }
  }
  return profile;
}

}  // namespace kbench::tracing
