#pragma once
// micromm/vmalloc drives the kernel's test_vmalloc module and reads its
// results from the kernel log; the parser is exposed for testing.
#include <string>
#include <vector>

namespace kbench::bench {

// One "Summary: <test> passed: P failed: F [xfailed: X] repeat: R loops: L
// avg: A usec" line printed by lib/test_vmalloc.c per test and worker.
struct VmallocSummary {
  std::string test;
  int passed = 0;
  int failed = 0;
  long loops = 0;
  double avg_usec = 0;
};

// Every Summary line in `log` (raw /dev/kmsg records or dmesg text), in order.
std::vector<VmallocSummary> parse_vmalloc_summaries(const std::string& log);

}  // namespace kbench::bench
