#include "runner/interrupt.h"

#include <signal.h>

#include <atomic>

namespace kbench::runner {

namespace {

std::atomic<int> g_signal{0};
std::atomic<pid_t> g_agent_group{-1};

extern "C" void on_interrupt(int signal_number) {
  g_signal.store(signal_number);
  // The agent is told to stop and kills every task its benchmark started;
  // run_agent notices the signal and kills the group if the agent lingers.
  const pid_t agent = g_agent_group.load();
  if (agent > 0) kill(agent, SIGTERM);  // async-signal-safe
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
}

bool interrupted() { return g_signal.load() != 0; }
int interrupt_signal() { return g_signal.load(); }
void track_agent(pid_t process_group) { g_agent_group.store(process_group); }

}  // namespace kbench::runner
