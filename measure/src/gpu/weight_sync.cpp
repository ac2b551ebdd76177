// Weight sync on real GPUs: per-tensor NCCL broadcast, or cudaMemcpyPeerAsync tasks over several streams.
#include "weight_sync.hpp"

#include <chrono>

#include "check.hpp"
#include "commsim/workloads/model_spec.hpp"
#include "kernels.hpp"

namespace commsim::measure {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
using Clock = std::chrono::steady_clock;

}  // namespace

nlohmann::json run_weight_sync(const WeightSyncOptions& o) {
  const workloads::ModelSpec& spec = workloads::model_spec(o.model);
  const auto tensors = spec.tensors();
  std::vector<std::size_t> offset;
  std::size_t total = 0;
  for (const auto& t : tensors) {
    offset.push_back(total);
    total += (t.bytes + 255) / 256 * 256;  // 256-byte aligned, as allocators hand out tensors
  }
  std::vector<int> gpus{o.from};
  gpus.insert(gpus.end(), o.to.begin(), o.to.end());
  std::vector<void*> buf(gpus.size(), nullptr);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    COMMSIM_CUDA_CHECK(cudaSetDevice(gpus[i]));
    const cudaError_t e = cudaMalloc(&buf[i], total);
    if (e == cudaErrorMemoryAllocation) {
      throw OutOfMemory("GPU " + std::to_string(gpus[i]) + " cannot hold " + o.model + " (" +
                        std::to_string(total) + " bytes)");
    }
    COMMSIM_CUDA_CHECK(e);
    fill_random(buf[i], total, 0x1234u + static_cast<std::uint32_t>(i), nullptr);
    COMMSIM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  nlohmann::json metrics = nlohmann::json::array();
  nlohmann::json once = nlohmann::json::object();
  auto sync_all = [&] {
    for (int g : gpus) {
      COMMSIM_CUDA_CHECK(cudaSetDevice(g));
      COMMSIM_CUDA_CHECK(cudaDeviceSynchronize());
    }
  };

  if (o.method == "broadcast") {
    const int n = static_cast<int>(gpus.size());
    std::vector<ncclComm_t> comms(n);
    std::vector<cudaStream_t> streams(n);
    for (int i = 0; i < n; ++i) {
      COMMSIM_CUDA_CHECK(cudaSetDevice(gpus[i]));
      COMMSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    }
    auto t0 = Clock::now();
    COMMSIM_NCCL_CHECK(ncclCommInitAll(comms.data(), n, gpus.data()));
    once["init_process_group_time"] = seconds_since(t0);
    // Per tensor, or consecutive tensors coalesced into buckets of at most bucket_bytes (one tensor larger
    // than a bucket goes alone); tensors are contiguous, so a bucket is one byte range.
    std::vector<std::pair<std::size_t, std::size_t>> pieces;  // (offset, bytes)
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      const std::size_t end = offset[k] + tensors[k].bytes;
      if (o.bucket_bytes > 0 && !pieces.empty() && end - pieces.back().first <= o.bucket_bytes) {
        pieces.back().second = end - pieces.back().first;
      } else {
        pieces.push_back({offset[k], tensors[k].bytes});
      }
    }
    once["broadcasts_per_push"] = pieces.size();
    for (int rep = 0; rep <= o.reps; ++rep) {
      sync_all();
      const auto t1 = Clock::now();
      for (const auto& [off, bytes] : pieces) {
        COMMSIM_NCCL_CHECK(ncclGroupStart());
        for (int i = 0; i < n; ++i) {
          char* p = static_cast<char*>(buf[i]) + off;
          COMMSIM_NCCL_CHECK(ncclBroadcast(p, p, bytes, ncclInt8, 0, comms[i], streams[i]));
        }
        COMMSIM_NCCL_CHECK(ncclGroupEnd());
      }
      const double broadcast_time = seconds_since(t1);
      const auto t2 = Clock::now();
      for (int i = 0; i < n; ++i) {
        COMMSIM_CUDA_CHECK(cudaSetDevice(gpus[i]));
        COMMSIM_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
      }
      const double sync_time = seconds_since(t2);
      metrics.push_back({{"rep", rep},
                         {"warmup", rep == 0},
                         {"broadcast_time", broadcast_time},
                         {"sync_time", sync_time},
                         {"total_transfer_time", broadcast_time + sync_time}});
    }
    t0 = Clock::now();
    for (ncclComm_t c : comms) COMMSIM_NCCL_CHECK(ncclCommDestroy(c));
    once["destroy_group_time"] = seconds_since(t0);
    for (int i = 0; i < n; ++i) {
      COMMSIM_CUDA_CHECK(cudaSetDevice(gpus[i]));
      COMMSIM_CUDA_CHECK(cudaStreamDestroy(streams[i]));
    }
  } else if (o.method == "p2p-engine") {
    if (o.streams < 1 || o.streams > 64) throw UsageError("--streams must be between 1 and 64");
    // register_and_start: peer access from every rollout GPU to the trainer's memory, and the copy streams.
    auto t0 = Clock::now();
    std::vector<std::vector<cudaStream_t>> streams(o.to.size());
    for (std::size_t j = 0; j < o.to.size(); ++j) {
      COMMSIM_CUDA_CHECK(cudaSetDevice(o.to[j]));
      int can = 0;
      COMMSIM_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, o.to[j], o.from));
      if (!can)
        throw GpuError("GPU " + std::to_string(o.to[j]) + " cannot access GPU " + std::to_string(o.from));
      const cudaError_t e = cudaDeviceEnablePeerAccess(o.from, 0);
      if (e != cudaErrorPeerAccessAlreadyEnabled) COMMSIM_CUDA_CHECK(e);
      cudaGetLastError();  // clear "already enabled"
      streams[j].resize(static_cast<std::size_t>(o.streams));
      for (auto& s : streams[j]) COMMSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    once["register_and_start_time"] = seconds_since(t0);
    for (int rep = 0; rep <= o.reps; ++rep) {
      // update_weights: rebuild the task list (addresses and sizes of every tensor on both sides).
      const auto tu = Clock::now();
      struct Task {
        void* dst;
        int dst_dev;
        const void* src;
        std::size_t bytes;
        cudaStream_t stream;
      };
      std::vector<Task> tasks;
      tasks.reserve(tensors.size() * o.to.size());
      for (std::size_t k = 0; k < tensors.size(); ++k) {
        for (std::size_t j = 0; j < o.to.size(); ++j) {
          tasks.push_back({static_cast<char*>(buf[j + 1]) + offset[k], o.to[j],
                           static_cast<char*>(buf[0]) + offset[k], tensors[k].bytes,
                           streams[j][k % streams[j].size()]});
        }
      }
      const double update_time = seconds_since(tu);
      sync_all();
      const auto t1 = Clock::now();
      for (const Task& t : tasks) {
        COMMSIM_CUDA_CHECK(cudaSetDevice(t.dst_dev));
        COMMSIM_CUDA_CHECK(cudaMemcpyPeerAsync(t.dst, t.dst_dev, t.src, o.from, t.bytes, t.stream));
      }
      const double submit_time = seconds_since(t1);
      const auto t2 = Clock::now();
      for (std::size_t j = 0; j < o.to.size(); ++j) {
        COMMSIM_CUDA_CHECK(cudaSetDevice(o.to[j]));
        for (auto s : streams[j]) COMMSIM_CUDA_CHECK(cudaStreamSynchronize(s));
      }
      const double wait_time = seconds_since(t2);
      const auto t3 = Clock::now();
      sync_all();
      const double sync_time = seconds_since(t3);
      metrics.push_back({{"rep", rep},
                         {"warmup", rep == 0},
                         {"update_weights_time", update_time},
                         {"submit_tasks_time", submit_time},
                         {"wait_transfers_time", wait_time},
                         {"sync_time", sync_time},
                         {"total_transfer_time", submit_time + wait_time + sync_time}});
    }
    t0 = Clock::now();
    for (std::size_t j = 0; j < o.to.size(); ++j) {
      COMMSIM_CUDA_CHECK(cudaSetDevice(o.to[j]));
      for (auto s : streams[j]) COMMSIM_CUDA_CHECK(cudaStreamDestroy(s));
      COMMSIM_CUDA_CHECK(cudaDeviceDisablePeerAccess(o.from));
    }
    once["stop_time"] = seconds_since(t0);
  } else {
    throw UsageError("--method must be broadcast or p2p-engine");
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    COMMSIM_CUDA_CHECK(cudaSetDevice(gpus[i]));
    COMMSIM_CUDA_CHECK(cudaFree(buf[i]));
  }
  return {{"workload", "weight-sync"},
          {"model", spec.name},
          {"method", o.method},
          {"from", o.from},
          {"to", o.to},
          {"tensors", tensors.size()},
          {"parameters", spec.parameters()},
          {"bytes", spec.bytes()},
          {"streams", o.streams},
          {"bucket_bytes", o.bucket_bytes},
          {"once", once},
          {"metrics", metrics}};
}

}  // namespace commsim::measure
