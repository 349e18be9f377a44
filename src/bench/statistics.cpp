// boo: summary statistics.
#include "bench/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace boo::bench {

SampleStats summarize(const std::vector<double>& samples) {
  SampleStats s;
  s.count = static_cast<int64_t>(samples.size());
  if (samples.empty()) return s;
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  if (samples.size() > 1) {
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(samples.size() - 1));
  }
  return s;
}

}  // namespace boo::bench
