// ONNX Einsum, lowered onto kernels onda already has: per input, repeated labels (a diagonal) become
// one index-map gather, labels only that input has and the output lacks are summed out (reduce),
// size-1 dims broadcast against another input's are dropped; then the inputs are contracted left to
// right, each pair as transposes to [batch, kept, contracted] x [batch, contracted, kept] and one
// batched MatMul; a last transpose puts the labels in the output's order.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "graph/einsum_equation.h"
#include "graph/model_error.h"
#include "kernels/gemm/gemm.h"
#include "kernels/layout/index_map.h"
#include "kernels/layout/transpose.h"
#include "kernels/reduce/reduce_kernel.h"
#include "ops/kernel_plans.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

// A tensor with one label per dim.
struct Labeled {
  Tensor tensor;
  std::string labels;
};

bool has(const std::string& labels, char ch) {
  return labels.find(ch) != std::string::npos;
}

Tensor permuted(OpContext& context, const Tensor& t, const std::vector<int64_t>& perm) {
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return t;
  Tensor out = context.allocate(t.dtype(), kernels::transpose_output_shape(t.shape(), perm));
  record_layout(context, kernels::LayoutProblem::transpose(t.shape(), t.dtype(), perm, out.shape()),
                std::span(&t, 1), std::span(&out, 1));
  return out;
}

// `x` with its labels put in the order of `order` (a permutation of x.labels).
Labeled in_order(OpContext& context, const Labeled& x, const std::string& order) {
  std::vector<int64_t> perm;
  for (char ch : order) perm.push_back(static_cast<int64_t>(x.labels.find(ch)));
  return {permuted(context, x.tensor, perm), order};
}

// Sums out every label of `x` that `keep` does not hold.
Labeled sum_out(OpContext& context, const Labeled& x, const std::string& keep) {
  std::vector<int64_t> axes;
  std::string kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (has(keep, x.labels[d])) {
      kept += x.labels[d];
    } else {
      axes.push_back(static_cast<int64_t>(d));
    }
  }
  if (axes.empty()) return x;
  Tensor out = context.allocate(x.tensor.dtype(), kernels::reduced_shape(x.tensor.shape(), axes, false));
  record_reduce(context, kernels::ReduceOp::Sum, x.tensor, axes, out);
  return {out, kept};
}

// Repeated labels ("ii"): one gather reading the diagonal (the stride of a kept label is the sum of
// the strides of its repeats).
Labeled take_diagonal(OpContext& context, const Labeled& x, const Node& node) {
  const Shape& shape = x.tensor.shape();
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  std::string unique;
  Shape out_shape;
  std::vector<int64_t> in_strides;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    const size_t first = x.labels.find(x.labels[d]);
    if (first != d) {
      if (shape[d] != shape[first]) {
        throw ModelError(fmt::format("{}: label '{}' repeats over dims of sizes {} and {}", node.describe(),
                                     x.labels[d], shape[first], shape[d]));
      }
      in_strides[unique.find(x.labels[d])] += strides[d];
      continue;
    }
    unique += x.labels[d];
    out_shape.push_back(shape[d]);
    in_strides.push_back(strides[d]);
  }
  if (unique.size() == x.labels.size()) return x;
  Tensor out = context.allocate(x.tensor.dtype(), out_shape);
  kernels::IndexMap map;
  int64_t out_stride = 1;
  map.dims.resize(unique.size());
  for (int64_t d = static_cast<int64_t>(unique.size()) - 1; d >= 0; --d) {
    kernels::IndexMapDim& dim = map.dims[d];
    dim.size = out_shape[d];
    dim.out_stride = out_stride;
    dim.start = 0;
    dim.step = 1;
    dim.in_dim = out_shape[d];
    dim.in_stride = in_strides[d];
    out_stride *= out_shape[d];
  }
  kernels::record_index_map(context.kernels, context.recorder, x.tensor, out, map, "Einsum diagonal");
  return {out, unique};
}

// Drops the size-1 dims whose label has a larger size elsewhere (numpy broadcasting: the value
// is the same for every index of that label).
Labeled drop_broadcast_dims(const Labeled& x, const std::map<char, int64_t>& sizes) {
  Shape shape;
  std::string labels;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (x.tensor.shape()[d] == 1 && sizes.at(x.labels[d]) != 1) continue;
    shape.push_back(x.tensor.shape()[d]);
    labels += x.labels[d];
  }
  if (labels.size() == x.labels.size()) return x;
  return {x.tensor.reshape(shape), labels};
}

int64_t product(const std::string& labels, const std::map<char, int64_t>& sizes) {
  int64_t n = 1;
  for (char ch : labels) n *= sizes.at(ch);
  return n;
}

