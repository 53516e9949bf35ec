#include "timing/affinity.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

#include "common/cpu_list.h"
#include "common/errors.h"

namespace kbench::timing {


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
                     format_cpu_list(allowed) + ")");
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw RunError("sched_setaffinity to CPU " + std::to_string(cpu) + ": " + std::strerror(errno));
  }
  return current_affinity();
}

std::vector<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string text;
  if (in && std::getline(in, text)) {
    try {
      return parse_cpu_list(text, "/sys/devices/system/cpu/online");
    } catch (const InputError&) {
      // An unreadable format falls through to the count below.
    }
  }
  std::vector<int> cpus;
  const long count = sysconf(_SC_NPROCESSORS_ONLN);
  for (int cpu = 0; cpu < (count > 0 ? count : 1); ++cpu) cpus.push_back(cpu);
  return cpus;
}

void restrict_to_cpus(const std::vector<int>& cpus, const std::string& what) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw InputError(what + ": the kernel refused this CPU set (" + std::strerror(errno) + ")");
  }
}

}  // namespace kbench::timing
