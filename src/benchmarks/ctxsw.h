#pragma once
// The context-switch ping-pong of ctxsw/*, shared with kfunc/*, whose
// workload is the same two tasks on one CPU passing a token back and forth.
namespace kbench::bench {

enum class Transport { Pipe, Futex };
enum class TaskKind { Thread, Process };

struct SwitchCost {
  double ns = 0;     // CLOCK_MONOTONIC, per switch (round trip / 2)
  double ticks = 0;  // cycle-counter ticks per switch
};

// `round_trips` timed round trips (after a few untimed ones) of two tasks
// pinned to `cpu`. Throws RunError when the partner fails.
SwitchCost measure_context_switch(Transport transport, TaskKind kind, long round_trips, int cpu);

}  // namespace kbench::bench
