#pragma once
// A latency histogram of bounded size: log-linear buckets (HDR style), exact
// below 256 and within 1/128 (< 0.8%) of the value above, for any uint64_t.
// The sum is kept exactly, so the mean is exact; percentiles come from the
// buckets. About 58 KiB whatever the number of values recorded.
#include <cstdint>
#include <vector>

namespace kbench::timing {

class Histogram {
 public:
  Histogram();

  void record(std::uint64_t value) {
    ++counts_[bucket_index(value)];
    ++count_;
    sum_ += value;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }
  void merge(const Histogram& other);
  void clear();

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double sum() const { return double(sum_); }
  // Exact: sum / count. 0 when empty.
  double mean() const;
  // Nearest-rank percentile, p in [0, 100]: the smallest recorded value v with
  // at least ceil(p/100 * count) values <= v, reported as the midpoint of v's
  // bucket (clamped to [min, max]), so within half a bucket width of v.
  // 0 when empty.
  double percentile(double p) const;
  // The median of a counter that advances `step` ticks at a time, to a
  // fraction of a step: each value v is spread evenly over [v, v + step)
  // (where the true duration lies when the read's phase is random), the
  // spread distribution's median found, and step/2 taken off. On a coarse
  // counter (a 25 MHz cntvct_el0: a syscall is 5 ticks) the plain median is
  // a whole tick, off by up to 20%; this is off by a tenth of a step at most
  // for a constant duration. Values above 256 use their bucket's midpoint.
  // 0 when empty.
  double interpolated_median(double step = 1) const;

  // Bucket geometry, public for tests.
  static std::size_t bucket_index(std::uint64_t value) {
    if (value < kExactLimit) return std::size_t(value);
    const int magnitude = 63 - __builtin_clzll(value);  // >= kSubBucketBits
    const int shift = magnitude - (kSubBucketBits - 1);
    const std::uint64_t sub = value >> shift;  // in [kHalf, 2*kHalf)
    return kExactLimit + std::size_t(magnitude - kSubBucketBits) * kHalf +
           std::size_t(sub - kHalf);
  }
  static std::uint64_t bucket_lowest(std::size_t index);
  static std::uint64_t bucket_width(std::size_t index);

 private:
  static constexpr int kSubBucketBits = 8;
  static constexpr std::uint64_t kExactLimit = 1ull << kSubBucketBits;  // 256
  static constexpr std::uint64_t kHalf = kExactLimit / 2;              // 128
  static constexpr std::size_t kBuckets = kExactLimit + (64 - kSubBucketBits) * kHalf;

  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  unsigned __int128 sum_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
};

}  // namespace kbench::timing
