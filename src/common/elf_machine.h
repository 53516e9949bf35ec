#pragma once
// Which CPU an executable is built for: the controller picks the agent that
// matches a SUT, and the agent the kbench-exec-helper that matches itself.
#include <string>

namespace kbench {

// The CPU an ELF executable is built for ("x86_64", "aarch64", ...); "" when
// `path` is no ELF file.
std::string elf_machine(const std::string& path);

// The machine this program was compiled for, spelled as elf_machine() does.
#if defined(__x86_64__)
inline constexpr const char* kBuiltForMachine = "x86_64";
#elif defined(__aarch64__)
inline constexpr const char* kBuiltForMachine = "aarch64";
#else
#error "kbench is built for x86-64 and arm64 only"
#endif

}  // namespace kbench
