#include "runner/pairing.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "common/cpu_list.h"
#include "common/errors.h"
#include "runner/interrupt.h"
#include "runner/progress.h"
#include "timing/affinity.h"

namespace kbench::runner {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::milliseconds kPoll{25};

bool touch(const fs::path& path) {
  std::ofstream out(path);
  return static_cast<bool>(out);
}

}  // namespace

std::string pair_point(int round, int slot, int step) { return fmt::format("{:06}.{:02}.{:06}", round, slot, step); }

void mark_gone(const std::string& dir, int position) { touch(fs::path(dir) / fmt::format("gone.{}", position)); }

std::vector<std::vector<int>> cpu_halves() {
  const std::vector<int> cpus = timing::current_affinity();
  if (cpus.size() < 2) {
    throw RunError(fmt::format("design: duet needs at least 2 CPUs to split in halves; this process may run only on "
                               "CPU {}",
                               format_cpu_list(cpus)));
  }
  const auto middle = cpus.begin() + static_cast<long>(cpus.size() / 2);
  return {std::vector<int>(cpus.begin(), middle), std::vector<int>(middle, cpus.end())};
}

void pin_to_cpus(const std::vector<int>& cpus) {
  timing::restrict_to_cpus(cpus, "design: duet: CPUs " + format_cpu_list(cpus));
}

PairBarrier::PairBarrier(Pairing pairing, Progress& progress) : pairing_(std::move(pairing)), progress_(progress) {}

PairBarrier::~PairBarrier() { leave(); }

void PairBarrier::leave() {
  if (left_) return;
  left_ = true;
  mark_gone(pairing_.dir, pairing_.position);
}

bool PairBarrier::partner_at_or_past(const std::string& point) const {
  const std::string suffix = fmt::format(".{}", 1 - pairing_.position);
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(pairing_.dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= suffix.size() || !name.ends_with(suffix) || name.front() < '0' || name.front() > '9') continue;
    if (name.substr(0, name.size() - suffix.size()) >= point) return true;
  }
  return false;
}

void PairBarrier::unpaired(const std::string& why) {
  if (said_unpaired_) return;
  said_unpaired_ = true;
  progress_.message("kbench: paired: " + why + "; going on unpaired");
}

void PairBarrier::meet(const std::string& point, std::chrono::milliseconds limit) {
  if (partner_gone_ || left_) return;
  const fs::path dir(pairing_.dir);
  if (!touch(dir / fmt::format("{}.{}", point, pairing_.position))) {
    partner_gone_ = true;
    unpaired("the pairing directory " + pairing_.dir + " is gone");
    return;
  }
  const fs::path gone = dir / fmt::format("gone.{}", 1 - pairing_.position);
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!interrupted()) {
    if (partner_at_or_past(point)) return;
    std::error_code error;
    if (fs::exists(gone, error)) {
      partner_gone_ = true;
      unpaired("the other worker has ended");
      return;
    }
    if (std::chrono::steady_clock::now() >= until) {
      unpaired(fmt::format("the other worker did not come to the same point within {} s",
                           std::chrono::duration_cast<std::chrono::seconds>(limit).count()));
      return;
    }
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace kbench::runner
