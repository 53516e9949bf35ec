#pragma once
// Pinning the calling thread. Reports what the kernel actually applied, since
// cpusets and offline CPUs can make it differ from what was asked.
#include <vector>

namespace kbench::timing {

// CPUs the calling thread may run on, ascending.
std::vector<int> current_affinity();

// Pins the calling thread to `cpu` and returns the affinity now in effect.
// Throws InputError when `cpu` is not one the thread may use (not online, or
// outside its cpuset), RunError when the kernel refuses.
std::vector<int> pin_to_cpu(int cpu);

}  // namespace kbench::timing
