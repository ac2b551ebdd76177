// One persistent host thread per GPU: the thread-per-GPU launch issues from the same threads for a whole run.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace commsim::measure {

/// Worker g drives GPU g for the pool's lifetime (nccl-tests keeps its threads for the whole run; a thread
/// started per repetition lands wherever the OS puts it each time, measure/README.md "Timing").
class WorkerPool {
 public:
  /// `count` workers; worker g calls `setup(g)` once when it starts (e.g. cudaSetDevice).
  WorkerPool(int count, const std::function<void(int)>& setup);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Runs `job(g)` on worker g for every g in `which`, concurrently, and returns when all have finished. The
  /// job must not throw.
  void run(const std::vector<int>& which, const std::function<void(int)>& job);

 private:
  void loop(int g, const std::function<void(int)>& setup);

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<char> member_;  ///< whether worker g takes part in the current job
  const std::function<void(int)>* job_ = nullptr;
  std::uint64_t generation_ = 0;  ///< bumped once per job
  int pending_ = 0;               ///< workers of the current job still running
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace commsim::measure
