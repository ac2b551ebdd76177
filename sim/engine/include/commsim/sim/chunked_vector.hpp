// A growable array in segments that never move: growing never copies and never holds two copies at once.
#pragma once

#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace commsim::sim {

/// Indexable like std::vector, grown in segments of doubling size (16, 32, 64, ... elements) that are never
/// reallocated. A vector that doubles copies every element at each growth and briefly holds both copies; the
/// flow engine's slot arrays reach 10^5-10^7 entries, where that copying set a run's peak memory. Here
/// elements never move, so references stay valid as it grows; as in a vector, memory is reserved ahead (at
/// most the size again) but only constructed, and so touched, as elements are added. Small arrays stay small
/// (the first segment holds 16), so the many tiny networks of a calibration cost nothing extra.
template <class T>
class ChunkedVector {
 public:
  ChunkedVector() = default;
  ChunkedVector(const ChunkedVector&) = delete;
  ChunkedVector& operator=(const ChunkedVector&) = delete;
  ~ChunkedVector() {
    clear();
    for (std::size_t k = 0; k < segments_.size(); ++k)
      std::allocator<T>().deallocate(segments_[k], capacity_of(k));
  }

  T& operator[](std::size_t i) { return *slot(i); }
  const T& operator[](std::size_t i) const { return *slot(i); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& back() { return *slot(size_ - 1); }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      segments_.push_back(std::allocator<T>().allocate(capacity_of(segments_.size())));
      capacity_ += capacity_of(segments_.size() - 1);
    }
    T* p = slot(size_);
    ::new (static_cast<void*>(p)) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(T&& value) { emplace_back(std::move(value)); }
  void push_back(const T& value) { emplace_back(value); }
  /// Destroys every element; the segments stay for reuse.
  void clear() {
    for (std::size_t i = 0; i < size_; ++i) slot(i)->~T();
    size_ = 0;
  }

 private:
  static constexpr unsigned kFirstShift = 4;  ///< the first segment holds 2^4 elements
  static constexpr std::size_t capacity_of(std::size_t segment) {
    return std::size_t{1} << (kFirstShift + segment);
  }
  /// Element i lives in segment k = floor(log2(i / 16 + 1)), which starts at index 16 (2^k - 1).
  T* slot(std::size_t i) const {
    const std::size_t j = (i >> kFirstShift) + 1;
    const unsigned k = static_cast<unsigned>(std::bit_width(j)) - 1;
    return segments_[k] + (i - (((std::size_t{1} << k) - 1) << kFirstShift));
  }
  std::vector<T*> segments_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace commsim::sim
