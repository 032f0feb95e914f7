// ONNX MatMul (numpy.matmul broadcasting, 1-D operands) and Gemm (transA/transB, alpha, beta,
// C broadcast) onto the GEMM core. A constant 2-D B (a weight initializer) is prepacked once per
// node into the layout the kernels read fastest and reused in every run.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "graph/fold_gemm_output_transpose.h"
#include "graph/model_error.h"
#include "graph/split_gemm_columns.h"
#include "gpu/gpu_error.h"
#include "kernels/layout/layout_plan.h"
#include "kernels/layout/slice.h"
#include "kernels/gemm/gemm.h"
#include "ops/fused_activation.h"
#include "ops/fused_program.h"
#include "ops/gemm_node.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

namespace gemm = kernels::gemm;

// Kept per node across runs: the packed constant B, and the last plan (planning a GEMM costs CPU time
// on every run for the same shapes; the figure is in docs/benchmark-log.md, "Measurements behind code
// rules").
struct MatmulState {
  std::optional<gemm::PackedB> packed_b;
  std::optional<gemm::Gemm> plan;
};

MatmulState* node_matmul_state(OpContext& context) {
  if (!context.node_state) return nullptr;
  auto& state = *context.node_state;
  if (!state) state = std::make_shared<MatmulState>();
  return static_cast<MatmulState*>(state.get());
}

// The packed B of this node, packing it on first use when B is a constant 2-D float matrix.
const gemm::PackedB* packed_constant_b(OpContext& context, MatmulState* state, const Value& b,
                                       bool transpose_b) {
  if (!b.constant || b.shape().size() != 2 || !is_float(b.dtype()) || !state) return nullptr;
  if (!state->packed_b) {
    state->packed_b =
        gemm::prepack_b(context.kernels.gpu, context.pool_for_weights(), context.kernels.pipelines,
                        context.recorder, context.to_device(b), transpose_b);
  }
  return &*state->packed_b;
}

}  // namespace

