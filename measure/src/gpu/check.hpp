// CUDA and NCCL call checks: every call goes through a macro that names the call and its site.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "commsim/core/error.hpp"

namespace commsim::measure {

/// A failed CUDA or NCCL call, or a GPU condition the measurement cannot continue with.
class GpuError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kInternal; }
};

/// Out of device memory for a size: reported with the size so the user can lower --max-bytes.
class OutOfMemory : public GpuError {
 public:
  using GpuError::GpuError;
  ExitCode exit_code() const override { return ExitCode::kUsage; }
};

}  // namespace commsim::measure

#define COMMSIM_CUDA_CHECK(call)                                                                             \
  do {                                                                                                       \
    const cudaError_t err_ = (call);                                                                         \
    if (err_ != cudaSuccess) {                                                                               \
      const std::string msg_ = std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + #call +       \
                               " failed: " + cudaGetErrorName(err_) + " (" + cudaGetErrorString(err_) + ")"; \
      if (err_ == cudaErrorMemoryAllocation) throw ::commsim::measure::OutOfMemory(msg_);                    \
      throw ::commsim::measure::GpuError(msg_);                                                              \
    }                                                                                                        \
  } while (0)

#define COMMSIM_NCCL_CHECK(call)                                                                         \
  do {                                                                                                   \
    const ncclResult_t res_ = (call);                                                                    \
    if (res_ != ncclSuccess && res_ != ncclInProgress) {                                                 \
      throw ::commsim::measure::GpuError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + \
                                         #call + " failed: " + ncclGetErrorString(res_) + " (" +         \
                                         ncclGetLastError(nullptr) + ")");                               \
    }                                                                                                    \
  } while (0)
