// NVML loaded at run time: temperature, clocks, power and throttle reasons, logged by a background thread.
#pragma once

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace commsim::measure {

struct GpuSample {
  int gpu = 0;
  unsigned temperature_c = 0;
  unsigned sm_clock_mhz = 0;
  unsigned mem_clock_mhz = 0;
  double power_w = 0;
  unsigned long long throttle_reasons = 0;
};

/// Reads GPU state through libnvidia-ml.so.1 when it can be loaded; `available()` is false (a warning, not a
/// failure) otherwise. Never changes any setting.
class Nvml {
 public:
  Nvml();
  ~Nvml();
  bool available() const { return ok_; }
  const std::string& why_unavailable() const { return why_; }
  int device_count() const { return count_; }
  bool sample(int gpu, GpuSample& out) const;
  std::string uuid(int gpu) const;
  std::string driver_version() const;

 private:
  void* lib_ = nullptr;
  bool ok_ = false;
  std::string why_;
  int count_ = 0;
  struct Fns;
  Fns* f_ = nullptr;
};

/// Samples the given GPUs each `interval_ms` into `csv_path` until stopped; keeps min/max/mean for a summary.
/// `gpus[i]` is the NVML index of the i-th GPU and `labels[i]` the index written for it (the global GPU
/// index).
class NvmlLogger {
 public:
  NvmlLogger(const Nvml& nvml, std::vector<int> gpus, std::vector<int> labels, std::string csv_path,
             int interval_ms);
  ~NvmlLogger();
  void stop();
  nlohmann::json summary() const;

 private:
  void loop();
  const Nvml& nvml_;
  std::vector<int> gpus_;
  std::vector<int> labels_;
  int interval_ms_;
  std::ofstream csv_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::vector<GpuSample>> samples_;
};

}  // namespace commsim::measure
