#pragma once
// Where a benchmark's kernel time moved between two swprofiles: the kernel
// profiles (`--kernel-profile`) of its sessions summed per swprofile, and
// each function's share of the samples on both sides.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/result_store.h"

namespace kbench::analysis {

// One swprofile's profiles of a benchmark, summed over its sessions.
struct ProfileSum {
  int sessions = 0;  // sessions with a profile (available or not)
  std::uint64_t samples = 0;
  std::uint64_t lost = 0;
  std::uint64_t unresolved = 0;
  std::uint64_t unlisted = 0;
  std::uint64_t period_ns = 0;  // of the first profile
  std::map<std::string, std::uint64_t> functions;
  // The distinct reasons of sessions whose profile was unavailable.
  std::vector<std::string> unavailable;
};

ProfileSum sum_profiles(const std::vector<store::StoredKernelProfile>& profiles);

struct FunctionShift {
  std::string function;
  std::uint64_t samples_a = 0;
  std::uint64_t samples_b = 0;
  double share_a = 0;  // of all of A's samples, 0..1
  double share_b = 0;
  double change() const { return share_b - share_a; }
};

// Every function sampled on either side, the largest change of share first
// (either direction; equal changes by name).
std::vector<FunctionShift> function_shifts(const ProfileSum& a, const ProfileSum& b);

}  // namespace kbench::analysis
