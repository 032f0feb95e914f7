// ONNX sequences: lists of tensors (Value::sequence), each element on the host or the GPU as it
// came. The list operations (construct, at, insert, erase, length) move no data; SplitToSequence and
// ConcatFromSequence are Split and Concat (host ops when every input is a host value, so a static
// sequence folds like shape arithmetic). Optional, OptionalHasElement and OptionalGetElement treat
// an empty optional as an undefined value (what an omitted input is).
#include <fmt/format.h>

#include "graph/host_ops.h"
#include "graph/model_error.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"
#include "ops/value_view.h"

namespace onda::ops {
namespace {

using Values = std::vector<Value>;

const Values& elements_of(const Node& node, const Value& v) {
  if (!v.is_sequence())
    throw ModelError(fmt::format("{}: input '{}' must be a sequence", node.describe(), node.inputs.at(0)));
  return *v.sequence;
}

Value sequence_of(Values elements) {
  Value v;
  v.sequence = std::make_shared<const Values>(std::move(elements));
  return v;
}

Value host_int64(int64_t value) {
  return Value{.host = HostTensor::from_values<int64_t>({}, {value})};
}

// A position input (one integer, known on the host) checked against [-count, count - 1], or
// [-count, count] where the end itself is allowed (SequenceInsert); made non-negative.
int64_t position_of(const Node& node, const Value& v, int64_t count, bool end_allowed) {
  const std::vector<int64_t> position = constant_ints(node, v, "position");
  if (position.size() != 1)
    throw ModelError(fmt::format("{}: position must be a single integer, it has {} elements", node.describe(),
                                 position.size()));
  const int64_t p = position[0];
  const int64_t last = end_allowed ? count : count - 1;
  if (p < -count || p > last)
    throw ModelError(fmt::format("{}: position {} is out of range for a sequence of {} tensors",
                                 node.describe(), p, count));
  return p < 0 ? p + count : p;
}

// Runs a plain op: its host implementation when every input is a host value, its GPU op otherwise.
Values run_plain(const Node& node, OpContext& context, const Values& args) {
  bool all_host = true;
  for (const Value& a : args) all_host = all_host && !a.device.defined();
  if (all_host) {
    if (HostOp host_op = find_host_op(node.op_type)) {
      std::vector<HostTensor> host_args;
      for (const Value& a : args) host_args.push_back(a.host);
      Values results;
      for (HostTensor& t : host_op(node, host_args)) results.push_back(Value{.host = std::move(t)});
      return results;
    }
  }
  const OpEntry* entry = find_op("", node.op_type, context.opset);
  if (!entry) throw ModelError(fmt::format("{}: no implementation of {}", node.describe(), node.op_type));
  return entry->record(node, context, args);
}

Node helper_node(const Node& owner, const char* op_type, size_t inputs, size_t outputs,
                 std::vector<Attribute> attributes) {
  Node node;
  node.op_type = op_type;
  node.name = owner.name.empty() ? owner.describe() : owner.name;
  for (size_t i = 0; i < inputs; ++i) node.inputs.push_back(fmt::format("in{}", i));
  for (size_t i = 0; i < outputs; ++i) node.outputs.push_back(fmt::format("out{}", i));
  node.attributes = std::move(attributes);
  return node;
}

Values sequence_construct(const Node& node, OpContext&, const Values& inputs) {
  for (const Value& v : inputs)
    if (!v.defined() || v.is_sequence() || v.dtype() != inputs[0].dtype())
      throw ModelError(fmt::format("{}: every input must be a tensor of one element type", node.describe()));
  return {sequence_of(inputs)};
}

Values sequence_empty(const Node&, OpContext&, const Values&) {
  return {sequence_of({})};
}

Values sequence_at(const Node& node, OpContext&, const Values& inputs) {
  const Values& elements = elements_of(node, inputs.at(0));
  const int64_t count = static_cast<int64_t>(elements.size());
  return {elements[position_of(node, input_or_empty(inputs, 1), count, false)]};
}

Values sequence_insert(const Node& node, OpContext&, const Values& inputs) {
  Values elements = elements_of(node, inputs.at(0));
  const Value& tensor = input_or_empty(inputs, 1);
  if (!tensor.defined() || tensor.is_sequence())
    throw ModelError(fmt::format("{}: the inserted value must be a tensor", node.describe()));
  if (!elements.empty() && elements[0].dtype() != tensor.dtype())
    throw ModelError(fmt::format("{}: inserting {} into a sequence of {}", node.describe(),
                                 dtype_name(tensor.dtype()), dtype_name(elements[0].dtype())));
  const int64_t count = static_cast<int64_t>(elements.size());
  const Value& position = input_or_empty(inputs, 2);
  const int64_t at = position.defined() ? position_of(node, position, count, true) : count;
  elements.insert(elements.begin() + at, tensor);
  return {sequence_of(std::move(elements))};
}

Values sequence_erase(const Node& node, OpContext&, const Values& inputs) {
  Values elements = elements_of(node, inputs.at(0));
  const int64_t count = static_cast<int64_t>(elements.size());
  const Value& position = input_or_empty(inputs, 1);
  if (count == 0) throw ModelError(fmt::format("{}: erasing from an empty sequence", node.describe()));
  const int64_t at = position.defined() ? position_of(node, position, count, false) : count - 1;
  elements.erase(elements.begin() + at);
  return {sequence_of(std::move(elements))};
}

Values sequence_length(const Node& node, OpContext&, const Values& inputs) {
  return {host_int64(static_cast<int64_t>(elements_of(node, inputs.at(0)).size()))};
}

Values split_to_sequence(const Node& node, OpContext& context, const Values& inputs) {
  const Value& x = inputs.at(0);
  if (!x.defined() || x.is_sequence())
    throw ModelError(fmt::format("{}: input must be a tensor", node.describe()));
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  const int64_t axis = normalize_axis(node, node.attribute_int("axis", 0), rank);
  const int64_t length = x.shape()[axis];
  const Value& split = input_or_empty(inputs, 1);
  std::vector<int64_t> sizes;
  if (!split.defined()) {
    sizes.assign(length, 1);
  } else {
    sizes = constant_ints(node, split, "split");
    if (split.shape().empty()) {  // a scalar: chunks of that size, the last one shorter
      const int64_t each = sizes[0];
      if (each <= 0) throw ModelError(fmt::format("{}: split {} must be positive", node.describe(), each));
      sizes.clear();
      for (int64_t begin = 0; begin < length; begin += each) sizes.push_back(std::min(each, length - begin));
    }
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw ModelError(fmt::format("{}: negative split size {}", node.describe(), s));
    total += s;
  }
  if (total != length)
    throw ModelError(
        fmt::format("{}: split sizes add up to {}, the axis has {}", node.describe(), total, length));
  if (sizes.empty()) return {sequence_of({})};
  const Node split_node = helper_node(node, "Split", 2, sizes.size(), {{"axis", axis}});
  const Value split_sizes{.host =
                              HostTensor::from_values<int64_t>({static_cast<int64_t>(sizes.size())}, sizes)};
  const int64_t saved_opset = context.opset;
  context.opset = 13;
  Values parts = run_plain(split_node, context, {x, split_sizes});
  context.opset = saved_opset;
  // keepdims = 0 drops the split axis, only where no split was given (every part has length 1).
  if (!split.defined() && node.attribute_int("keepdims", 1) == 0) {
    for (Value& part : parts) {
      Shape shape = part.shape();
      shape.erase(shape.begin() + axis);
      part = reshaped_view(part, shape);
    }
  }
  return {sequence_of(std::move(parts))};
}

Values concat_from_sequence(const Node& node, OpContext& context, const Values& inputs) {
  Values elements = elements_of(node, inputs.at(0));
  if (elements.empty()) throw ModelError(fmt::format("{}: the sequence is empty", node.describe()));
  const bool new_axis = node.attribute_int("new_axis", 0) != 0;
  const int64_t rank = static_cast<int64_t>(elements[0].shape().size()) + (new_axis ? 1 : 0);
  const int64_t axis = normalize_axis(node, node.attribute_int("axis"), rank);
  if (new_axis) {
    for (Value& element : elements) {
      Shape shape = element.shape();
      if (static_cast<int64_t>(shape.size()) + 1 != rank)
        throw ModelError(fmt::format("{}: the sequence's tensors differ in rank", node.describe()));
      shape.insert(shape.begin() + axis, 1);
      element = reshaped_view(element, shape);
    }
  }
  if (elements.size() == 1) return {elements[0]};
  const Node concat = helper_node(node, "Concat", elements.size(), 1, {{"axis", axis}});
  const int64_t saved_opset = context.opset;
  context.opset = 13;
  Values result = run_plain(concat, context, elements);
  context.opset = saved_opset;
  return result;
}

// (An empty Optional names its type in a TYPE_PROTO attribute, which the loader refuses.)
Values optional_op(const Node&, OpContext&, const Values& inputs) {
  return {inputs.empty() ? Value{} : inputs[0]};
}

Values optional_has_element(const Node&, OpContext&, const Values& inputs) {
  const bool has = !inputs.empty() && inputs[0].defined();
  return {Value{.host = HostTensor::from_int64(DType::boolean, {}, {has ? 1 : 0})}};
}

Values optional_get_element(const Node& node, OpContext&, const Values& inputs) {
  if (inputs.empty() || !inputs[0].defined())
    throw ModelError(fmt::format("{}: the optional is empty", node.describe()));
  return {inputs[0]};
}

}  // namespace

void register_sequence_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "SequenceConstruct", 11, sequence_construct, "a list of the input tensors, no copy"});
  ops.push_back({"", "SequenceEmpty", 11, sequence_empty, ""});
  ops.push_back({"", "SequenceAt", 11, sequence_at, "position known on the host"});
  ops.push_back({"", "SequenceInsert", 11, sequence_insert, "position known on the host"});
  ops.push_back({"", "SequenceErase", 11, sequence_erase, "position known on the host"});
  ops.push_back({"", "SequenceLength", 11, sequence_length, "a host value"});
  ops.push_back({"", "SplitToSequence", 11, split_to_sequence, "Split; split sizes known on the host"});
  ops.push_back(
      {"", "ConcatFromSequence", 11, concat_from_sequence, "Concat (Unsqueeze views for new_axis)"});
  ops.push_back({"", "Optional", 15, optional_op, "an empty optional is an undefined value"});
  ops.push_back({"", "OptionalHasElement", 15, optional_has_element, "a host value"});
  ops.push_back({"", "OptionalGetElement", 15, optional_get_element, ""});
}

}  // namespace onda::ops
