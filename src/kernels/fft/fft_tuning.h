// The FFT family's tuning: which Stockham shaders run and, for measurement sweeps (bench_fft
// --tuning), overrides of the unrolled planner's thread shape. The defaults are the rules measured on
// GPUs (docs/benchmark-log.md); KernelContext carries one, SessionOptions::tuning sets it.
#pragma once
#include <cstdint>
#include <vector>

namespace onda::kernels::fft {

// Which Stockham shaders a kernel compiles. generic: one pipeline per (flavour, size class) serves every
// length, with lengths and radices as uniforms (cheap to compile: what CPU adapters need, where a
// pipeline costs seconds). unrolled: one pipeline per pass length and radix sequence with unrolled
// stages (stockham_unrolled.h; what discrete GPUs need). automatic: generic on CPU adapters, unrolled
// elsewhere.
enum class FftCodePath : uint8_t { automatic, generic, unrolled };

// Which whole packed r2c passes split their bins from registers, the last stage in Hermitian
// butterfly pairs (unrolled_main.cpp): by_length those of 1024 to 4096 points (where it wins on GPUs),
// every_pass all of them (tests reach the code with short, quickly compiled transforms).
enum class RealSplitPairs : uint8_t { by_length, every_pass };

struct FftTuning {
  FftCodePath code_path = FftCodePath::automatic;
  RealSplitPairs real_split_pairs = RealSplitPairs::by_length;
  // Sweeps of the unrolled passes (0 / empty: the planner's rule, stockham_unrolled.cpp).
  std::vector<int> radices;      // the radices, in order, of every pass whose length is their product
  int64_t threads = 0;           // threads per transform (clamped to the device and the length)
  int64_t per_group = 0;         // transforms per workgroup (reduced until they fit)
  int64_t group_iterations = 0;  // groups of transforms each workgroup runs in turn
};

}  // namespace onda::kernels::fft
