// Concat whose inputs are each one contiguous block of the output (every dim before the axis is 1:
// the channel concats of batch-1 convolutional models, MP-SENet's dense blocks, UVR's decoders) in
// one dispatch of coalesced copies, instead of the index map's one dispatch per input. 32-bit
// elements, up to kMaxConcatBlocks inputs (WebGPU's 8 storage buffers per stage, one the output).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

inline constexpr size_t kMaxConcatBlocks = 6;

class ConcatBlocks {
 public:
  // nullopt where the concat is not of whole blocks, has more inputs than kMaxConcatBlocks or
  // elements other than 32-bit words.
  static std::optional<ConcatBlocks> plan(const KernelContext& kc, std::span<const Shape> inputs, DType dtype,
                                          int64_t axis);
  // Every tensor must fit one storage binding.
  void record(gpu::CommandRecorder& recorder, std::span<const Tensor> inputs, const Tensor& output) const;

 private:
  ConcatBlocks(const KernelContext& kc, std::vector<uint64_t> ends, const wgpu::ComputePipeline& pipeline);

  KernelContext kc_;
  std::vector<uint64_t> ends_;  // per input, the element after its block
  const wgpu::ComputePipeline* pipeline_;  // owned by the cache
};

}  // namespace onda::kernels
