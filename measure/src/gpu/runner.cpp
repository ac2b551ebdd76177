// The measurement loop: per-GPU threads, back-to-back NCCL calls, events between iterations, a watchdog.
#include "runner.hpp"

#include "commsim/workloads/registry.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <ctime>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>

#include "check.hpp"
#include "kernels.hpp"

namespace commsim::measure {
namespace {

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

Runner::Runner(const World& world, std::vector<int> cuda_of, const RunnerOptions& options)
    : world_(world), o_(options), dev_(cuda_of.size()) {
  const int slots = std::max(o_.warmup + o_.iterations + 1, 2 * o_.iterations + 2);
  for (std::size_t g = 0; g < cuda_of.size(); ++g) {
    if (cuda_of[g] < 0) continue;
    MeasureDevice& dv = dev_[g];
    dv.cuda = cuda_of[g];
    COMMSIM_CUDA_CHECK(cudaSetDevice(dv.cuda));
    try {
      const std::uint64_t bytes = std::max<std::uint64_t>(o_.max_bytes, 64);
      if (o_.nccl_mem_alloc) {  // as nccl-tests allocates them (cuMem, which NCCL can map between GPUs)
        const ncclResult_t a = ncclMemAlloc(&dv.send, bytes);
        const ncclResult_t b = a == ncclSuccess ? ncclMemAlloc(&dv.recv, bytes) : a;
        if (b != ncclSuccess) throw OutOfMemory(std::string("ncclMemAlloc: ") + ncclGetErrorString(b));
      } else {
        COMMSIM_CUDA_CHECK(cudaMalloc(&dv.send, bytes));
        COMMSIM_CUDA_CHECK(cudaMalloc(&dv.recv, bytes));
      }
    } catch (const OutOfMemory& e) {
      throw OutOfMemory("GPU " + std::to_string(g) + " cannot hold two buffers of " +
                        std::to_string(o_.max_bytes) + " bytes; lower --max-bytes (" + e.what() + ")");
    }
    for (auto& s : dv.stream) COMMSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    dv.events.resize(slots);
    for (auto& e : dv.events) COMMSIM_CUDA_CHECK(cudaEventCreate(&e));
    COMMSIM_CUDA_CHECK(cudaEventCreateWithFlags(&dv.join, cudaEventDisableTiming));
    COMMSIM_CUDA_CHECK(cudaEventCreateWithFlags(&dv.join_fwd, cudaEventDisableTiming));
    COMMSIM_CUDA_CHECK(cudaEventCreateWithFlags(&dv.join_bwd, cudaEventDisableTiming));
    // Random non-zero data, once per buffer.
    const auto seed = static_cast<std::uint32_t>(g);
    fill_random(dv.send, o_.max_bytes, 0x9e3779b9u + seed, dv.stream[0]);
    fill_random(dv.recv, o_.max_bytes, 0x85ebca6bu + seed, dv.stream[0]);
    COMMSIM_CUDA_CHECK(cudaStreamSynchronize(dv.stream[0]));
  }
  if (!o_.single_thread && o_.persistent_threads) {
    workers_ = std::make_unique<WorkerPool>(static_cast<int>(dev_.size()), [this](int g) {
      if (dev_[g].cuda >= 0) cudaSetDevice(dev_[g].cuda);  // checked again by every job
    });
  }
}

Runner::~Runner() {
  workers_.reset();
  for (auto& [key, cs] : comms_) {
    for (ncclComm_t c : cs) {
      if (c) ncclCommDestroy(c);
    }
  }
  for (std::size_t d = 0; d < dev_.size(); ++d) {
    if (dev_[d].cuda < 0) continue;
    cudaSetDevice(dev_[d].cuda);
    if (o_.nccl_mem_alloc) {
      ncclMemFree(dev_[d].send);
      ncclMemFree(dev_[d].recv);
    } else {
      cudaFree(dev_[d].send);
      cudaFree(dev_[d].recv);
    }
    for (auto& e : dev_[d].events) cudaEventDestroy(e);
    cudaEventDestroy(dev_[d].join);
    cudaEventDestroy(dev_[d].join_fwd);
    cudaEventDestroy(dev_[d].join_bwd);
    for (auto& e : dev_[d].step_events) cudaEventDestroy(e);
    for (auto& s : dev_[d].stream) cudaStreamDestroy(s);
  }
}

std::vector<ncclComm_t>& Runner::comms(const std::vector<int>& gpus, int slot) {
  auto key = std::make_pair(gpus, slot);
  auto it = comms_.find(key);
  if (it != comms_.end()) return it->second;
  const int n = static_cast<int>(gpus.size());
  std::vector<ncclComm_t> cs(gpus.size(), nullptr);
  // Communicators as nccl-tests makes them: one id, every rank joining with ncclCommInitRankConfig.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  if (o_.nvlink_centric_sched) config.nvlinkCentricSched = 1;
#endif
  ncclUniqueId id{};
  if (!world_.mpi()) {
    COMMSIM_NCCL_CHECK(ncclGetUniqueId(&id));
  } else {
    // Every process takes part (the id travels by MPI from the first GPU's rank); members join the
    // communicator at their position in `gpus`.
    if (world_.rank() == gpus[0]) COMMSIM_NCCL_CHECK(ncclGetUniqueId(&id));
    world_.bcast(&id, sizeof id, gpus[0]);
  }
  COMMSIM_NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    if (dev_[gpus[r]].cuda < 0) continue;
    COMMSIM_CUDA_CHECK(cudaSetDevice(dev_[gpus[r]].cuda));
    COMMSIM_NCCL_CHECK(ncclCommInitRankConfig(&cs[r], n, id, r, &config));
  }
  COMMSIM_NCCL_CHECK(ncclGroupEnd());
  return comms_.emplace(key, std::move(cs)).first->second;
}

void Runner::drop_comms(const std::vector<int>& gpus) {
  for (auto it = comms_.begin(); it != comms_.end();) {
    if (it->first.first == gpus) {
      for (ncclComm_t c : it->second) {
        if (c) ncclCommAbort(c);
      }
      it = comms_.erase(it);
    } else {
      ++it;
    }
  }
}

void Runner::issue(const MeasureWorkload& w, const Config& c, int r, const std::vector<ncclComm_t>& comm0,
                   const std::vector<ncclComm_t>* comm1, bool record, std::uint64_t shift) {
  IssueContext ctx{c, r, dev_[c.gpus[r]], comm0[r], comm1 ? (*comm1)[r] : nullptr, record, shift};
  w.issue(ctx);
}

Sample Runner::run(const Config& c, int rep) {
  Sample s;
  s.config = c.id;
  s.rep = rep;
  const int n = static_cast<int>(c.gpus.size());
  std::vector<ncclComm_t>& comm0 = comms(c.gpus, 0);
  std::vector<ncclComm_t>* comm1 = c.mode == "overlapped" ? &comms(c.gpus, 1) : nullptr;
  std::vector<int> mine;  // the ranks this process drives
  for (int r = 0; r < n; ++r) {
    if (dev_[c.gpus[r]].cuda >= 0) mine.push_back(r);
  }
  const int total = o_.warmup + o_.iterations;
  const MeasureWorkload& workload = measure_workload(c.workload);
  // Pipeline steps record their last timed iteration's compute kernels (the timeline).
  const bool pipeline = workloads::find_workload(c.workload).family == workloads::Family::Pipeline;
  const std::string range = c.tag() + "_r" + std::to_string(rep);
  std::atomic<bool> failed{false};
  std::string error;
  std::mutex error_mutex;
  auto fail = [&](const std::string& why) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!failed.exchange(true)) error = why;
  };
  using Clock = std::chrono::steady_clock;
  auto us_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  };

  // One iteration for `ranks` (one group when one thread drives several GPUs, as nccl-tests -g N); `event`
  // >= 0 records that event on every GPU's stream first.
  // nccl-tests' buffer rotation: iteration i of this repetition starts `bytes * (i % steps)` into the
  // buffers. Only for workloads whose buffers hold exactly their size (pipelines split theirs, alltoallv
  // sizes its own).
  const bool rotates = o_.rotate_buffers && !pipeline && !workload.buffer_bytes && c.bytes > 0;
  const std::uint64_t steps = rotates ? std::max<std::uint64_t>(o_.max_bytes / c.bytes, 1) : 1;
  int issued = 0;  // iterations issued in this repetition, warmup included
  // Workloads whose iteration is NCCL calls on stream 0 alone (no kernels, no cross-stream events).
  const workloads::Family family = workloads::find_workload(c.workload).family;
  const bool nccl_calls_only = family == workloads::Family::Ring || family == workloads::Family::Collective ||
                               family == workloads::Family::PointToPoint;
  auto issue_iteration = [&](const std::vector<int>& ranks, int event, bool record) {
    const std::uint64_t shift = c.bytes * (static_cast<std::uint64_t>(issued++) % steps);
    // One thread driving several GPUs selects a device only where an event or a kernel needs it, as
    // nccl-tests (NCCL selects the communicator's device itself); --select-device per-call selects it before
    // every call.
    const bool select = ranks.size() > 1 && (o_.select_device_per_call || event >= 0 || !nccl_calls_only);
    if (ranks.size() > 1) COMMSIM_NCCL_CHECK(ncclGroupStart());
    for (int r : ranks) {
      MeasureDevice& dv = dev_[c.gpus[r]];
      if (select) COMMSIM_CUDA_CHECK(cudaSetDevice(dv.cuda));
      if (event >= 0) COMMSIM_CUDA_CHECK(cudaEventRecord(dv.events[event], dv.stream[0]));
      issue(workload, c, r, comm0, comm1, record, shift);
    }
    if (ranks.size() > 1) COMMSIM_NCCL_CHECK(ncclGroupEnd());
  };
  auto record_all = [&](const std::vector<int>& ranks, int event) {
    for (int r : ranks) {
      MeasureDevice& dv = dev_[c.gpus[r]];
      if (ranks.size() > 1) COMMSIM_CUDA_CHECK(cudaSetDevice(dv.cuda));
      COMMSIM_CUDA_CHECK(cudaEventRecord(dv.events[event], dv.stream[0]));
    }
  };
  Clock::time_point deadline;
  // Waits until `event` completed on every GPU of `ranks`, watching NCCL's asynchronous errors and the
  // watchdog; false when the repetition failed.
  auto wait_all = [&](const std::vector<int>& ranks, int event) {
    for (int r : ranks) {
      MeasureDevice& dv = dev_[c.gpus[r]];
      if (ranks.size() > 1) COMMSIM_CUDA_CHECK(cudaSetDevice(dv.cuda));
      while (true) {
        const cudaError_t q = cudaEventQuery(dv.events[event]);
        if (q == cudaSuccess) break;
        if (q != cudaErrorNotReady) COMMSIM_CUDA_CHECK(q);
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(comm0[r], &async);
        if (async != ncclSuccess && async != ncclInProgress) {
          fail(std::string("NCCL error on GPU ") + std::to_string(c.gpus[r]) + ": " +
               ncclGetErrorString(async));
          return false;
        }
        if (failed) return false;
        if (Clock::now() > deadline) {
          fail("watchdog: no completion on GPU " + std::to_string(c.gpus[r]) + " after " +
               std::to_string(o_.timeout_s) + " s");
          return false;
        }
      }
    }
    return true;
  };
  // Every GPU's thread (and every process) starts the timed part together.
  auto align = [&] {
    try {
      world_.barrier();
    } catch (const Error& e) {
      fail(e.what());
    }
  };
  std::barrier<std::function<void()>> sync(static_cast<std::ptrdiff_t>(o_.single_thread ? 1 : mine.size()),
                                           align);

  // The timed part for `ranks` (one thread's GPUs); fills their records. Event slots: per-iteration uses
  // 0..total (an event before each iteration and one after the last); pipelined 0 (after the warmup) and 1
  // (after the last operation); per-op 2i and 2i+1 around timed operation i.
  std::vector<RankRecord> records(mine.size());
  std::map<int, std::size_t> slot;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    slot[mine[k]] = k;
    records[k].rank = mine[k];
  }
  int timeline_origin = total - 1;  // the event the pipeline timeline is relative to
  auto time_ranks = [&](const std::vector<int>& ranks) {
    switch (o_.timing) {
      case Timing::PerIteration:
        sync.arrive_and_wait();
        for (int it = 0; it < total; ++it) issue_iteration(ranks, it, pipeline && it == total - 1);
        record_all(ranks, total);
        if (!wait_all(ranks, total)) return;
        for (int r : ranks) {
          for (int it = o_.warmup; it < total; ++it) {
            float ms = 0;
            COMMSIM_CUDA_CHECK(cudaSetDevice(dev_[c.gpus[r]].cuda));
            COMMSIM_CUDA_CHECK(
                cudaEventElapsedTime(&ms, dev_[c.gpus[r]].events[it], dev_[c.gpus[r]].events[it + 1]));
            records[slot[r]].iteration_us.push_back(static_cast<double>(ms) * 1000.0);
          }
        }
        return;
      case Timing::Pipelined: {
        for (int it = 0; it < o_.warmup; ++it) issue_iteration(ranks, -1, false);
        record_all(ranks, 0);
        const bool warm = wait_all(ranks, 0);
        sync.arrive_and_wait();  // reached by every thread and process, failed or not
        if (!warm || failed) return;
        const Clock::time_point t0 = Clock::now();
        record_all(ranks, 0);
        for (int it = 0; it < o_.iterations; ++it) issue_iteration(ranks, -1, false);
        record_all(ranks, 1);
        if (!wait_all(ranks, 1)) return;
        const double host = us_since(t0) / o_.iterations;
        for (int r : ranks) {
          float ms = 0;
          COMMSIM_CUDA_CHECK(cudaSetDevice(dev_[c.gpus[r]].cuda));
          COMMSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, dev_[c.gpus[r]].events[0], dev_[c.gpus[r]].events[1]));
          records[slot[r]].pipelined_us = host;
          records[slot[r]].gpu_span_us = static_cast<double>(ms) * 1000.0 / o_.iterations;
        }
        return;
      }
      case Timing::PerOp:
        for (int it = 0; it < o_.warmup; ++it) issue_iteration(ranks, -1, false);
        record_all(ranks, 0);
        wait_all(ranks, 0);
        for (int it = 0; it < o_.iterations; ++it) {
          // Every thread and process aligns before every operation, failed or not, so none waits forever.
          sync.arrive_and_wait();
          if (failed) continue;
          const Clock::time_point t0 = Clock::now();
          issue_iteration(ranks, 2 * it, pipeline && it == o_.iterations - 1);
          record_all(ranks, 2 * it + 1);
          if (!wait_all(ranks, 2 * it + 1)) continue;
          const double host = us_since(t0);
          for (int r : ranks) records[slot[r]].iteration_us.push_back(host);
        }
        timeline_origin = 2 * (o_.iterations - 1);
        return;
    }
  };

  world_.barrier();  // every process starts issuing together
  deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.timeout_s));
  s.cpu_start_ns = realtime_ns();
  nvtxRangePushA(range.c_str());
  if (o_.single_thread) {
    try {
      time_ranks(mine);
    } catch (const Error& e) {
      fail(e.what());
    }
  } else if (mine.empty()) {
    // A process with no GPU in this configuration (MPI launch) joins the alignments of the others.
    const int alignments = o_.timing == Timing::PerOp ? o_.iterations : 1;
    for (int k = 0; k < alignments; ++k) align();
  } else {
    // Each rank's GPU is driven by its own worker thread: persistent (WorkerPool), or one started for this
    // repetition (--worker-threads per-repetition, as before issue 18).
    std::vector<int> workers;
    for (int r : mine) workers.push_back(c.gpus[r]);
    const std::function<void(int)> job = [&](int g) {
      const int r = static_cast<int>(std::find(c.gpus.begin(), c.gpus.end(), g) - c.gpus.begin());
      try {
        COMMSIM_CUDA_CHECK(cudaSetDevice(dev_[g].cuda));
        time_ranks({r});
      } catch (const Error& e) {
        fail(e.what());
      } catch (const std::exception& e) {
        fail(e.what());
      }
      // A thread stopped by an error leaves the remaining alignments, so no other thread waits for it.
      if (failed) sync.arrive_and_drop();
    };
    if (workers_) {
      workers_->run(workers, job);
    } else {
      std::vector<std::thread> threads;
      for (int g : workers) threads.emplace_back(job, g);
      for (auto& t : threads) t.join();
    }
  }
  nvtxRangePop();
  s.cpu_end_ns = realtime_ns();

  // A failure anywhere fails the repetition everywhere; the message is the lowest failing process's.
  const int failing = world_.min(failed ? world_.rank() : std::numeric_limits<int>::max());
  if (failing != std::numeric_limits<int>::max()) {
    s.failed = true;
    s.error = world_.bcast(error, failing);
    drop_comms(c.gpus);  // aborted communicators are rebuilt for the next configuration
    for (int r : mine) {
      cudaSetDevice(dev_[c.gpus[r]].cuda);
      cudaDeviceSynchronize();
    }
    return s;
  }
  if (pipeline && o_.timing != Timing::Pipelined) {
    // The last timed iteration's compute kernels, from that iteration's start event on the rank's GPU.
    for (int r : mine) {
      MeasureDevice& dv = dev_[c.gpus[r]];
      COMMSIM_CUDA_CHECK(cudaSetDevice(dv.cuda));
      nlohmann::json& timeline = records[slot[r]].timeline;
      timeline = nlohmann::json::array();
      for (std::size_t k = 0; k < dv.step_kinds.size(); ++k) {
        float a = 0, b = 0;
        COMMSIM_CUDA_CHECK(cudaEventElapsedTime(&a, dv.events[timeline_origin], dv.step_events[2 * k]));
        COMMSIM_CUDA_CHECK(cudaEventElapsedTime(&b, dv.events[timeline_origin], dv.step_events[2 * k + 1]));
        timeline.push_back({{"kind", dv.step_kinds[k]}, {"start_us", a * 1000.0}, {"end_us", b * 1000.0}});
      }
    }
  }
  // Rank 0 combines every process's records (combine_rank_records).
  const std::vector<std::string> gathered = world_.gather(encode_rank_records(records));
  if (world_.rank() == 0) combine_rank_records(gathered, n, s);
  return s;
}

}  // namespace commsim::measure
