#include "timing/histogram.h"

#include <algorithm>
#include <cmath>

namespace kbench::timing {

Histogram::Histogram() : counts_(kBuckets, 0) {}

void Histogram::merge(const Histogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
}

double Histogram::mean() const {
  return count_ ? double(sum_) / double(count_) : 0.0;
}

std::uint64_t Histogram::bucket_lowest(std::size_t index) {
  if (index < kExactLimit) return index;
  const std::size_t offset = index - kExactLimit;
  const int magnitude = kSubBucketBits + int(offset / kHalf);
  const std::uint64_t sub = kHalf + offset % kHalf;
  return sub << (magnitude - (kSubBucketBits - 1));
}

std::uint64_t Histogram::bucket_width(std::size_t index) {
  if (index < kExactLimit) return 1;
  const int magnitude = kSubBucketBits + int((index - kExactLimit) / kHalf);
  return 1ull << (magnitude - (kSubBucketBits - 1));
}

double Histogram::percentile(double p) const {
  if (count_ == 0) return 0.0;
  p = std::clamp(p, 0.0, 100.0);
  const std::uint64_t rank =
      std::max<std::uint64_t>(1, std::uint64_t(std::ceil(p / 100.0 * double(count_))));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const double lowest = double(bucket_lowest(i));
      const double midpoint = lowest + double(bucket_width(i) - 1) / 2.0;
      return std::clamp(midpoint, double(min()), double(max_));
    }
  }
  return double(max_);
}

double Histogram::interpolated_median(double step) const {
  if (count_ == 0) return 0.0;
  if (!(step > 0)) step = 1;
  struct Mass {
    double value;
    double count;
  };
  std::vector<Mass> masses;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    if (counts_[i] == 0) continue;
    const double value = i < kExactLimit ? double(i) : double(bucket_lowest(i)) + double(bucket_width(i) - 1) / 2.0;
    masses.push_back({value, double(counts_[i])});
  }
  // F(x) = sum of count * clamp((x - value) / step, 0, 1) rises from 0 at the
  // smallest value to count at the largest value + step; find F(x) = count/2.
  const double half = double(count_) / 2;
  auto mass_below = [&](double x) {
    double total = 0;
    for (const Mass& m : masses) total += m.count * std::clamp((x - m.value) / step, 0.0, 1.0);
    return total;
  };
  double low = masses.front().value, high = masses.back().value + step;
  for (int i = 0; i < 100 && high - low > 1e-9 * std::max(1.0, high); ++i) {
    const double mid = (low + high) / 2;
    (mass_below(mid) < half ? low : high) = mid;
  }
  return (low + high) / 2 - step / 2;
}

}  // namespace kbench::timing
