// NVML through dlopen, and the 1 s background logger.
#include "nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "commsim/core/csv.hpp"

namespace commsim::measure {

using NvmlDevice = void*;
struct Nvml::Fns {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, NvmlDevice*) = nullptr;
  int (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  int (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  int (*power)(NvmlDevice, unsigned*) = nullptr;
  int (*throttle)(NvmlDevice, unsigned long long*) = nullptr;
  int (*uuid)(NvmlDevice, char*, unsigned) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
};

namespace {
constexpr int kTempGpu = 0;   // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
}  // namespace

Nvml::Nvml() : f_(new Fns) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    why_ = std::string("cannot load libnvidia-ml.so.1: ") + dlerror();
    return;
  }
  auto sym = [&](const char* name) { return dlsym(lib_, name); };
  f_->init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  f_->shutdown = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
  f_->count = reinterpret_cast<int (*)(unsigned*)>(sym("nvmlDeviceGetCount_v2"));
  f_->handle = reinterpret_cast<int (*)(unsigned, NvmlDevice*)>(sym("nvmlDeviceGetHandleByIndex_v2"));
  f_->temperature = reinterpret_cast<int (*)(NvmlDevice, int, unsigned*)>(sym("nvmlDeviceGetTemperature"));
  f_->clock = reinterpret_cast<int (*)(NvmlDevice, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
  f_->power = reinterpret_cast<int (*)(NvmlDevice, unsigned*)>(sym("nvmlDeviceGetPowerUsage"));
  f_->throttle = reinterpret_cast<int (*)(NvmlDevice, unsigned long long*)>(
      sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (!f_->throttle) {
    f_->throttle = reinterpret_cast<int (*)(NvmlDevice, unsigned long long*)>(
        sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  }
  f_->uuid = reinterpret_cast<int (*)(NvmlDevice, char*, unsigned)>(sym("nvmlDeviceGetUUID"));
  f_->driver = reinterpret_cast<int (*)(char*, unsigned)>(sym("nvmlSystemGetDriverVersion"));
  if (!f_->init || !f_->count || !f_->handle || !f_->temperature || !f_->clock || !f_->power) {
    why_ = "libnvidia-ml.so.1 lacks the functions commsim needs";
    return;
  }
  if (f_->init() != 0) {
    why_ = "nvmlInit failed";
    return;
  }
  unsigned n = 0;
  if (f_->count(&n) != 0) {
    why_ = "nvmlDeviceGetCount failed";
    return;
  }
  count_ = static_cast<int>(n);
  ok_ = true;
}

Nvml::~Nvml() {
  if (ok_ && f_->shutdown) f_->shutdown();
  if (lib_) dlclose(lib_);
  delete f_;
}

bool Nvml::sample(int gpu, GpuSample& out) const {
  if (!ok_) return false;
  NvmlDevice d = nullptr;
  if (f_->handle(static_cast<unsigned>(gpu), &d) != 0) return false;
  out.gpu = gpu;
  f_->temperature(d, kTempGpu, &out.temperature_c);
  f_->clock(d, kClockSm, &out.sm_clock_mhz);
  f_->clock(d, kClockMem, &out.mem_clock_mhz);
  unsigned mw = 0;
  if (f_->power(d, &mw) == 0) out.power_w = mw / 1000.0;
  if (f_->throttle) f_->throttle(d, &out.throttle_reasons);
  return true;
}

std::string Nvml::uuid(int gpu) const {
  if (!ok_ || !f_->uuid) return "";
  NvmlDevice d = nullptr;
  char buf[96] = {};
  if (f_->handle(static_cast<unsigned>(gpu), &d) != 0 || f_->uuid(d, buf, sizeof buf) != 0) return "";
  return buf;
}

std::string Nvml::driver_version() const {
  char buf[96] = {};
  if (!ok_ || !f_->driver || f_->driver(buf, sizeof buf) != 0) return "";
  return buf;
}

NvmlLogger::NvmlLogger(const Nvml& nvml, std::vector<int> gpus, std::vector<int> labels, std::string csv_path,
                       int interval_ms)
    : nvml_(nvml),
      gpus_(std::move(gpus)),
      labels_(std::move(labels)),
      interval_ms_(interval_ms),
      csv_(csv_path, std::ios::app),
      samples_(gpus_.size()) {
  if (!nvml_.available()) return;
  if (csv_.tellp() == 0)
    csv_ << CsvWriter()
                .header({"unix_time", "gpu", "temperature_c", "sm_clock_mhz", "mem_clock_mhz", "power_w",
                         "throttle_reasons"})
                .str();
  thread_ = std::thread([this] { loop(); });
}

NvmlLogger::~NvmlLogger() {
  stop();
}

void NvmlLogger::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void NvmlLogger::loop() {
  while (!stop_) {
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      GpuSample s;
      if (!nvml_.sample(gpus_[i], s)) continue;
      samples_[i].push_back(s);
      char throttle[24];
      std::snprintf(throttle, sizeof throttle, "0x%llx", s.throttle_reasons);
      csv_ << CsvWriter()
                  .row(now, labels_[i], s.temperature_c, s.sm_clock_mhz, s.mem_clock_mhz, s.power_w, throttle)
                  .str();
    }
    csv_.flush();
    for (int slept = 0; slept < interval_ms_ && !stop_; slept += 50) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

nlohmann::json NvmlLogger::summary() const {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    const auto& v = samples_[i];
    if (v.empty()) continue;
    auto field = [&](auto get) {
      double mn = 1e300, mx = -1e300, sum = 0;
      for (const auto& s : v) {
        const double x = get(s);
        mn = std::min(mn, x);
        mx = std::max(mx, x);
        sum += x;
      }
      return nlohmann::json{{"min", mn}, {"max", mx}, {"mean", sum / static_cast<double>(v.size())}};
    };
    unsigned long long reasons = 0;
    for (const auto& s : v) reasons |= s.throttle_reasons;
    out.push_back(
        {{"gpu", labels_[i]},
         {"samples", v.size()},
         {"temperature_c", field([](const GpuSample& s) { return static_cast<double>(s.temperature_c); })},
         {"sm_clock_mhz", field([](const GpuSample& s) { return static_cast<double>(s.sm_clock_mhz); })},
         {"mem_clock_mhz", field([](const GpuSample& s) { return static_cast<double>(s.mem_clock_mhz); })},
         {"power_w", field([](const GpuSample& s) { return s.power_w; })},
         {"throttle_reasons_seen", reasons}});
  }
  return out;
}

}  // namespace commsim::measure
