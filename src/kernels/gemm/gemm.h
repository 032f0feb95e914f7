// The matrix-multiply core that ONNX MatMul / Gemm, and later Conv (im2col), ConvTranspose and the
// recurrent cells call:
//   out[batch] = act(alpha * op(A[batch]) op(B[batch]) + beta * D[batch]),  op = optional transpose,
// with numpy.matmul batch broadcasting and 1-D operands (matmul_layout.h), f32 or f16 storage for
// every tensor (f16 as packed halves, float32 accumulation), and B either a tensor or a PackedB.
//
// Planning (the constructor) only needs shapes and dtypes, so an op can plan at graph-build time and
// record many times. It picks the path:
//   skinny  M <= 64 and B K-contiguous (transposed or prepacked): bandwidth-bound streaming of B
//           (gemm_skinny.wgsl), K split across threads, subgroup or workgroup reduction, past 16
//           rows register-blocked over 16 rows x up to 4 columns; or, with the operands' roles
//           swapped, N <= 64 < M, A K-contiguous and B K-contiguous or a vector (matrix-vector
//           products). A row-major B with several columns (attention's softmax(QK^T) V) is not
//           swapped: the swapped shader would read it transposed, a strided scalar load per lane;
//   tiled   everything else: workgroup-memory tiles + register blocks (gemm_tiled.wgsl), the tile
//           size chosen from the shape and the device's workgroup memory / invocation limits, a
//           narrow tile (16 or 32 columns) for a row-major B with N <= 32; a
//           K-contiguous B (every prepacked weight) on a large problem gets a K step of 32 (whole
//           128-byte lines per staged row) and the grouped tile order.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/command_recorder.h"
#include "gpu/pipeline_cache.h"
#include "kernels/gemm/gemm_epilogue.h"
#include "kernels/gemm/gemm_tuning.h"
#include "kernels/gemm/matmul_layout.h"
#include "kernels/gemm/packed_b.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels::gemm {

// Where a permuted output puts element (r, n) of the [R, N] product, r the row over all batch entries
// (r = batch M + m): r's digits, innermost first, are r0 = r % row_radix[0], r1 = r / row_radix[0] %
// row_radix[1], r2 = the rest; n's are n0 = n % col_radix[0], n1, n2 likewise. The element goes to
// r0 row_stride[0] + r1 row_stride[1] + r2 row_stride[2] + n0 + n1 col_stride[0] + n2 col_stride[1]
// (elements from the output's start). col_radix[0] is a multiple of 4 (four neighbouring columns stay
// neighbours). Tiled path only, without column parts or a residual.
struct OutputPermutation {
  std::array<uint32_t, 2> row_radix{1, 1};
  std::array<uint32_t, 3> row_stride{0, 0, 0};
  std::array<uint32_t, 2> col_radix{4, 1};
  std::array<uint32_t, 2> col_stride{0, 0};
  bool operator==(const OutputPermutation&) const = default;
};

// What is multiplied: shapes and dtypes only, no buffers.
struct GemmProblem {
  Shape a_shape;
  DType a_dtype = DType::f32;
  bool transpose_a = false;
  Shape b_shape;  // for a prepacked B: its logical op(B) shape [K, N]
  DType b_dtype = DType::f32;
  bool transpose_b = false;
  bool b_prepacked = false;  // B is a PackedB (then transpose_b must be false)
  std::optional<Shape> addend_shape;
  DType addend_dtype = DType::f32;
  DType out_dtype = DType::f32;
  GemmEpilogue epilogue;
  // The output stored as column_parts consecutive tensors [batch..., M, N / column_parts] (column n
  // in part n / (N / column_parts)) instead of one [batch..., M, N]: a product whose readers split
  // its columns (attention's packed Q, K and V; graph/split_gemm_columns.h) hands out views. Tiled
  // path only; N / column_parts a multiple of 4.
  int64_t column_parts = 1;
  // The output stored permuted (graph/fold_gemm_output_transpose.h: a product reshaped and
  // transposed, the last axis kept last, as a packed Q/K/V projection's head split); none: row-major.
  std::optional<OutputPermutation> output_permutation;

  // The problem a PackedB stands for, with A as given.
  static GemmProblem with_packed_b(const Shape& a_shape, DType a_dtype, bool transpose_a, const PackedB& b);

  bool operator==(const GemmProblem&) const = default;
};

// skinny_transposed: the skinny kernel on C^T = op(B)^T op(A)^T, for few columns and many rows
// (matrix-vector products); needs A stored K-contiguous (not transposed).
enum class GemmPath { automatic, tiled, skinny, skinny_transposed };

