// onda::FusedElementwise, the node graph/fuse_elementwise.h puts in place of a group of elementwise
// nodes: its body's nodes become the steps of one fused kernel (kernels/elementwise/
// fused_elementwise.h), each as the one-node op would run it (elementwise_call.h), scalar
// constants folded into the kernel's uniforms.
#include <fmt/format.h>

#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "graph/fold_split_views.h"
#include "graph/fuse_attention.h"
#include "graph/fuse_elementwise.h"
#include "graph/fuse_epilogue.h"
#include "graph/fuse_rotate_half.h"
#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/layout/layout_plan.h"
#include "kernels/layout/slice.h"
#include "ops/elementwise_call.h"
#include "ops/fused_program.h"
#include "ops/kernel_plans.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

using kernels::FusedOperand;
using Op = kernels::ElementwiseOp;

class ProgramBuilder {
 public:
  ProgramBuilder(const Node& fused, const Graph& body, std::vector<DType> input_dtypes)
      : fused_(fused), body_(body) {
    program_.input_dtypes = std::move(input_dtypes);
    for (size_t k = 0; k < body.inputs.size(); ++k) {
      operands_[body.inputs[k]] = FusedOperand::input(static_cast<uint32_t>(k));
      dtypes_[body.inputs[k]] = program_.input_dtypes[k];
    }
  }

  FusedProgram build() {
    for (const Node& node : body_.nodes) add_step(node);
    const std::string& out = body_.outputs.at(0);
    const ValueInfo* info = body_.find_value(out);
    if (!info || !info->shape || !info->has_static_shape() || !operands_.count(out))
      throw ModelError(fused_.describe() + ": the body's output has no static shape");
    program_.output_shape = *info->shape;
    program_.output_dtype = dtypes_.at(out);
    return std::move(program_);
  }

 private:
  // The operand for a value the body reads: an input, an earlier step, or a scalar constant (in
  // `as` when given: Pow's exponent takes the base's type).
  FusedOperand operand(const Node& node, const std::string& name, std::optional<DType> as = {}) {
    if (const HostTensor* constant = body_.find_initializer(name)) {
      if (constant->numel() != 1)
        throw ModelError(
            fmt::format("{}: {} reads a constant that is not a scalar", fused_.describe(), node.describe()));
      const DType dtype = as.value_or(constant->dtype());
      const double value = is_float(constant->dtype()) ? constant->to_double()[0]
                                                       : static_cast<double>(constant->to_int64()[0]);
      program_.constants.push_back(kernels::FusedConstant::of(dtype, value));
      dtypes_[name] = dtype;
      return FusedOperand::constant(static_cast<uint32_t>(program_.constants.size() - 1));
    }
    auto found = operands_.find(name);
    if (found == operands_.end())
      throw ModelError(fmt::format("{}: {} reads '{}', which its body does not hold", fused_.describe(),
                                   node.describe(), name));
    return found->second;
  }

  DType dtype_of(const std::string& name) const {
    if (const HostTensor* constant = body_.find_initializer(name)) return constant->dtype();
    return dtypes_.at(name);
  }

  float scalar_attribute(const Node& node, size_t input, float fallback) const {
    if (node.inputs.size() <= input || node.inputs[input].empty()) return fallback;
    const HostTensor* constant = body_.find_initializer(node.inputs[input]);
    if (!constant || constant->numel() != 1)
      throw ModelError(
          fmt::format("{}: {}'s bound must be a scalar constant", fused_.describe(), node.describe()));
    return static_cast<float>(constant->to_double()[0]);
  }

