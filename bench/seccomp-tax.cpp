// seccomp-tax N COMMAND...: runs COMMAND under seccomp filters that allow
// every system call after N BPF instructions in all (stacked filters of at
// most 4000 each: one filter holds at most BPF_MAXINSNS = 4096). It is a real, adjustable
// slowdown of the kernel's syscall entry path, inherited by every child, so
// bench/aa-and-slowdown can show that kbench marks a known regression and
// leaves an A/A comparison unmarked.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: seccomp-tax INSTRUCTIONS COMMAND [ARGS...]\n");
    return 2;
  }
  char* end = nullptr;
  const long padding = std::strtol(argv[1], &end, 10);
  // The kernel caps the instructions of all filters on a task at 32768
  // (MAX_INSNS_PER_PATH), counting 4 more per filter.
  if (*end != '\0' || padding < 0 || padding > 30000) {
    std::fprintf(stderr, "seccomp-tax: INSTRUCTIONS '%s': expected 0..30000\n", argv[1]);
    return 2;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    std::fprintf(stderr, "seccomp-tax: cannot set no_new_privs: %s\n", std::strerror(errno));
    return 1;
  }
  long left = padding;
  do {
    const long here = left > 4000 ? 4000 : left;
    left -= here;
    std::vector<sock_filter> program;
    // Loads of the first argument: work the filter must do on every call.
    // Loading only the syscall number let the kernel's seccomp action cache
    // (Linux 5.11+) prove the result constant per number and skip the filter
    // for every valid syscall; an argument load cannot be cached.
    for (long i = 0; i < here; ++i) {
      program.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args)));
    }
    program.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    sock_fprog filter{static_cast<unsigned short>(program.size()), program.data()};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) {
      std::fprintf(stderr, "seccomp-tax: cannot install the filter: %s\n", std::strerror(errno));
      return 1;
    }
  } while (left > 0);
  execvp(argv[2], argv + 2);
  std::fprintf(stderr, "seccomp-tax: cannot run %s: %s\n", argv[2], std::strerror(errno));
  return 127;
}
