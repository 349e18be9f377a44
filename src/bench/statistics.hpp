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

}  // namespace boo::bench
