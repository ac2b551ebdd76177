// commsim-measure's workload lookup and startup self-check against the registry.
#include "measure_workload.hpp"

#include <algorithm>
#include <stdexcept>

#include "check.hpp"
#include "commsim/workloads/registry.hpp"

namespace commsim::measure {

/// Generated from the file names in workloads/measure/ (measure/CMakeLists.txt): one entry per file.
std::vector<const MeasureWorkload*> measure_workload_files();

int IssueContext::root_rank() const {
  return static_cast<int>(std::find(config.gpus.begin(), config.gpus.end(), config.root) -
                          config.gpus.begin());
}

const std::vector<const MeasureWorkload*>& measure_workloads() {
  static const std::vector<const MeasureWorkload*> ordered = [] {
    const std::vector<const MeasureWorkload*> files = measure_workload_files();
    std::vector<const MeasureWorkload*> out;
    for (const workloads::WorkloadSpec* spec : workloads::measured_workloads()) {
      for (const MeasureWorkload* w : files) {
        if (w->name == spec->name) out.push_back(w);
      }
    }
    // Files for names the registry does not measure go last, so that the self-check can name them.
    for (const MeasureWorkload* w : files) {
      const workloads::WorkloadSpec* spec = workloads::lookup_workload(w->name);
      if (!spec || !spec->measured) out.push_back(w);
    }
    return out;
  }();
  return ordered;
}

const MeasureWorkload& measure_workload(std::string_view name) {
  for (const MeasureWorkload* w : measure_workloads()) {
    if (w->name == name) return *w;
  }
  std::string valid;
  for (const MeasureWorkload* w : measure_workloads()) valid += (valid.empty() ? "" : ", ") + w->name;
  throw GpuError("unknown workload '" + std::string(name) + "'; commsim-measure issues: " + valid);
}

void check_measure_workloads() {
  const std::vector<const MeasureWorkload*>& files = measure_workloads();
  for (const workloads::WorkloadSpec* spec : workloads::measured_workloads()) {
    const auto count = std::count_if(files.begin(), files.end(),
                                     [&](const MeasureWorkload* w) { return w->name == spec->name; });
    if (count != 1) {
      throw std::logic_error("the registry's measured workload '" + spec->name + "' has " +
                             std::to_string(count) +
                             " measure files (workloads/measure/<name>.cpp registering it); expected 1");
    }
  }
  for (const MeasureWorkload* w : files) {
    const workloads::WorkloadSpec* spec = workloads::lookup_workload(w->name);
    if (!spec || !spec->measured || w->issue == nullptr) {
      throw std::logic_error("workloads/measure/ registers '" + w->name + "', which " +
                             (!spec             ? "the registry does not know"
                              : !spec->measured ? "the registry does not mark measured"
                                                : "has no issue function") +
                             " (workloads/src/registry.cpp)");
    }
  }
}

}  // namespace commsim::measure
