// The index-map layout ops (Transpose, Slice, Concat, Split, Expand, Tile, Pad) as one plan object:
// built once per problem (shapes, dtype, parameters) with the checks, the index maps and their
// pipelines (IndexMapKernel), and for a transpose whose innermost dim moves the tiled kernel too;
// recorded per run on tensors of the planned shapes at any element offsets. The free record_xxx
// functions of the family plan and record in one call.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "kernels/kernel_context.h"
#include "kernels/layout/concat_blocks.h"
#include "kernels/layout/index_map.h"
#include "kernels/layout/pad.h"
#include "kernels/layout/slice.h"
#include "kernels/layout/transpose.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class LayoutOp { Transpose, Slice, Concat, Split, Expand, Tile, Pad };

// What one layout op moves: shapes and dtype only, no buffers.
struct LayoutProblem {
  LayoutOp op = LayoutOp::Transpose;
  DType dtype = DType::f32;
  std::vector<Shape> inputs;    // Concat: every input; the others: one
  std::vector<Shape> outputs;   // Split: every output; the others: one
  std::vector<int64_t> params;  // Transpose: perm; Slice: (start, step, size) per dim; Concat / Split:
                                // {axis}; Tile: repeats; Pad: pads (ONNX layout); Expand: none
  PadMode pad_mode = PadMode::Constant;
  double pad_value = 0;

  static LayoutProblem transpose(const Shape& input, DType dtype, std::span<const int64_t> perm,
                                 const Shape& output);
  static LayoutProblem slice(const Shape& input, DType dtype, std::span<const SliceDim> dims,
                             const Shape& output);
  static LayoutProblem concat(std::span<const Shape> inputs, DType dtype, int64_t axis, const Shape& output);
  static LayoutProblem split(const Shape& input, DType dtype, int64_t axis, std::span<const Shape> outputs);
  static LayoutProblem expand(const Shape& input, DType dtype, const Shape& output);
  static LayoutProblem tile(const Shape& input, DType dtype, std::span<const int64_t> repeats,
                            const Shape& output);
  static LayoutProblem pad(const Shape& input, DType dtype, std::span<const int64_t> pads, PadMode mode,
                           double value, const Shape& output);
  bool operator==(const LayoutProblem&) const = default;
};

class LayoutPlan {
 public:
  // Throws std::invalid_argument naming the op for shapes or parameters it refuses.
  LayoutPlan(const KernelContext& kc, LayoutProblem problem);

  const LayoutProblem& problem() const { return problem_; }

  // The tensors must have the planned shapes and dtype (std::invalid_argument otherwise).
  void record(gpu::CommandRecorder& recorder, std::span<const Tensor> inputs,
              std::span<const Tensor> outputs) const;

 private:
  struct Step {
    size_t input = 0, output = 0;
    IndexMapKernel map;
  };
  void plan_steps();
  void check_tensors(std::span<const Tensor> inputs, std::span<const Tensor> outputs) const;

  KernelContext kc_;
  LayoutProblem problem_;
  std::vector<Step> steps_;
  std::optional<TiledTranspose> tiled_;  // a transpose's alternative when both tensors fit one binding
  std::optional<ConcatBlocks> blocks_;   // a concat's, likewise
};

}  // namespace onda::kernels