// a x b over the labels both hold, keeping those in `needed` (later inputs or the output) as
// batch labels and summing the others through the MatMul.
Labeled contract(OpContext& context, Labeled a, Labeled b, const std::string& needed,
                 const std::map<char, int64_t>& sizes) {
  std::string batch, summed, left, right;
  for (char ch : a.labels) {
    if (has(b.labels, ch)) {
      (has(needed, ch) ? batch : summed) += ch;
    } else if (has(needed, ch)) {
      left += ch;
    }
  }
  for (char ch : b.labels)
    if (!has(a.labels, ch) && has(needed, ch)) right += ch;
  a = in_order(context, sum_out(context, a, batch + left + summed), batch + left + summed);
  b = in_order(context, sum_out(context, b, batch + summed + right), batch + summed + right);
  const int64_t nb = product(batch, sizes), nl = product(left, sizes), nc = product(summed, sizes),
                nr = product(right, sizes);
  kernels::gemm::GemmProblem problem;
  problem.a_shape = {nb, nl, nc};
  problem.a_dtype = a.tensor.dtype();
  problem.b_shape = {nb, nc, nr};
  problem.b_dtype = b.tensor.dtype();
  problem.out_dtype = a.tensor.dtype();
  kernels::gemm::GemmTensors tensors;
  tensors.a = a.tensor.reshape(problem.a_shape);
  tensors.b = b.tensor.reshape(problem.b_shape);
  tensors.out = context.allocate(problem.out_dtype, {nb, nl, nr});
  kernels::gemm::record_gemm(context.kernels, context.recorder, problem, tensors);
  const std::string labels = batch + left + right;
  Shape shape;
  for (char ch : labels) shape.push_back(sizes.at(ch));
  return {tensors.out.reshape(shape), labels};
}

std::vector<Value> einsum(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const std::string equation = node.attribute_string("equation");
  if (inputs.empty()) throw ModelError(node.describe() + ": needs at least one input");
  std::vector<int64_t> ranks;
  for (const Value& v : inputs) {
    if (!v.defined()) throw ModelError(node.describe() + ": an input is missing");
    if (!is_float(v.dtype()) || v.dtype() != inputs[0].dtype()) {
      throw ModelError(fmt::format("{}: inputs must all be float32 or all float16, got {}", node.describe(),
                                   dtype_name(v.dtype())));
    }
    ranks.push_back(static_cast<int64_t>(v.shape().size()));
  }
  EinsumEquation parsed;
  try {
    parsed = parse_einsum(equation, ranks);
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }

  // The size of each label; a label's dims must agree or be 1 (broadcast).
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t d = 0; d < parsed.inputs[i].size(); ++d) {
      const char ch = parsed.inputs[i][d];
      const int64_t n = inputs[i].shape()[d];
      auto [it, inserted] = sizes.emplace(ch, n);
      if (inserted || it->second == n || n == 1) continue;
      if (it->second != 1) {
        throw ModelError(fmt::format("{}: label '{}' has sizes {} and {} in equation '{}'", node.describe(),
                                     ch >= 'A' ? std::string(1, ch) : std::string("..."), it->second, n,
                                     equation));
      }
      it->second = n;
    }
  }

  std::vector<Labeled> operands;
  rethrow_naming_node(node, [&] {
    for (size_t i = 0; i < inputs.size(); ++i) {
      Labeled x{context.to_device(inputs[i]), parsed.inputs[i]};
      x = take_diagonal(context, x, node);
      x = drop_broadcast_dims(x, sizes);
      // Labels no other input and not the output hold are summed out right away.
      std::string keep = parsed.output;
      for (size_t j = 0; j < inputs.size(); ++j)
        if (j != i) keep += parsed.inputs[j];
      operands.push_back(sum_out(context, x, keep));
    }
    Labeled acc = operands[0];
    for (size_t i = 1; i < operands.size(); ++i) {
      std::string needed = parsed.output;
      for (size_t j = i + 1; j < operands.size(); ++j) needed += operands[j].labels;
      acc = contract(context, acc, operands[i], needed, sizes);
    }
    acc = in_order(context, sum_out(context, acc, parsed.output), parsed.output);
    operands.assign(1, acc);
  });
  Value out;
  out.device = operands[0].tensor;
  if (inputs.size() == 1 && out.device.storage() == inputs[0].device.storage() &&
      inputs[0].device.defined()) {
    return {inputs[0]};  // "ij->ij": nothing to do
  }
  return {out};
}

}  // namespace

void register_einsum_ops(std::vector<OpEntry>& ops) {
  ops.push_back(
      {"", "Einsum", 12, einsum,
       "f32/f16, any equation: diagonals by gather, sums by reduce, contractions as batched MatMul"});
}

}  // namespace onda::ops
