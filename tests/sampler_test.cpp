// The kernel sampler: kallsyms parsing and lookup on fixture texts, the
// reasons given when perf_event_open is refused, and the real mechanism on
// this host (a loop of getppid() comes out in the syscall path).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracing/sampler.h"

namespace {

using namespace kbench::tracing;

// As /proc/kallsyms writes it (not sorted: modules are listed after the
// image but can lie at any address), with data, absolute and weak symbols.
constexpr const char* kKallsyms =
    "0000000000000000 A fixed_percpu_data\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81001000 t do_one_initcall\n"
    "ffffffff81002000 T __x64_sys_getppid\n"
    "ffffffff81002100 W arch_weak_hook\n"
    "ffffffff81003000 D some_data\n"
    "ffffffff81004000 T entry_SYSCALL_64\n"
    "ffffffffc0a02000 t mod_helper\t[kvm]\n"
    "ffffffffc0a01000 T kvm_vcpu_ioctl\t[kvm]\n"
    "not an address line\n"
    "ffffffff81005000 r rodata_thing\n";

TEST(KernelSymbols, KeepsCodeSymbolsSorted) {
  const auto symbols = KernelSymbols::parse(kKallsyms);
  EXPECT_FALSE(symbols.addresses_hidden());
  // _stext, do_one_initcall, __x64_sys_getppid, arch_weak_hook,
  // entry_SYSCALL_64, two module functions (_text shares _stext's address).
  EXPECT_EQ(symbols.size(), 7u);
}

TEST(KernelSymbols, LookupFindsTheSymbolAtOrBelow) {
  const auto symbols = KernelSymbols::parse(kKallsyms);
  const auto name_at = [&](std::uint64_t address) {
    const auto* symbol = symbols.lookup(address);
    return symbol ? KernelSymbols::display_name(*symbol) : std::string("(none)");
  };
  EXPECT_EQ(name_at(0xffffffff81000000), "_stext");  // first listed of two at one address
  EXPECT_EQ(name_at(0xffffffff81002000), "__x64_sys_getppid");
  EXPECT_EQ(name_at(0xffffffff810020ff), "__x64_sys_getppid");
  EXPECT_EQ(name_at(0xffffffff81002100), "arch_weak_hook");
  // Data symbols do not split code: an address past some_data is still in
  // the function before it.
  EXPECT_EQ(name_at(0xffffffff81003010), "arch_weak_hook");
  EXPECT_EQ(name_at(0xffffffff81004abc), "entry_SYSCALL_64");
  EXPECT_EQ(name_at(0xffffffffc0a01010), "kvm_vcpu_ioctl [kvm]");
  EXPECT_EQ(name_at(0xffffffffc0a01fff), "kvm_vcpu_ioctl [kvm]");
  EXPECT_EQ(name_at(0xffffffff80ffffff), "(none)");  // below the first symbol
  EXPECT_EQ(name_at(0), "(none)");
  // At the last symbol, and beyond it: its end is not known.
  EXPECT_EQ(name_at(0xffffffffc0a02000), "(none)");
  EXPECT_EQ(name_at(0xffffffffffff0000), "(none)");
}

// A seccomp filter's JIT-compiled program lies past the kernel's text and
// below the first module: kallsyms does not name it (unless
// net.core.bpf_jit_kallsyms is 1), and the marker before it is no function.
TEST(KernelSymbols, PastTheEndOfKernelTextIsUnresolved) {
  const auto symbols = KernelSymbols::parse(
      "ffffffff81000000 T _stext\nffffffff81001000 T __x64_sys_getppid\nffffffff82000000 T _etext\n"
      "ffffffff83000000 T _sinittext\nffffffff83100000 T _einittext\nffffffffc0000000 t a_fn\t[ext4]\n"
      "ffffffffc0000100 t b_fn\t[ext4]\n");
  EXPECT_EQ(symbols.lookup(0xffffffff82000010), nullptr);
  EXPECT_EQ(symbols.lookup(0xffffffffa0001234), nullptr);
  ASSERT_NE(symbols.lookup(0xffffffff81001010), nullptr);
  EXPECT_EQ(symbols.lookup(0xffffffff81001010)->name, "__x64_sys_getppid");
  ASSERT_NE(symbols.lookup(0xffffffff83000010), nullptr);
  EXPECT_EQ(symbols.lookup(0xffffffff83000010)->name, "_sinittext");
}

TEST(KernelSymbols, ModuleColumnIsKept) {
  const auto symbols = KernelSymbols::parse("ffffffffc0000000 t a_fn\t[ext4]\nffffffffc0000100 t b_fn\t[ext4]\n");
  const auto* symbol = symbols.lookup(0xffffffffc0000010);
  ASSERT_NE(symbol, nullptr);
  EXPECT_EQ(symbol->name, "a_fn");
  EXPECT_EQ(symbol->module, "ext4");
}

TEST(KernelSymbols, ZeroAddressesMeanHidden) {
  const auto symbols = KernelSymbols::parse(
      "0000000000000000 T _stext\n0000000000000000 t do_one_initcall\n0000000000000000 T __x64_sys_getppid\n");
  EXPECT_TRUE(symbols.addresses_hidden());
  EXPECT_FALSE(KernelSymbols::parse(kKallsyms).addresses_hidden());
  EXPECT_FALSE(KernelSymbols::parse("").addresses_hidden());
}

TEST(KernelProfile, AddSumsCounts) {
  KernelProfile a;
  a.functions = {{"f", 2}, {"g", 1}};
  a.samples = 4;
  a.unresolved = 1;
  a.period_ns = 1000;
  KernelProfile b;
  b.functions = {{"g", 5}};
  b.samples = 5;
  b.lost = 3;
  b.period_ns = 1000;
  a.add(b);
  EXPECT_EQ(a.functions["f"], 2u);
  EXPECT_EQ(a.functions["g"], 6u);
  EXPECT_EQ(a.samples, 9u);
  EXPECT_EQ(a.lost, 3u);
  EXPECT_EQ(a.unresolved, 1u);
}

TEST(PerfOpenRefusal, NamesTheCause) {
  const auto paranoid = perf_open_refusal(EACCES, 3);
  EXPECT_NE(paranoid.find("perf_event_paranoid is 3"), std::string::npos) << paranoid;
  EXPECT_NE(perf_open_refusal(ENOENT, 2).find("cpu-clock"), std::string::npos);
  EXPECT_NE(perf_open_refusal(ENOSYS, 2).find("no perf events"), std::string::npos);
  // No perf_event_paranoid sysctl: the kernel was built without perf events.
  EXPECT_NE(perf_open_refusal(EINVAL, std::nullopt).find("no perf events"), std::string::npos);
}

std::optional<int> read_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + double(now.tv_nsec) * 1e-9;
}

