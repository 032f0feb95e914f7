// A group of elementwise ops run as one dispatch: each output element is computed from its inputs
// through the group's steps in registers, so the intermediates of a chain (an exported GELU's Div,
// Erf, Add, Mul, Mul; an RMSNorm's Clip, Div, Mul, Mul) are never written. The steps are catalog ops
// (elementwise_ops.h) with their expressions; operands are the kernel's inputs (numpy broadcasting
// against the output shape, as the one-op kernel does), earlier steps, or scalar constants (uniform
// words: groups that differ in constants only share a pipeline). Evaluating every step at the
// output's resolution is exact under broadcasting: an intermediate of a smaller shape broadcasts to
// the output through its consumers, and composed broadcasts index as one.
//
// Like Elementwise, a plan built once per problem and recorded per run; it keeps the pipeline of
// each input alignment it has met.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/elementwise/broadcast.h"
#include "kernels/elementwise/elementwise_ops.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// The most inputs a fused group may have: WebGPU guarantees 8 storage buffers per shader stage,
// one of them the output.
inline constexpr size_t kMaxFusedInputs = 7;

struct FusedOperand {
  enum class Source : uint8_t { input, step, constant };
  Source source = Source::input;
  uint32_t index = 0;  // of the input, the (earlier) step or the constant

  static FusedOperand input(uint32_t k) { return {Source::input, k}; }
  static FusedOperand step(uint32_t k) { return {Source::step, k}; }
  static FusedOperand constant(uint32_t k) { return {Source::constant, k}; }
  bool operator==(const FusedOperand&) const = default;
};

// A scalar folded into the shader's uniform: its dtype and the bits of its compute type (f32 for
// float16/float32, i32 for int32/int64, u32 for uint8/bool).
struct FusedConstant {
  DType dtype = DType::f32;
  uint32_t bits = 0;

  static FusedConstant of(DType dtype, double value);  // integers from the value rounded toward 0
  bool operator==(const FusedConstant&) const = default;
};

struct FusedStep {
  ElementwiseOp op = ElementwiseOp::Identity;
  ElementwiseAttributes attributes;
  std::vector<FusedOperand> operands;  // as many as the op's arity
  bool operator==(const FusedStep&) const = default;
};

// What one fused call computes: shapes, dtypes and the steps; the last step is the output.
struct FusedElementwiseProblem {
  std::vector<Shape> input_shapes;
  std::vector<DType> input_dtypes;
  std::vector<FusedConstant> constants;
  std::vector<FusedStep> steps;
  Shape output_shape;  // every input broadcasts to it (folded constants may have widened the rank)
  // Per input (empty: none): read with neighbouring pairs rotated, element 2i as -x[2i + 1] and 2i + 1
  // as x[2i] (a rotary embedding's rotate_half folded in: graph/fuse_rotate_half.h). Such an input
  // has the output's shape, a float dtype and an even last dim.
  std::vector<bool> pair_rotated;
  // Per input (empty: none): the input is a view of a larger tensor (a Split's part folded in:
  // graph/fold_split_views.h). The tensor passed for it is that source; input_shapes[k] is the view's
  // shape, its element i at view_offsets[k] + sum i_d view_strides[k][d] in the source.
  std::vector<Shape> view_sources;            // empty Shape entries: not a view
  std::vector<std::vector<int64_t>> view_strides;
  std::vector<int64_t> view_offsets;
  bool operator==(const FusedElementwiseProblem&) const = default;
};

// Steps applied to one value at another kernel's store (a normalization's output, in f32): input
// 0 is the value; constants and attributes are WGSL literals, so that kernel's uniforms stay as
// they are. No steps: none.
struct FusedEpilogue {
  std::vector<FusedConstant> constants;
  std::vector<FusedStep> steps;
  // Input 1 is a tensor of the output's shape and dtype read at the stored element (a residual
  // connection's other operand: graph/fuse_residual_add.h); only kernels that bind it take it.
  bool residual = false;
  bool operator==(const FusedEpilogue&) const = default;
};

// `fn NAME(x0: f32) -> f32` (with a residual `fn NAME(x0: f32, x1: f32) -> f32`) and the functions
// it calls (the identity for no steps), the value of dtype `value` (float16 or float32, computed in
// f32). Throws std::invalid_argument when a step rejects its operands, the result is not of
// `value`'s type or a constant is not finite.
std::string render_epilogue(const FusedEpilogue& epilogue, DType value, std::string_view name = "epilogue");

class FusedElementwise {
 public:
  // Throws std::invalid_argument when an operand refers to nothing or to a later step, a step's
  // dtypes are not accepted by its op ("step K (Op): ..."), an input does not broadcast to the
  // output shape, there are more inputs than kMaxFusedInputs, or the output has more than 2^32
  // elements or 8 broadcast dims after coalescing.
  FusedElementwise(const KernelContext& kc, FusedElementwiseProblem problem);

  const FusedElementwiseProblem& problem() const { return problem_; }
  DType output_dtype() const { return step_dtypes_.back(); }
  const Shape& output_shape() const { return problem_.output_shape; }

  // `inputs` must match the problem, `output` be output_dtype() x output_shape(); throws
  // std::invalid_argument otherwise.
  void record(gpu::CommandRecorder& recorder, std::span<const Tensor> inputs, const Tensor& output) const;

 private:
  struct Alignment {
    bool out_vec4 = false;
    std::array<uint32_t, kMaxFusedInputs> in_alignment{};
    bool operator==(const Alignment&) const = default;
  };

  void check_tensors(std::span<const Tensor> inputs, const Tensor& output) const;
  const wgpu::ComputePipeline& pipeline_for(const Alignment& alignment) const;
  std::string render_wgsl(const Alignment& alignment) const;
  bool rotated(size_t k) const { return k < problem_.pair_rotated.size() && problem_.pair_rotated[k]; }
  bool is_view(size_t k) const { return k < problem_.view_strides.size() && !problem_.view_strides[k].empty(); }
  // The WGSL of the step functions and of `fused`'s body; also the shader's cache key.
  std::pair<std::string, std::string> render_steps() const;
  std::vector<uint32_t> uniforms(std::span<const Tensor> inputs, uint32_t out_offset) const;
  uint32_t input_offset(std::span<const Tensor> inputs, size_t k) const;

  KernelContext kc_;
  FusedElementwiseProblem problem_;
  std::vector<DType> step_dtypes_;
  std::vector<uint32_t> attribute_slots_;  // per step: its first attribute constant (after the given ones)
  std::vector<uint32_t> constant_words_;   // the given constants, then each step's attributes
  int64_t count_ = 0;
  BroadcastLayout layout_;
  std::string step_functions_, fused_body_;
  mutable std::vector<std::pair<Alignment, const wgpu::ComputePipeline*>> pipelines_;  // owned by the cache
};

}  // namespace onda::kernels
