// ONNX Unique: the distinct elements (or, with `axis`, the distinct slices along it), sorted or in
// order of first occurrence, with the first-occurrence indices, each element's index into the
// result and the counts. Every output's size depends on the values, and finding them is a sort:
// the input is read back (ops::OpContext::read_back, the runtime's mid-run read-back) and Unique is
// computed on the host, exactly as numpy.unique (ONNX's reference) does; its outputs are small host
// values that a later GPU op uploads. Exporters use Unique on labels and token ids, not on signals.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "graph/model_error.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

// The input as items (elements, or slices along an axis), compared lexicographically.
struct Items {
  int64_t count = 0, outer = 1, inner = 1;  // items along the axis; the axis splits the rest in two
  bool integer = false;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  int compare(int64_t a, int64_t b) const {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t pa = (o * count + a) * inner + i, pb = (o * count + b) * inner + i;
        if (integer ? ints[pa] != ints[pb] : reals[pa] != reals[pb])
          return (integer ? ints[pa] < ints[pb] : reals[pa] < reals[pb]) ? -1 : 1;
      }
    return 0;
  }
};

std::vector<Value> unique(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& input = input_or_empty(inputs, 0);
  if (!input.defined() || input.is_sequence()) throw ModelError(node.describe() + ": needs a tensor input");
  if (!input.on_host() && !context.read_back)
    throw ModelError(node.describe() + ": its input lives on the GPU and this context cannot read it back");
  const HostTensor x = input.on_host() ? input.host : context.read_back(input);
  const bool flatten = !node.has_attribute("axis");
  const Shape& shape = x.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (!flatten && rank == 0) throw ModelError(node.describe() + ": an axis is given for a scalar input");
  const int64_t axis = flatten ? 0 : normalize_axis(node, node.attribute_int("axis"), rank);
  Items items;
  items.integer = !is_float(x.dtype());
  if (items.integer)
    items.ints = x.to_int64();
  else
    items.reals = x.to_double();
  if (flatten) {
    items.count = x.numel();
  } else {
    items.count = shape[axis];
    for (int64_t d = 0; d < axis; ++d) items.outer *= shape[d];
    for (int64_t d = axis + 1; d < rank; ++d) items.inner *= shape[d];
  }

  // Stable sort: each run of equal items starts with its first occurrence.
  std::vector<int64_t> order(items.count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return items.compare(a, b) < 0; });
  std::vector<int64_t> first, counts, inverse(items.count);
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || items.compare(order[k - 1], order[k]) != 0) {
      first.push_back(order[k]);
      counts.push_back(0);
    }
    inverse[order[k]] = static_cast<int64_t>(first.size()) - 1;
    ++counts.back();
  }
  if (node.attribute_int("sorted", 1) == 0) {  // in order of first occurrence
    std::vector<int64_t> by_occurrence(first.size());
    std::iota(by_occurrence.begin(), by_occurrence.end(), 0);
    std::sort(by_occurrence.begin(), by_occurrence.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    std::vector<int64_t> position(first.size()), new_first, new_counts;
    for (size_t k = 0; k < by_occurrence.size(); ++k) {
      position[by_occurrence[k]] = static_cast<int64_t>(k);
      new_first.push_back(first[by_occurrence[k]]);
      new_counts.push_back(counts[by_occurrence[k]]);
    }
    for (int64_t& v : inverse) v = position[v];
    first = std::move(new_first);
    counts = std::move(new_counts);
  }

  const int64_t distinct = static_cast<int64_t>(first.size());
  Shape y_shape = flatten ? Shape{distinct} : shape;
  if (!flatten) y_shape[axis] = distinct;
  std::vector<int64_t> y_ints;
  std::vector<double> y_reals;
  for (int64_t o = 0; o < items.outer; ++o)
    for (int64_t f : first)
      for (int64_t i = 0; i < items.inner; ++i) {
        const int64_t at = (o * items.count + f) * items.inner + i;
        if (items.integer)
          y_ints.push_back(items.ints[at]);
        else
          y_reals.push_back(items.reals[at]);
      }
  Value y{.host = items.integer ? HostTensor::from_int64(x.dtype(), y_shape, y_ints)
                                : HostTensor::from_double(x.dtype(), y_shape, y_reals)};
  return {y, Value{.host = HostTensor::from_values<int64_t>({distinct}, first)},
          Value{.host = HostTensor::from_values<int64_t>({items.count}, inverse)},
          Value{.host = HostTensor::from_values<int64_t>({distinct}, counts)}};
}

}  // namespace

void register_unique_ops(std::vector<OpEntry>& ops) {
  ops.push_back(
      {"", "Unique", 11, unique,
       "input read back mid-run, numpy.unique on the host (sorted or by first occurrence, with axis)"});
}

}  // namespace onda::ops