  void add_step(const Node& node) {
    kernels::FusedStep step;
    const std::string& op = node.op_type;
    const DType first = dtype_of(node.inputs.at(0));
    if (op == "Expand") {
      step.op = Op::Identity;  // the broadcast is the kernel's indexing
      step.operands = {operand(node, node.inputs[0])};
    } else if (op == "Cast") {
      step.op = Op::Cast;
      const auto to = dtype_from_onnx(node.attribute_int("to"));
      if (!to) throw ModelError(node.describe() + ": unsupported Cast target");
      step.attributes.to = *to;
      step.operands = {operand(node, node.inputs[0])};
    } else if (op == "Clip") {
      step.op = Op::Clip;
      const float lowest = std::numeric_limits<float>::lowest(), highest = std::numeric_limits<float>::max();
      if (body_.opset_version("") < 11) {
        step.attributes.alpha = node.attribute_float("min", lowest);
        step.attributes.beta = node.attribute_float("max", highest);
      } else {
        step.attributes.alpha = scalar_attribute(node, 1, lowest);
        step.attributes.beta = scalar_attribute(node, 2, highest);
      }
      step.operands = {operand(node, node.inputs[0])};
    } else if (op == "Sum" || op == "Max" || op == "Min") {
      step.op = op == "Sum" ? Op::Add : op == "Max" ? Op::Max : Op::Min;
      step.operands = {operand(node, node.inputs.at(0)), operand(node, node.inputs.at(1))};
    } else {
      const ElementwiseCall call = elementwise_call_of(node, first);
      step.op = call.op;
      step.attributes = call.attributes;
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        // Pow's exponent of another type than the base: a constant, converted to the base's type.
        const bool converted = call.op == Op::Pow && k == 1 && dtype_of(node.inputs[1]) != first;
        step.operands.push_back(
            operand(node, node.inputs[k], converted ? std::optional(first) : std::nullopt));
      }
    }
    std::vector<DType> dtypes;
    for (const FusedOperand& o : step.operands) {
      dtypes.push_back(o.source == FusedOperand::Source::input  ? program_.input_dtypes[o.index]
                       : o.source == FusedOperand::Source::step ? step_dtypes_[o.index]
                                                                : program_.constants[o.index].dtype);
    }
    DType result;
    try {
      result = kernels::elementwise_result_dtype(step.op, dtypes, step.attributes);
    } catch (const std::invalid_argument& e) {
      throw ModelError(fmt::format("{} (fused into {}): {}", node.describe(), fused_.describe(), e.what()));
    }
    step_dtypes_.push_back(result);
    const std::string& out = node.outputs.at(0);
    operands_[out] = FusedOperand::step(static_cast<uint32_t>(program_.steps.size()));
    dtypes_[out] = result;
    program_.steps.push_back(std::move(step));
  }

  const Node& fused_;
  const Graph& body_;
  FusedProgram program_;
  std::map<std::string, FusedOperand> operands_;
  std::map<std::string, DType> dtypes_;
  std::vector<DType> step_dtypes_;
};

// What the node keeps across runs: the program of the last input dtypes, and the kernel plans.
struct FusedState {
  std::optional<FusedProgram> program;
  KeptPlans<kernels::FusedElementwise> plans;
};

// Which inputs the group reads with their pairs rotated (graph/fuse_rotate_half.h); empty: none.
std::vector<bool> rotated_inputs(const Node& node, size_t inputs) {
  std::vector<bool> rotated;
  for (const int64_t k : node.attribute_ints(kRotatedInputsAttribute, {})) {
    if (k < 0 || k >= static_cast<int64_t>(inputs))
      throw ModelError(fmt::format("{}: rotated input {} of {}", node.describe(), k, inputs));
    rotated.resize(inputs, false);
    rotated[k] = true;
  }
  return rotated;
}

// The kernel's problem for the program: its steps, with these input shapes and output shape.
kernels::FusedElementwiseProblem problem_of(const FusedProgram& program, std::vector<Shape> input_shapes,
                                            const Shape& output_shape, std::vector<bool> rotated) {
  kernels::FusedElementwiseProblem problem;
  problem.input_shapes = std::move(input_shapes);
  problem.input_dtypes = program.input_dtypes;
  problem.constants = program.constants;
  problem.steps = program.steps;
  problem.output_shape = output_shape;
  problem.pair_rotated = std::move(rotated);
  return problem;
}

