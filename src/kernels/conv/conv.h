// Conv and ConvTranspose (1-D, 2-D, 3-D; f32 or f16 storage, f32 accumulation) for a resolved
// ConvGeometry. Paths:
//   direct        one invocation per output element, every attribute and group (the fallback);
//   implicit_gemm Conv, group 1, 1-D / 2-D: the GEMM with the column matrix formed in workgroup memory
//                 (conv_implicit.wgsl), no column buffer; `automatic` takes it where it would take
//                 gemm and the problem fits (see automatic_takes_implicit);
//   gemm          Conv: im2col + GEMM (y[n] = W[C_out, C_in k] col[n]), group 1;
//                 ConvTranspose: col[n] = X[n]^T W[C_in, C_out k] on the tiled GEMM, then a col2im
//                 gather of the valid taps (each output written once, no atomics), group 1.
//                 Both process the column buffer in chunks below the storage binding limit
//                 (batches, or output positions / input rows of one batch);
//   overlap_add   ConvTranspose with a windowed-identity weight ([C, 1, C], diagonal given): the
//                 iSTFT overlap-add as a memory-bound gather.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "gpu/buffer_pool.h"
#include "kernels/conv/conv_geometry.h"
#include "kernels/gemm/gemm_epilogue.h"
#include "kernels/gemm/packed_b.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels::conv {

enum class ConvPath { automatic, direct, gemm, overlap_add, implicit_gemm };

struct ConvOptions {
  ConvPath path = ConvPath::automatic;
  // Largest column-buffer chunk in bytes; 0 = min(maxStorageBufferBindingSize, 256 MiB). Tests
  // set it small to force chunked runs.
  uint64_t max_chunk_bytes = 0;
  // Largest binding of X or Y (or a view of them) in bytes; 0 = maxStorageBufferBindingSize.
  // Larger tensors are bound in windows (input channels / rows a chunk reads, output channels /
  // positions it writes). Tests set it small to force windowed runs.
  uint64_t max_binding_bytes = 0;
  // An activation applied to every output after the bias (a fused following Relu, Sigmoid, ...).
  gemm::Activation activation = gemm::Activation::none;
  float activation_alpha = 0.01f;  // leaky_relu's slope
  // The overlap-add path runs overlap_add_tiled.wgsl (coalesced loads and stores) where the stride
  // is >= 32 and the pad >= 0, else overlap_add.wgsl; true forces the latter (benchmarks compare).
  bool per_output_overlap_add = false;
  // implicit_gemm: positions per tile, 0 = chosen from the shape, 1 = 64, 2 = 128 (benchmarks).
  int implicit_nv = 0;
  // implicit_gemm: slices of the split K, 0 = chosen from the shape (split where the tiles alone give
  // the GPU few workgroups), 1 = no split, k = k slices (tests, benchmarks).
  int implicit_splits = 0;
  // implicit_gemm: load the next K step into registers while the current one multiplies (benchmarks
  // compare; off by default until measured).
  bool implicit_prefetch = false;
  // implicit_gemm ConvTranspose whose kernel equals its stride (non-overlapping phases of one tap
  // each, SCNet's decoders): one GEMM whose rows are all phases' output channels (unset / true,
  // where shuffle_applies) or one GEMM slice per phase (false; tests and benchmarks compare).
  std::optional<bool> implicit_shuffle{};
  // automatic: false keeps Conv on im2col + GEMM where implicit_gemm would run (benchmarks compare;
  // ConvTuning::implicit_gemm = false does the same for every conv of a session).
  bool allow_implicit = true;
};

// The path `automatic` picks (without a diagonal, overlap_add is never chosen). Where
// automatic_takes_implicit holds, the plan takes implicit_gemm instead where it applies (X, W, Y
// bound whole) unless options.allow_implicit or kc.tuning.conv.implicit_gemm is false.
ConvPath choose_conv_path(const ConvGeometry& geometry, bool has_diagonal);

// Whether `automatic` prefers implicit_gemm for this Conv: group 1, rank <= 2, and either the gemm
// geometry, or the direct one with C_in taps >= 16 and C_out >= 8 (the implicit tile of 16 output
// channels then wastes at most half its rows, still far faster than one invocation per output).
bool automatic_takes_implicit(const ConvGeometry& geometry);

// y = Conv(x, w) + bias, planned and recorded in one call (ConvPlan, conv_plan.h, for callers that
// record the same problem again). `bias` may be undefined (then no bias). Tensors must match the
// geometry (x [N, C_in, in...], w weight_shape(), bias [C_out], y output_shape(); float dtypes, y the
// dtype of x). Throws std::invalid_argument on a mismatch or a path that cannot run the geometry.
void record_conv(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                 const ConvGeometry& geometry, const Tensor& x, const Tensor& w, const Tensor& bias,
                 const Tensor& y, const ConvOptions& options = {});

// The weights a ConvTranspose may be given in besides the plain tensor.
struct ConvTransposeWeights {
  Tensor w;                                    // [C_in, C_out/group, k...] (needed unless diagonal)
  const gemm::PackedB* packed = nullptr;       // w viewed [C_in, C_out k], prepacked at load (gemm path)
  std::optional<std::vector<float>> diagonal;  // windowed identity: w[c, 0, c] (overlap_add path)
  // w ([C, 1, C]) may be a windowed identity but is known only on the GPU: the overlap_add path
  // then extracts the diagonal and checks the rest is zero in one pass over w, and its kernel
  // computes the dense sum itself if the check fails (exact either way).
  bool check_windowed_identity = false;
  // The diagonal already on the GPU (f32 [C]), prepared once per node: used instead of `diagonal`
  // (no per-run upload). With `identity_flag` (from record_windowed_identity_check, also done once)
  // the kernel reads `w` too and computes the dense sum if the flag is raised.
  Tensor diagonal_device;
  Tensor identity_flag;
};

// The GPU check of a [C, 1, C] weight: its diagonal (f32 [C]) and a flag raised if any other entry
// is non-zero. Recorded into fresh tensors of `pool` (a persistent pool when kept across runs).
struct WindowedIdentityCheck {
  Tensor diagonal, flag;
};
WindowedIdentityCheck record_windowed_identity_check(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                                     gpu::BufferPool& pool, const Tensor& w);

void record_conv_transpose(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                           const ConvGeometry& geometry, const ConvTransposeWeights& weights, const Tensor& x,
                           const Tensor& bias, const Tensor& y, const ConvOptions& options = {});

// Prepacks a ConvTranspose weight [C_in, C_out, k...] (group 1) for the gemm path, once at load.
gemm::PackedB prepack_conv_transpose_weight(const KernelContext& kc, gpu::BufferPool& pool,
                                            gpu::CommandRecorder& recorder, const Tensor& w);

// If a ConvTranspose weight of `shape` with these row-major values is a windowed identity
// ([C, 1, C], zero off the diagonal), its diagonal; else nothing.
std::optional<std::vector<float>> windowed_identity_diagonal(const Shape& shape,
                                                             std::span<const float> values);

}  // namespace onda::kernels::conv
