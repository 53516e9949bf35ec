#include "timing/affinity.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/errors.h"

namespace kbench::timing {

namespace {
std::string join(const std::vector<int>& cpus) {
  std::string out;
  for (int cpu : cpus) out += (out.empty() ? "" : ",") + std::to_string(cpu);
  return out;
}
}  // namespace

std::vector<int> current_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    throw RunError(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::vector<int> pin_to_cpu(int cpu) {
  const std::vector<int> allowed = current_affinity();
  if (cpu < 0 || cpu >= CPU_SETSIZE || std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
    throw InputError("--cpu " + std::to_string(cpu) + ": expected one of the CPUs this process may use (" +
                     join(allowed) + ")");
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw RunError("sched_setaffinity to CPU " + std::to_string(cpu) + ": " + std::strerror(errno));
  }
  return current_affinity();
}

}  // namespace kbench::timing
