#pragma once
// SIGINT / SIGTERM during a run: the agent in flight is killed with its whole
// process group, the run stops after the step, settings are restored, and
// kbench exits with 128 + the signal.
#include <sys/types.h>

namespace kbench::runner {

void install_interrupt_handlers();
bool interrupted();
int interrupt_signal();  // 0 when not interrupted
// The process group to kill on a signal; -1 when no agent runs.
void track_agent(pid_t process_group);

}  // namespace kbench::runner
