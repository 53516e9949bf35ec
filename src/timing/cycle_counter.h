#pragma once
// The only architecture-specific code of kbench's timing: reading the CPU's
// cycle counter so that the read is ordered with the code it brackets.
//
// begin()/end() bracket a short piece of code. Their fences keep the measured
// instructions from leaking out of the window, and the window's own cost is
// measured (timer_overhead) and subtracted by the caller.
#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace kbench::timing::counter {

#if defined(__x86_64__)

inline constexpr const char* kName = "tsc";

// lfence first: earlier instructions have completed before the TSC is read.
inline std::uint64_t begin() {
  std::uint32_t lo, hi;
  asm volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
  return (std::uint64_t(hi) << 32) | lo;
}

// How end() reads the TSC. Not every x86-64 CPU has rdtscp (QEMU's qemu64
// model, some older or virtual CPUs), and executing it there is SIGILL.
// lfence before rdtsc waits for earlier instructions as rdtscp does, on
// Intel and on AMD (where Linux makes lfence dispatch-serialising).
enum class EndRead { kRdtscp, kLfenceRdtsc };

// CPUID leaf 0x80000001, EDX bit 27: the CPU has rdtscp.
inline constexpr std::uint32_t kRdtscpFeatureBit = std::uint32_t(1) << 27;

constexpr EndRead end_read_for(std::uint32_t extended_features_edx) {
  return (extended_features_edx & kRdtscpFeatureBit) != 0 ? EndRead::kRdtscp : EndRead::kLfenceRdtsc;
}

// The instructions, as the fingerprint and the benchmarks' notes report them.
inline constexpr const char* kBeginSequence = "lfence; rdtsc";
constexpr const char* end_sequence_of(EndRead read) {
  return read == EndRead::kRdtscp ? "rdtscp; lfence" : "lfence; rdtsc; lfence";
}

// EDX of CPUID leaf 0x80000001, 0 when the CPU has no such leaf.
inline std::uint32_t extended_features_edx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) == 0) return 0;
  return edx;
}

// Decided once per process, before main: a plain load in end(), nothing that
// costs inside the measured window beyond a predictable branch. Read before
// its initialisation (from another static initialiser) it is false, the
// sequence every x86-64 CPU can execute.
inline const bool kEndUsesRdtscp = end_read_for(extended_features_edx()) == EndRead::kRdtscp;

inline const char* end_sequence() {
  return end_sequence_of(kEndUsesRdtscp ? EndRead::kRdtscp : EndRead::kLfenceRdtsc);
}

// rdtscp, or lfence; rdtsc, waits for earlier instructions; the lfence after
// keeps later ones from starting before the read.
inline std::uint64_t end() {
  std::uint32_t lo, hi;
  if (kEndUsesRdtscp) {
    std::uint32_t aux;
    asm volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
  } else {
    asm volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
  }
  return (std::uint64_t(hi) << 32) | lo;
}

// The TSC rate is not architecturally readable from user space: calibrate.
inline std::uint64_t nominal_hz() { return 0; }

#elif defined(__aarch64__)

inline constexpr const char* kName = "cntvct_el0";
inline constexpr const char* kBeginSequence = "isb; mrs cntvct_el0";
inline const char* end_sequence() { return "isb; mrs cntvct_el0; isb"; }

// isb: the counter is read after all earlier instructions, not speculatively early.
inline std::uint64_t begin() {
  std::uint64_t value;
  asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(value)::"memory");
  return value;
}

inline std::uint64_t end() {
  std::uint64_t value;
  asm volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(value)::"memory");
  return value;
}

// The generic timer's frequency as firmware programmed it.
inline std::uint64_t nominal_hz() {
  std::uint64_t hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
  return hz;
}

#else
#error "kbench timing: cycle counter implemented for x86-64 and arm64 only"
#endif

}  // namespace kbench::timing::counter
