// commsim-measure's workload lookup, in the registry's order.
#include "measure_workload.hpp"

#include <algorithm>

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
    // Files for names the registry does not measure go last.
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

}  // namespace commsim::measure