// getppid's own functions: its entry (entry_SYSCALL_64, do_syscall_64,
// x64_sys_call), __do_sys_getppid and what it calls (__task_pid_nr_ns).
// Not the irq-enable points: in a paravirtualised guest (PVM here) the timer
// interrupt of a tick that fell while interrupts were off is taken where
// they are enabled again, and most samples land there.
bool in_getppid_path(const std::string& name) {
  for (const char* part : {"getppid", "task_pid_nr_ns", "do_syscall", "x64_sys_call", "entry_SYSCALL"}) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::pair<std::string, std::uint64_t>> top(const KernelProfile& profile, std::size_t count) {
  std::vector<std::pair<std::string, std::uint64_t>> ranked(profile.functions.begin(), profile.functions.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (ranked.size() > count) ranked.resize(count);
  return ranked;
}

// Runs getppid() in a loop for `cpu_seconds` of this thread's CPU time (so
// that a busy machine only makes the test take longer, never fewer samples).
void getppid_loop(double cpu_seconds) {
  const double until = thread_cpu_seconds() + cpu_seconds;
  while (thread_cpu_seconds() < until) {
    for (int i = 0; i < 1000; ++i) syscall(SYS_getppid);
  }
}

// The sampler (every 100 us) and the symbols of this host, or the reason
// they cannot be had here.
struct HostProfiling {
  std::optional<KernelSymbols> symbols;
  std::optional<KernelSampler> sampler;
  std::string unavailable;
  HostProfiling() {
    try {
      symbols.emplace(KernelSymbols::load());
      sampler.emplace(KernelSampler::Options{.pid = 0, .inherit = true, .period_ns = 100000});
    } catch (const ProfileUnavailable& refused) {
      unavailable = refused.what();
    }
  }
  // Stops sampling and resolves what was taken.
  KernelProfile finish() {
    sampler->stop();
    sampler->drain();
    return sampler->profile(*symbols);
  }
};

TEST(KernelSampler, GetppidLoopLandsInTheSyscallPath) {
  HostProfiling host;
  if (!host.sampler) GTEST_SKIP() << "profile unavailable: " << host.unavailable;
  host.sampler->start();
  getppid_loop(0.3);
  const auto profile = host.finish();
  const auto ranked = top(profile, 5);
  std::string shown;
  for (const auto& [name, count] : ranked) shown += "  " + name + " " + std::to_string(count) + "\n";
  std::cout << "samples " << profile.samples << ", lost " << profile.lost << ", unresolved " << profile.unresolved
            << "; top:\n"
            << shown;
  // 0.3 s at 100 us is 3000 ticks, about half of them in the kernel.
  EXPECT_GT(profile.samples, 50u) << shown;
  EXPECT_LT(profile.unresolved * 10, profile.samples) << shown;
  ASSERT_FALSE(ranked.empty());
  // On this 2-CPU PVM guest __task_pid_nr_ns alone has 130-230 samples, the
  // unrelated functions of the top five a handful each.
  const auto in_path = std::find_if(ranked.begin(), ranked.end(),
                                    [](const auto& entry) { return in_getppid_path(entry.first) && entry.second >= 20; });
  EXPECT_NE(in_path, ranked.end()) << "no function of getppid's path among the top five:\n" << shown;
}

TEST(KernelSampler, InheritedByChildren) {
  HostProfiling host;
  if (!host.sampler) GTEST_SKIP() << "profile unavailable: " << host.unavailable;
  host.sampler->start();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    getppid_loop(0.3);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const auto profile = host.finish();
  // The parent only waited: the samples are the child's.
  EXPECT_GT(profile.samples, 50u);
}

// An unprivileged process under perf_event_paranoid 2 is refused kernel
// samples: the sampler says so instead of failing otherwise.
TEST(KernelSampler, RefusalIsReportedWithTheReason) {
  const auto paranoid = read_paranoid();
  if (geteuid() != 0 || !paranoid || *paranoid < 2) {
    GTEST_SKIP() << "needs root (to drop to nobody) and kernel.perf_event_paranoid >= 2";
  }
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    std::string message = "opened";
    if (setgid(65534) != 0 || setuid(65534) != 0) {
      message = "setuid failed";
    } else {
      try {
        KernelSampler sampler;
      } catch (const ProfileUnavailable& unavailable) {
        message = unavailable.what();
      }
    }
    (void)!write(pipe_fds[1], message.data(), message.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string message;
  char chunk[512];
  for (ssize_t n; (n = read(pipe_fds[0], chunk, sizeof chunk)) > 0;) message.append(chunk, std::size_t(n));
  close(pipe_fds[0]);
  waitpid(child, nullptr, 0);
  EXPECT_NE(message.find("perf_event_paranoid is " + std::to_string(*paranoid)), std::string::npos) << message;
}

}  // namespace
