// Code generation for one Stockham pass of an FftPlan: renders fft/stockham_pass.wgsl with the
// butterflies, the pass's flavour (domain, dtype, direction, source, sink, four-step shape), its
// bucketed sizes and the bindings it needs. Lengths and radices travel as uniforms (fft_kernel.cpp).
#pragma once
#include <string>
#include <vector>

#include "kernels/fft/fft_plan.h"

namespace onda::kernels::fft {

// The storage buffers a pass binds, in binding order (the uniform block follows them).
enum class PassBinding { user_input, window, spectrum, stage_scratch, user_output, tables };

struct GeneratedPass {
  std::string wgsl;
  std::vector<PassBinding> bindings;
};

// vec2_io: the caller's tensors bound as arrays of vec2<f32>: one 8-byte access per complex value
// or dense real sample pair instead of two 4-byte ones; only for plans where vec2_user_io holds and
// tensors at even element offsets.
GeneratedPass generate_stockham_pass(const FftPlan& plan, size_t pass_index, bool vec2_io = false);

// Whether a plan's passes can take vec2 user I/O: float32, unrolled, even layout offsets and outer /
// inner strides, and an even axis stride (or 1 on a real side).
bool vec2_user_io(const FftPlan& plan);

// How read_user / write_user (fft/user_io.wgsl) read and write the caller's tensors for this plan.
struct UserKinds {
  uint32_t input = 0;   // 0 complex, 1 real, 2 onesided Hermitian, 3 real packed, 4 Hermitian packed
  uint32_t output = 0;  // 0 complex, 1 onesided complex, 2 real, 3 real pair
};
UserKinds user_kinds(const FftPlan& plan);

// WGSL of the forward DFT butterfly `fn dftR(v: array<vec2<f32>, R>) -> array<vec2<f32>, R>` for an
// odd prime radix R (3, 5, 7), from the symmetric pairs x_m +- x_(R-m).
std::string odd_radix_butterfly(int radix);

}  // namespace onda::kernels::fft