// The views of a group's inputs (graph/fold_split_views.h): per input position, the axis, first
// index and extent of the part of its tensor it reads.
struct InputView {
  int64_t axis = 0, start = 0, length = 0;
};
std::map<size_t, InputView> input_views(const Node& node, const std::vector<Tensor>& tensors) {
  const std::vector<int64_t> words = node.attribute_ints(kInputViewsAttribute);
  std::map<size_t, InputView> views;
  for (size_t i = 0; i + 4 <= words.size(); i += 4) {
    const int64_t k = words[i];
    const InputView v{words[i + 1], words[i + 2], words[i + 3]};
    if (k < 0 || k >= static_cast<int64_t>(tensors.size()) || v.axis < 0 || v.axis >= tensors[k].rank() ||
        v.start < 0 || v.length < 0 || v.start + v.length > tensors[k].shape()[v.axis])
      throw ModelError(fmt::format("{}: input view {} of {} is outside its tensor", node.describe(), i / 4, k));
    views[static_cast<size_t>(k)] = v;
  }
  if (words.size() % 4 != 0) throw ModelError(node.describe() + ": malformed input views");
  return views;
}

// Each viewed input's part copied out into a tensor of its own (where the views cannot be read in
// place: a source beyond one storage binding).
std::vector<Tensor> materialized_views(const Node& node, OpContext& context, std::vector<Tensor> tensors) {
  for (const auto& [k, v] : input_views(node, tensors)) {
    const Tensor source = tensors[k];
    const std::vector<int64_t> starts = {v.start}, ends = {v.start + v.length}, axes = {v.axis}, steps = {1};
    try {
      const auto dims = kernels::plan_slice(source.shape(), starts, ends, axes, steps);
      tensors[k] = context.allocate(source.dtype(), kernels::slice_output_shape(dims));
      kernels::LayoutPlan(context.kernels, kernels::LayoutProblem::slice(source.shape(), source.dtype(), dims,
                                                                           tensors[k].shape()))
          .record(context.recorder, std::span(&source, 1), std::span(&tensors[k], 1));
    } catch (const std::invalid_argument& e) {
      throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
    }
  }
  return tensors;
}

