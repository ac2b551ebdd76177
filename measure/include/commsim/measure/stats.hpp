// Summary statistics of repeated timings.
#pragma once

#include <vector>

namespace commsim::measure {

struct Summary {
  int n = 0;
  double median = 0, min = 0, max = 0, mean = 0, stdev = 0;
  double cv = 0;  ///< stdev / mean
};

/// Sample statistics (stdev with n-1). An empty input gives n == 0.
Summary summarize(std::vector<double> values);

}  // namespace commsim::measure
