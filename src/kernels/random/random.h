// Random tensors (ONNX RandomUniform, RandomNormal, their *Like forms, Bernoulli) from a
// counter-based generator: element i is Philox4x32-10 (random/philox.wgsl) of the counter
// (i, 0, 0, 0) under a 64-bit key, so a key gives the same tensor on every adapter and every run,
// and no generator state lives between dispatches. Which key a node uses is the op's choice
// (ops/random_ops.cpp). From the generator's words:
//   uniform    u = (w >> 8) / 2^24 in [0, 1) (24 bits, exact in f32); y = low + (high - low) u
//   normal     Box-Muller on the first two words, z = sqrt(-2 ln(1 - u1)) cos(2 pi u2); y = mean + scale z
//   bernoulli  y = 1 where u < p, else 0
#pragma once
#include <array>
#include <cstdint>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class RandomDistribution { Uniform, Normal, Bernoulli };

struct RandomDraw {
  RandomDistribution distribution = RandomDistribution::Uniform;
  float a = 0, b = 1;  // uniform: low, high; normal: mean, scale (standard deviation)
  std::array<uint32_t, 2> key{};
};

// Fills `y` (float, or for Bernoulli also int / bool); `probabilities` (float, y's element count) for
// Bernoulli only. Throws std::invalid_argument for a dtype or size it does not take.
void record_random(const KernelContext& kc, gpu::CommandRecorder& recorder, const RandomDraw& draw,
                   const Tensor* probabilities, const Tensor& y);

// The four words Philox4x32-10 gives for `counter` under `key` (the CPU twin of the shader, for
// tests and references).
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

}  // namespace onda::kernels
