// One persistent host thread per GPU (WorkerPool).
#include "workers.hpp"

namespace commsim::measure {

WorkerPool::WorkerPool(int count, const std::function<void(int)>& setup) : member_(count, 0) {
  for (int g = 0; g < count; ++g) threads_.emplace_back([this, g, setup] { loop(g, setup); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::run(const std::vector<int>& which, const std::function<void(int)>& job) {
  std::unique_lock<std::mutex> lock(mutex_);
  std::fill(member_.begin(), member_.end(), 0);
  for (int g : which) member_[g] = 1;
  job_ = &job;
  pending_ = static_cast<int>(which.size());
  ++generation_;
  wake_.notify_all();
  done_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void WorkerPool::loop(int g, const std::function<void(int)>& setup) {
  setup(g);
  std::uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (!member_[g]) continue;
    const std::function<void(int)>* job = job_;
    lock.unlock();
    (*job)(g);
    lock.lock();
    if (--pending_ == 0) done_.notify_all();
  }
}

}  // namespace commsim::measure
