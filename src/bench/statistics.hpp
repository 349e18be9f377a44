// boo: summary statistics of timing samples.
#pragma once

#include <cstdint>
#include <vector>

namespace boo::bench {

struct SampleStats {
  double min = 0, max = 0, mean = 0;
  double stddev = 0;  ///< sample standard deviation (Bessel); 0 for one sample
  int64_t count = 0;
};

SampleStats summarize(const std::vector<double>& samples);

/// The median of `samples` (the mean of the middle two of an even count); 0 for none.
double median(std::vector<double> samples);

/// Whether `pick`'s median is below `baseline`'s by more than `margin` (a fraction of it): two configs'
/// repeated timings, taken in turn (boo tune's confirmation of its pick against the heuristic's).
bool beats_by_margin(const std::vector<double>& pick, const std::vector<double>& baseline, double margin);

}  // namespace boo::bench
