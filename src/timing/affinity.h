#pragma once
// Pinning the calling thread. Reports what the kernel actually applied, since
// cpusets and offline CPUs can make it differ from what was asked.
#include <string>
#include <vector>

namespace kbench::timing {

// CPUs the calling thread may run on, ascending.
std::vector<int> current_affinity();

// The online CPUs (/sys/devices/system/cpu/online), ascending; when /sys is
// not readable, 0 .. (online count - 1).
std::vector<int> online_cpus();

// Restricts the calling thread (and the tasks it starts later) to `cpus`.
// Throws InputError naming `what` when the kernel refuses the set.
void restrict_to_cpus(const std::vector<int>& cpus, const std::string& what);

// Pins the calling thread to `cpu` and returns the affinity now in effect.
// Throws InputError when `cpu` is not one the thread may use (not online, or
// outside its cpuset), RunError when the kernel refuses.
std::vector<int> pin_to_cpu(int cpu);

}  // namespace kbench::timing
