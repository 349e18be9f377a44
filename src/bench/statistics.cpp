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

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  const size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  if (samples.size() % 2 == 1) return samples[mid];
  const double upper = samples[mid];
  return (*std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

bool beats_by_margin(const std::vector<double>& pick, const std::vector<double>& baseline, double margin) {
  if (pick.empty() || baseline.empty()) return false;
  return median(pick) < median(baseline) * (1.0 - margin);
}

}  // namespace boo::bench
