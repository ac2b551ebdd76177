// Small device kernels for commsim-measure: %globaltimer reads, spin loads, random buffer fills.
#include <cstdint>

#include "check.hpp"
#include "kernels.hpp"

namespace commsim::measure {
namespace {

__device__ std::uint64_t globaltimer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void read_timer(std::uint64_t* out) {
  *out = globaltimer();
}

__global__ void spin_kernel(std::uint64_t ns) {
  const std::uint64_t start = globaltimer();
  while (globaltimer() - start < ns) {
  }
}

__global__ void fill_kernel(std::uint32_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    p[i] = x | 1u;  // never zero
  }
}

}  // namespace

std::uint64_t gpu_globaltimer_ns(int device) {
  COMMSIM_CUDA_CHECK(cudaSetDevice(device));
  std::uint64_t* d = nullptr;
  std::uint64_t h = 0;
  COMMSIM_CUDA_CHECK(cudaMalloc(&d, sizeof h));
  read_timer<<<1, 1>>>(d);
  COMMSIM_CUDA_CHECK(cudaGetLastError());
  COMMSIM_CUDA_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  COMMSIM_CUDA_CHECK(cudaFree(d));
  return h;
}

void launch_spin(cudaStream_t stream, std::uint64_t ns, int blocks) {
  spin_kernel<<<blocks, 32, 0, stream>>>(ns);
  COMMSIM_CUDA_CHECK(cudaGetLastError());
}

void fill_random(void* buffer, std::size_t bytes, std::uint32_t seed, cudaStream_t stream) {
  const std::size_t n = bytes / 4;
  if (n > 0) {
    fill_kernel<<<1024, 256, 0, stream>>>(static_cast<std::uint32_t*>(buffer), n, seed);
    COMMSIM_CUDA_CHECK(cudaGetLastError());
  }
  if (bytes % 4)
    COMMSIM_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(buffer) + n * 4, 0x5a, bytes % 4, stream));
}

}  // namespace commsim::measure
