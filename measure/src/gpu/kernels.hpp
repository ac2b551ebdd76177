// Host entry points of commsim-measure's device kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace commsim::measure {

/// The GPU's %globaltimer (nanoseconds) read by a one-thread kernel on `device`.
std::uint64_t gpu_globaltimer_ns(int device);
/// Keeps `blocks` blocks busy for `ns` nanoseconds of %globaltimer time (thermal warmup, emulated compute).
void launch_spin(cudaStream_t stream, std::uint64_t ns, int blocks);
/// Fills a buffer with pseudo-random non-zero 32-bit words.
void fill_random(void* buffer, std::size_t bytes, std::uint32_t seed, cudaStream_t stream);

}  // namespace commsim::measure
