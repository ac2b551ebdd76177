// Median, extremes, mean, standard deviation and coefficient of variation.
#include "commsim/measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace commsim::measure {

Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const std::size_t m = v.size() / 2;
  s.median = v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  s.cv = s.mean > 0 ? s.stdev / s.mean : 0;
  return s;
}

}  // namespace commsim::measure