// The group with its viewed inputs read in place, in one dispatch; nullopt where a tensor exceeds
// one storage binding (the caller then copies the parts out).
std::optional<std::vector<Value>> fused_with_views(const Node& node, OpContext& context,
                                                   const std::vector<Tensor>& tensors, const FusedProgram& program,
                                                   FusedState& kept) {
  const std::map<size_t, InputView> views = input_views(node, tensors);
  const uint64_t limit = context.kernels.gpu.limits().maxStorageBufferBindingSize;
  const uint64_t slack = context.kernels.gpu.limits().minStorageBufferOffsetAlignment + 16;
  const uint64_t out_bytes = static_cast<uint64_t>(shape_numel(program.output_shape)) * device_element_size(program.output_dtype);
  if (out_bytes + slack > limit) return std::nullopt;
  for (const Tensor& t : tensors)
    if (t.device_bytes() + slack > limit) return std::nullopt;
  kernels::FusedElementwiseProblem problem =
      problem_of(program, {}, program.output_shape, rotated_inputs(node, tensors.size()));
  problem.view_sources.resize(tensors.size());
  problem.view_strides.resize(tensors.size());
  problem.view_offsets.assign(tensors.size(), 0);
  for (size_t k = 0; k < tensors.size(); ++k) {
    Shape shape = tensors[k].shape();
    if (const auto v = views.find(k); v != views.end()) {
      std::vector<int64_t> strides(shape.size(), 1);
      for (size_t d = shape.size() - 1; d-- > 0;) strides[d] = strides[d + 1] * shape[d + 1];
      problem.view_sources[k] = shape;
      problem.view_strides[k] = strides;
      problem.view_offsets[k] = v->second.start * strides[v->second.axis];
      shape[v->second.axis] = v->second.length;
    }
    problem.input_shapes.push_back(shape);
  }
  Value out;
  out.device = context.allocate(program.output_dtype, program.output_shape);
  try {
    const kernels::FusedElementwise& plan =
        kept.plans.find_or_plan(problem, [&] { return kernels::FusedElementwise(context.kernels, problem); });
    plan.record(context.recorder, tensors, out.device);
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return std::vector<Value>{out};
}

std::vector<Value> fused_elementwise(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Graph& body = node.attribute_graph(kFusedElementwiseBody);
  if (inputs.size() != body.inputs.size() || body.outputs.size() != 1)
    throw ModelError(
        fmt::format("{}: {} inputs for a body of {}", node.describe(), inputs.size(), body.inputs.size()));
  std::vector<DType> dtypes;
  std::vector<Tensor> tensors;
  for (const Value& v : inputs) {
    if (!v.defined()) throw ModelError(node.describe() + ": a required input is missing");
    dtypes.push_back(v.dtype());
    tensors.push_back(context.to_device(v));
  }
  std::shared_ptr<FusedState> kept;
  if (context.node_state) {
    if (!*context.node_state) *context.node_state = std::make_shared<FusedState>();
    kept = std::static_pointer_cast<FusedState>(*context.node_state);
  } else {
    kept = std::make_shared<FusedState>();
  }
  if (!kept->program || kept->program->input_dtypes != dtypes)
    kept->program = fused_program_of(node, body, dtypes);
  const FusedProgram& program = *kept->program;
  if (node.has_attribute(kInputViewsAttribute)) {
    if (std::optional<std::vector<Value>> out = fused_with_views(node, context, tensors, program, *kept))
      return *out;
    tensors = materialized_views(node, context, tensors);  // beyond one binding: the parts copied out
  }
  const std::vector<bool> rotated = rotated_inputs(node, inputs.size());
  Value out;
  out.device = context.allocate(program.output_dtype, program.output_shape);
  try {
    record_in_binding_slices(context, std::move(tensors), out.device,
                             [&](std::span<const Tensor> slices, const Tensor& out_slice) {
                               std::vector<Shape> shapes;
                               for (const Tensor& t : slices) shapes.push_back(t.shape());
                               const kernels::FusedElementwiseProblem problem =
                                   problem_of(program, std::move(shapes), out_slice.shape(), rotated);
                               const kernels::FusedElementwise& plan = kept->plans.find_or_plan(problem, [&] {
                                 return kernels::FusedElementwise(context.kernels, problem);
                               });
                               plan.record(context.recorder, slices, out_slice);
                             });
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return {out};
}

}  // namespace

FusedProgram fused_program_of(const Node& owner, const Graph& body, std::vector<DType> input_dtypes) {
  if (input_dtypes.size() != body.inputs.size() || body.outputs.size() != 1)
    throw ModelError(fmt::format("{}: {} inputs for a fused body of {}", owner.describe(),
                                 input_dtypes.size(), body.inputs.size()));
  return ProgramBuilder(owner, body, std::move(input_dtypes)).build();
}

kernels::FusedEpilogue fused_epilogue_of(const Node& node, DType value) {
  if (!node.has_attribute(kFusedEpilogueAttribute)) return {};
  const Graph& body = node.attribute_graph(kFusedEpilogueAttribute);
  // A second body input is a residual of the value's shape and dtype (graph/fuse_residual_add.h).
  const bool residual = body.inputs.size() == 2;
  FusedProgram program =
      fused_program_of(node, body, residual ? std::vector<DType>{value, value} : std::vector<DType>{value});
  return {std::move(program.constants), std::move(program.steps), residual};
}

void register_fused_elementwise_ops(std::vector<OpEntry>& ops) {
  ops.push_back({std::string(kOndaDomain), std::string(kFusedElementwiseOp), 0, fused_elementwise,
                 "internal: a group of elementwise nodes fused at plan time (one dispatch)"});
}

}  // namespace onda::ops
