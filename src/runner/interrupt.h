#pragma once
// SIGINT / SIGTERM during a run: the agent in flight is told to stop (it
// kills its benchmark's tasks; its process group is killed after a grace
// period), the run stops after the step, settings are restored, and
// kbench exits with 128 + the signal.
#include <sys/types.h>

namespace kbench::runner {

void install_interrupt_handlers();
bool interrupted();
int interrupt_signal();  // 0 when not interrupted
// The agent (leader of its process group) to stop on a signal; -1 when none runs.
void track_agent(pid_t process_group);

}  // namespace kbench::runner