// One planned tile configuration, exposed for tests and benchmarks.
struct GemmVariant {
  GemmPath path = GemmPath::tiled;
  // tiled: WG_X x WG_Y threads, each TM x 4 NV outputs, K step BK. skinny: KS threads per column
  // group, NC column groups of NT columns and 4 * MV rows per workgroup.
  uint32_t wg_x = 0, wg_y = 0, tm = 0, bk = 0;
  uint32_t nv = 1;  // tiled: vec4s of B columns per thread (BN = 4 NV WG_X): 1, 2 or 4 (TM x 8 / 16 outputs)
  uint32_t ks = 0, nc = 0, nt = 1, mv = 0;
  bool subgroup_reduce = false;
  bool unroll_k = true;        // tiled: false keeps the k loop rolled (CPU adapters: compile time)
  bool for_unroll = false;     // tiled: the register block's loops and the epilogue written out by
                               // the template's #for (GemmTuning::for_unroll)
  uint32_t group_m = 0;        // tiled: 0, or tile rows per group of the grouped tile order
  bool double_buffer = false;  // tiled: two copies of the staged tiles, the next K step prefetched
                               // into registers, one barrier per K step (GemmTuning::double_buffer)
  bool vec_store = false;      // tiled: vec4 stores of a float32 output where N and its offset are
                               // multiples of 4 (GemmTuning::vec_store)
  bool swap_operands = false;  // skinny on C^T = op(B)^T op(A)^T (few columns)
  std::string describe() const;
};

struct GemmOptions {
  GemmPath path = GemmPath::automatic;  // force a path (tests, benchmarks)
  bool allow_subgroups = true;          // false: the skinny path reduces through workgroup memory
  std::optional<bool> unroll_k;         // tiled: override the adapter-based choice (tests)
  // skinny: override the adapter-based choice of 16-row blocks with NT columns per thread group
  // for M > 16 (off on CPU adapters, whose LLVM compile of the larger register blocks costs more
  // than the small GEMMs gain; tests force it on).
  std::optional<bool> skinny_blocking;
  // Largest storage binding to use; 0 = the device's maxStorageBufferBindingSize. Larger A / output /
  // addend tensors are split into row blocks (tests lower it to exercise the split).
  uint64_t max_binding_bytes = 0;
  // Use exactly this configuration instead of choosing one (benchmarks sweep tile shapes with it).
  // Checked against the problem and the device: std::invalid_argument when the shader cannot run it
  // (e.g. a swizzled tile narrower than 32, a skinny B that is not K-contiguous), DeviceLimitError
  // when the device's workgroup limits are exceeded. `path` and `unroll_k` above are ignored then.
  std::optional<GemmVariant> variant;
  GemmTuning tuning;  // the session's (KernelContext::tuning.gemm)
};

// The tensors of one run. `b` is ignored when the problem's B is prepacked (pass packed_b).
struct GemmTensors {
  Tensor a;
  Tensor b;
  const PackedB* packed_b = nullptr;
  Tensor addend;  // undefined when the problem has none
  Tensor out;     // contiguous, shape output_shape(), dtype out_dtype
  // The epilogue program's second input (GemmEpilogue::program.residual): out's shape and dtype,
  // read at each stored element; undefined otherwise.
  Tensor residual;
};

class Gemm {
 public:
  // Validates shapes/dtypes (std::invalid_argument naming the problem) and chooses the variant for
  // kc's device. The plan keeps kc (its device and pipeline cache must outlive it) to record with.
  Gemm(const KernelContext& kc, GemmProblem problem, GemmOptions options = {});

  const GemmProblem& problem() const { return problem_; }
  const Shape& output_shape() const { return layout_.output_shape; }
  const MatmulLayout& layout() const { return layout_; }
  const GemmVariant& variant() const { return variant_; }

  // Records the dispatches (one per 65535 batch entries). Checks that the tensors match the problem.
  // When A, the output or the addend exceeds the storage binding limit, a 2-D problem with an
  // untransposed A is recorded as blocks of rows; any other oversize throws gpu::DeviceLimitError.
  void record(gpu::CommandRecorder& recorder, const GemmTensors& tensors) const;

 private:
  // Shader choices that depend on the tensors' alignment, known only at record time.
  struct ShaderFlags {
    bool a_vec = false, b_vec = false, out_pairs = false, out_vec4 = false;
    bool operator==(const ShaderFlags&) const = default;
  };
  struct CachedPipeline {
    const gpu::PipelineCache* cache;
    ShaderFlags flags;
    const wgpu::ComputePipeline* pipeline;  // owned by the cache (its map nodes are stable)
  };

  GemmVariant choose_tiled(const gpu::Context& context, const GemmOptions& options) const;
  GemmVariant choose_skinny(const gpu::Context& context, const GemmOptions& options, bool swap) const;
  // Throws when the shader or the device cannot run `v` on this problem (GemmOptions::variant).
  void check_variant(const gpu::Context& context, const GemmVariant& v) const;

  const wgpu::ComputePipeline& pipeline_for(gpu::PipelineCache& pipelines, const ShaderFlags& flags,
                                            bool shader_a_trans, const std::string& label) const;

  // Records the problem as blocks of rows, each within `limit` bytes per binding.
  void record_row_blocks(gpu::CommandRecorder& recorder, const GemmTensors& tensors, uint64_t limit) const;

  KernelContext kc_;
  GemmProblem problem_;
  GemmOptions options_;
  MatmulLayout layout_;
  GemmVariant variant_;
  mutable std::vector<CachedPipeline> pipelines_;  // not thread-safe, like PipelineCache
};

// Plans and records in one call (convenience for ops that do not keep plans).
void record_gemm(const KernelContext& kc, gpu::CommandRecorder& recorder, const GemmProblem& problem,
                 const GemmTensors& tensors, const GemmOptions& options = {});

}  // namespace onda::kernels::gemm