namespace {

// How a product is stored: whole (row-major), in column parts, or permuted into another shape.
struct ProductStore {
  int64_t column_parts = 1;
  std::optional<gemm::OutputPermutation> permutation;
  Shape permuted_shape;  // with a permutation: the output's shape
};

// One GEMM node's product recorded; `column_parts` > 1 stores it as parts of its columns (the
// output tensor then holds them one after the other) and returns the parts as views; a permutation
// stores it as a tensor of `permuted_shape`.
std::vector<Value> record_product(const Node& node, OpContext& context, const Value& a, bool transpose_a,
                                  const Value& b, bool transpose_b, const Value* addend,
                                  const gemm::GemmEpilogue& epilogue, int b_input, const Value* residual,
                                  const ProductStore& store) {
  const int64_t column_parts = store.column_parts;
  if (!is_float(a.dtype()) || !is_float(b.dtype())) {
    throw ModelError(fmt::format("{}: float16/float32 operands required, got {} and {}", node.describe(),
                                 dtype_name(a.dtype()), dtype_name(b.dtype())));
  }
  try {
    MatmulState* state = node_matmul_state(context);
    const gemm::PackedB* packed = packed_constant_b(context, state, b, transpose_b);
    if (packed && b_input >= 0 && b_input < 64) context.derived_inputs |= uint64_t{1} << b_input;
    gemm::GemmProblem problem;
    if (packed) {
      problem = gemm::GemmProblem::with_packed_b(a.shape(), a.dtype(), transpose_a, *packed);
    } else {
      problem.a_shape = a.shape();
      problem.a_dtype = a.dtype();
      problem.transpose_a = transpose_a;
      problem.b_shape = b.shape();
      problem.b_dtype = b.dtype();
      problem.transpose_b = transpose_b;
    }
    if (addend) {
      problem.addend_shape = addend->shape();
      problem.addend_dtype = addend->dtype();
    }
    problem.out_dtype = a.dtype();
    problem.epilogue = epilogue;
    problem.column_parts = column_parts;
    problem.output_permutation = store.permutation;
    std::optional<gemm::Gemm> local_plan;
    std::optional<gemm::Gemm>& kept = state ? state->plan : local_plan;
    if (!kept || !(kept->problem() == problem)) {
      gemm::GemmOptions options;
      options.tuning = context.kernels.tuning.gemm;
      kept.emplace(context.kernels, problem, options);
    }
    const gemm::Gemm& plan = *kept;
    gemm::GemmTensors tensors;
    tensors.a = context.to_device(a);
    if (packed) {
      tensors.packed_b = packed;
    } else {
      tensors.b = context.to_device(b);
    }
    if (addend) tensors.addend = context.to_device(*addend);
    if (epilogue.program.residual) {
      if (!residual || !residual->defined()) throw ModelError(node.describe() + ": the residual input is missing");
      if (residual->shape() != plan.output_shape() || residual->dtype() != problem.out_dtype) {
        throw ModelError(fmt::format("{}: the residual is {} {}, the product {} {}", node.describe(),
                                     dtype_name(residual->dtype()), shape_string(residual->shape()),
                                     dtype_name(problem.out_dtype), shape_string(plan.output_shape())));
      }
      tensors.residual = context.to_device(*residual);
    }
    Value out;
    out.device = context.allocate(problem.out_dtype, store.permutation ? store.permuted_shape : plan.output_shape());
    tensors.out = out.device.reshape(plan.output_shape());
    plan.record(context.recorder, tensors);
    if (column_parts == 1) return {out};
    Shape part_shape = plan.output_shape();
    part_shape.back() /= column_parts;
    const Tensor parts = out.device.reshape({column_parts, shape_numel(part_shape)});
    std::vector<Value> views(static_cast<size_t>(column_parts));
    for (int64_t p = 0; p < column_parts; ++p) views[p].device = parts.slice_outer(p, p + 1).reshape(part_shape);
    return views;
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
}

// Copies of `full`'s column parts (where the product could not be stored in parts).
std::vector<Value> copy_column_parts(const Node& node, OpContext& context, const Value& full, int64_t parts) {
  const Tensor whole = context.to_device(full);
  const Shape& shape = whole.shape();
  const int64_t width = shape.back() / parts, last = static_cast<int64_t>(shape.size()) - 1;
  std::vector<Value> copies(static_cast<size_t>(parts));
  try {
    for (int64_t p = 0; p < parts; ++p) {
      const std::vector<int64_t> starts = {p * width}, ends = {(p + 1) * width}, axes = {last}, steps = {1};
      const auto dims = kernels::plan_slice(shape, starts, ends, axes, steps);
      copies[p].device = context.allocate(whole.dtype(), kernels::slice_output_shape(dims));
      kernels::LayoutPlan(context.kernels, kernels::LayoutProblem::slice(shape, whole.dtype(), dims,
                                                                           copies[p].device.shape()))
          .record(context.recorder, std::span(&whole, 1), std::span(&copies[p].device, 1));
    }
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return copies;
}

}  // namespace

Value record_gemm_node(const Node& node, OpContext& context, const Value& a, bool transpose_a, const Value& b,
                       bool transpose_b, const Value* addend, const gemm::GemmEpilogue& epilogue,
                       int b_input, const Value* residual) {
  return record_product(node, context, a, transpose_a, b, transpose_b, addend, epilogue, b_input, residual, {})[0];
}

std::vector<Value> record_gemm_node_in_parts(const Node& node, OpContext& context, const Value& a, bool transpose_a,
                                             const Value& b, bool transpose_b, const Value* addend,
                                             const gemm::GemmEpilogue& epilogue, int b_input,
                                             int64_t column_parts) {
  try {
    return record_product(node, context, a, transpose_a, b, transpose_b, addend, epilogue, b_input, nullptr,
                          {column_parts, std::nullopt, {}});
  } catch (const gpu::DeviceLimitError&) {
    // Thrown before anything is recorded (the binding checks come first).
    const Value full = record_product(node, context, a, transpose_a, b, transpose_b, addend, epilogue, b_input,
                                      nullptr, {})[0];
    return copy_column_parts(node, context, full, column_parts);
  }
}

namespace {

// A batched MatMul whose operands or result exceed one storage binding (attention scores of long
// sequences on adapters with small bindings) runs as several MatMuls over slices of the leading
// batch dimension, each writing its rows of the one output.
std::optional<Value> matmul_in_batch_slices(const Node& node, OpContext& context, const Value& a,
                                            const Value& b, const Value* bias, const Value* residual,
                                            const gemm::GemmEpilogue& epilogue) {
  const uint64_t limit = context.kernels.gpu.limits().maxStorageBufferBindingSize;
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  if (as.size() < 3 || as[0] <= 1 || !is_float(a.dtype()) || !is_float(b.dtype())) return std::nullopt;
  const bool b_batched = bs.size() == as.size() && bs[0] == as[0];
  if (bs.size() == as.size() && !b_batched && bs[0] != 1) return std::nullopt;
  const Shape out_shape = gemm::plan_matmul_layout(as, false, bs, false, std::nullopt).output_shape;
  const uint64_t a_bytes = shape_numel(as) * device_element_size(a.dtype());
  const uint64_t b_bytes = shape_numel(bs) * device_element_size(b.dtype());
  const uint64_t out_bytes = shape_numel(out_shape) * device_element_size(a.dtype());
  if (std::max({a_bytes, b_bytes, out_bytes}) <= limit) return std::nullopt;
  const uint64_t row_bytes = std::max({a_bytes, b_batched ? b_bytes : 0, out_bytes}) / as[0];
  const int64_t rows =
      std::max<int64_t>(1, static_cast<int64_t>(limit / std::max<uint64_t>(row_bytes, 1)) / 2 * 2);
  Value out;
  out.device = context.allocate(a.dtype(), out_shape);
  const Tensor ta = context.to_device(a), tb = context.to_device(b);
  const Tensor tr = residual ? context.to_device(*residual) : Tensor();
  if (tr.defined() && tr.shape() != out_shape) throw ModelError(node.describe() + ": the residual's shape differs from the product's");
  for (int64_t begin = 0; begin < as[0]; begin += rows) {
    const int64_t end = std::min(as[0], begin + rows);
    gemm::GemmProblem problem;
    gemm::GemmTensors tensors;
    tensors.a = ta.slice_outer(begin, end);
    tensors.b = b_batched ? tb.slice_outer(begin, end) : tb;
    tensors.out = out.device.slice_outer(begin, end);
    if (tr.defined()) tensors.residual = tr.slice_outer(begin, end);
    problem.a_shape = tensors.a.shape();
    problem.a_dtype = a.dtype();
    problem.b_shape = tensors.b.shape();
    problem.b_dtype = b.dtype();
    problem.out_dtype = a.dtype();
    problem.epilogue = epilogue;
    if (bias) {  // one value per column: the same for every slice
      tensors.addend = context.to_device(*bias);
      problem.addend_shape = bias->shape();
      problem.addend_dtype = bias->dtype();
    }
    try {
      gemm::GemmOptions options;
      options.tuning = context.kernels.tuning.gemm;
      gemm::Gemm plan(context.kernels, problem, options);
      plan.record(context.recorder, tensors);
    } catch (const std::invalid_argument& e) {
      throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
    }
  }
  return out;
}

// A MatMul that stores its product reshaped and transposed (graph/fold_gemm_output_transpose.h),
// or, where the GEMM cannot (a product beyond one storage binding), computes it whole and transposes
// a copy.
Value permuted_matmul(const Node& node, OpContext& context, const Value& a, const Value& b, const Value* bias,
                      const gemm::GemmEpilogue& epilogue) {
  const Shape dims = node.attribute_ints(kOutputDimsAttribute);
  const std::vector<int64_t> perm = node.attribute_ints(kOutputPermAttribute);
  const Shape product_shape = gemm::plan_matmul_layout(a.shape(), false, b.shape(), false, std::nullopt).output_shape;
  const int64_t n = product_shape.empty() ? 0 : product_shape.back(), numel = shape_numel(product_shape);
  const std::optional<GemmOutputLayout> layout =
      n > 0 && shape_numel(dims) == numel ? gemm_output_layout(numel / n, n, dims, perm) : std::nullopt;
  if (!layout) {
    throw ModelError(fmt::format("{}: its product {} cannot be stored as {} transposed by [{}]", node.describe(),
                                 shape_string(product_shape), shape_string(dims), fmt::join(perm, ", ")));
  }
  ProductStore store;
  store.permuted_shape.resize(perm.size());
  for (size_t q = 0; q < perm.size(); ++q) store.permuted_shape[q] = dims[perm[q]];
  const auto u32 = [&](int64_t v) {
    if (v < 0 || v > std::numeric_limits<uint32_t>::max())
      throw ModelError(node.describe() + ": its output is too large for 32-bit indices");
    return static_cast<uint32_t>(v);
  };
  gemm::OutputPermutation& p = store.permutation.emplace();
  for (size_t i = 0; i < 2; ++i) p.row_radix[i] = u32(layout->row_radix[i]);
  for (size_t i = 0; i < 3; ++i) p.row_stride[i] = u32(layout->row_stride[i]);
  for (size_t i = 0; i < 2; ++i) p.col_radix[i] = u32(layout->col_radix[i]);
  for (size_t i = 0; i < 2; ++i) p.col_stride[i] = u32(layout->col_stride[i]);
  try {
    return record_product(node, context, a, false, b, false, bias, epilogue, 1, nullptr, store)[0];
  } catch (const gpu::DeviceLimitError&) {
    // Thrown before anything is recorded (the binding checks come first).
  }
  std::optional<Value> full = matmul_in_batch_slices(node, context, a, b, bias, nullptr, epilogue);
  if (!full) full = record_product(node, context, a, false, b, false, bias, epilogue, 1, nullptr, {})[0];
  const Tensor whole = context.to_device(*full).reshape(dims);
  Value out;
  out.device = context.allocate(whole.dtype(), store.permuted_shape);
  try {
    kernels::LayoutPlan(context.kernels, kernels::LayoutProblem::transpose(dims, whole.dtype(), perm, store.permuted_shape))
        .record(context.recorder, std::span(&whole, 1), std::span(&out.device, 1));
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return out;
}

// The fused residual of an epilogue (graph/fuse_residual_add.h): input 3 of MatMul and Gemm.
const Value* residual_input(const std::vector<Value>& inputs) {
  return inputs.size() > 3 && inputs[3].defined() ? &inputs[3] : nullptr;
}

// A third input is a per-column bias fused at plan time (graph/fuse_matmul_bias.h), added at the store.
std::vector<Value> matmul(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  gemm::GemmEpilogue epilogue = fused_epilogue(node);
  epilogue.program = fused_epilogue_of(node, inputs.at(0).dtype());
  const Value* bias = inputs.size() > 2 && inputs[2].defined() ? &inputs[2] : nullptr;
  const Value* residual = residual_input(inputs);
  const int64_t parts = node.attribute_int(kColumnPartsAttribute, 1);
  if (node.has_attribute(kOutputPermAttribute)) {
    if (residual || parts != 1) throw ModelError(node.describe() + ": a permuted output with a residual or column parts");
    return {permuted_matmul(node, context, inputs.at(0), inputs.at(1), bias, epilogue)};
  }
  if (auto sliced =
          matmul_in_batch_slices(node, context, inputs.at(0), inputs.at(1), bias, residual, epilogue))
    return parts == 1 ? std::vector<Value>{*sliced} : copy_column_parts(node, context, *sliced, parts);
  if (parts != 1) {
    if (residual) throw ModelError(node.describe() + ": a residual and column parts together");
    return record_gemm_node_in_parts(node, context, inputs.at(0), false, inputs.at(1), false, bias, epilogue, 1,
                                     parts);
  }
  return {record_gemm_node(node, context, inputs.at(0), false, inputs.at(1), false, bias, epilogue, 1,
                           residual)};
}

std::vector<Value> gemm_op(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  gemm::GemmEpilogue epilogue = fused_epilogue(node);
  epilogue.program = fused_epilogue_of(node, inputs.at(0).dtype());
  epilogue.alpha = node.attribute_float("alpha", 1.0f);
  epilogue.beta = node.attribute_float("beta", 1.0f);
  const bool transpose_a = node.attribute_int("transA", 0) != 0;
  const bool transpose_b = node.attribute_int("transB", 0) != 0;
  if (inputs.at(0).shape().size() != 2 || inputs.at(1).shape().size() != 2) {
    throw ModelError(node.describe() + ": A and B must be 2-D");
  }
  const Value& c = input_or_empty(inputs, 2);
  if (const int64_t parts = node.attribute_int(kColumnPartsAttribute, 1); parts != 1) {
    if (residual_input(inputs)) throw ModelError(node.describe() + ": a residual and column parts together");
    return record_gemm_node_in_parts(node, context, inputs[0], transpose_a, inputs[1], transpose_b,
                                     c.defined() ? &c : nullptr, epilogue, 1, parts);
  }
  return {record_gemm_node(node, context, inputs[0], transpose_a, inputs[1], transpose_b,
                           c.defined() ? &c : nullptr, epilogue, 1, residual_input(inputs))};
}

}  // namespace

void register_matmul_ops(std::vector<OpEntry>& ops) {
  ops.push_back(
      {"", "MatMul", 1, matmul, "tiled / skinny GEMM, numpy batch broadcasting; constant B prepacked; a following bias, activation and elementwise tail fused into the store"});
  ops.push_back({"", "Gemm", 1, gemm_op, "alpha, beta, transA/B, C broadcast fused into the epilogue"});
}

}  // namespace onda::ops
