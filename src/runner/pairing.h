#pragma once
// The two workers of a paired fleet (plan design: crossover, two SUTs; duet,
// two VMs of one SUT) meet before each session's measurement and before each
// of its benchmarks, so that the two sides measure at the same moment. They meet through files in a
// directory the fleet made for them: a worker arriving at a point writes
// KEY.<its position> and waits for KEY.<the other's>. The fleet writes
// gone.<position> when a worker ends, and a worker when its plan ends, so
// that the one left never waits for a partner that will not come.
#include <chrono>
#include <string>
#include <vector>

namespace kbench::runner {

class Progress;

struct Pairing {
  std::string dir;   // made by the fleet, shared by both workers
  int position = 0;  // 0 or 1: which of the two this worker is
  // Shared by both workers: their run id (so both shuffle each round's
  // benchmarks alike) and the prefix of every pair they measure.
  std::string id;
  // What this side's sessions differ in from the other's: a crossover's SUT;
  // empty for a duet, whose unit is each session's CPU half.
  std::string unit;
};

// A meeting point: round, slot within the round, and 0 for the session's
// start or 1 + the benchmark's place in the session. Its text sorts as the
// points are reached, so a partner that skipped a point (a session whose
// boot failed) is seen to be past it.
std::string pair_point(int round, int slot, int step);

// The marker a worker leaves when it will reach no further point.
void mark_gone(const std::string& dir, int position);

// A duet's two halves of the CPUs this process may run on (the first half
// the smaller when their count is odd); throws RunError for fewer than 2.
std::vector<std::vector<int>> cpu_halves();
// Pins this process's thread, and the processes it starts from now on (the
// VM), to `cpus`; throws InputError when the kernel refuses.
void pin_to_cpus(const std::vector<int>& cpus);

class PairBarrier {
 public:
  PairBarrier(Pairing pairing, Progress& progress);
  ~PairBarrier();
  PairBarrier(const PairBarrier&) = delete;
  PairBarrier& operator=(const PairBarrier&) = delete;

  // Waits at `point` until the partner reaches it (or a later one), has
  // gone, `limit` passes, or SIGINT/SIGTERM arrives. Whatever the reason it
  // gives up, the worker goes on unpaired, which the progress says once;
  // after the partner has gone, no point waits.
  void meet(const std::string& point, std::chrono::milliseconds limit);
  // This worker reaches no further point (also at destruction).
  void leave();

 private:
  bool partner_at_or_past(const std::string& point) const;
  void unpaired(const std::string& why);

  Pairing pairing_;
  Progress& progress_;
  bool partner_gone_ = false;
  bool said_unpaired_ = false;
  bool left_ = false;
};

}  // namespace kbench::runner
