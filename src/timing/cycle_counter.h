#pragma once
// The only architecture-specific code of kbench's timing: reading the CPU's
// cycle counter so that the read is ordered with the code it brackets.
//
// begin()/end() bracket a short piece of code. Their fences keep the measured
// instructions from leaking out of the window, and the window's own cost is
// measured (timer_overhead) and subtracted by the caller.
#include <cstdint>

namespace kbench::timing::counter {

#if defined(__x86_64__)

inline constexpr const char* kName = "tsc";

// lfence first: earlier instructions have completed before the TSC is read.
inline std::uint64_t begin() {
  std::uint32_t lo, hi;
  asm volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
  return (std::uint64_t(hi) << 32) | lo;
}

// rdtscp waits for earlier instructions; lfence keeps later ones from starting
// before the read.
inline std::uint64_t end() {
  std::uint32_t lo, hi, aux;
  asm volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
  return (std::uint64_t(hi) << 32) | lo;
}

// The TSC rate is not architecturally readable from user space: calibrate.
inline std::uint64_t nominal_hz() { return 0; }

#elif defined(__aarch64__)

inline constexpr const char* kName = "cntvct_el0";

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
