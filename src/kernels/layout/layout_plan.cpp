#include "kernels/layout/layout_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/common/binding_window.h"
#include "kernels/layout/expand_tile.h"

namespace onda::kernels {
namespace {

const char* op_name(LayoutOp op) {
  switch (op) {
    case LayoutOp::Transpose:
      return "Transpose";
    case LayoutOp::Slice:
      return "Slice";
    case LayoutOp::Concat:
      return "Concat";
    case LayoutOp::Split:
      return "Split";
    case LayoutOp::Expand:
      return "Expand";
    case LayoutOp::Tile:
      return "Tile";
    case LayoutOp::Pad:
      return "Pad";
  }
  return "layout";
}

std::vector<SliceDim> slice_dims(const std::vector<int64_t>& params) {
  std::vector<SliceDim> dims;
  for (size_t i = 0; i + 3 <= params.size(); i += 3) {
    dims.push_back({params[i], params[i + 1], params[i + 2]});
  }
  return dims;
}

}  // namespace

LayoutProblem LayoutProblem::transpose(const Shape& input, DType dtype, std::span<const int64_t> perm,
                                       const Shape& output) {
  return {LayoutOp::Transpose, dtype, {input}, {output}, {perm.begin(), perm.end()}};
}

LayoutProblem LayoutProblem::slice(const Shape& input, DType dtype, std::span<const SliceDim> dims,
                                   const Shape& output) {
  LayoutProblem p{LayoutOp::Slice, dtype, {input}, {output}, {}};
  for (const SliceDim& d : dims) p.params.insert(p.params.end(), {d.start, d.step, d.size});
  return p;
}

LayoutProblem LayoutProblem::concat(std::span<const Shape> inputs, DType dtype, int64_t axis,
                                    const Shape& output) {
  return {LayoutOp::Concat, dtype, {inputs.begin(), inputs.end()}, {output}, {axis}};
}

LayoutProblem LayoutProblem::split(const Shape& input, DType dtype, int64_t axis,
                                   std::span<const Shape> outputs) {
  return {LayoutOp::Split, dtype, {input}, {outputs.begin(), outputs.end()}, {axis}};
}

LayoutProblem LayoutProblem::expand(const Shape& input, DType dtype, const Shape& output) {
  return {LayoutOp::Expand, dtype, {input}, {output}, {}};
}

LayoutProblem LayoutProblem::tile(const Shape& input, DType dtype, std::span<const int64_t> repeats,
                                  const Shape& output) {
  return {LayoutOp::Tile, dtype, {input}, {output}, {repeats.begin(), repeats.end()}};
}

LayoutProblem LayoutProblem::pad(const Shape& input, DType dtype, std::span<const int64_t> pads, PadMode mode,
                                 double value, const Shape& output) {
  return {LayoutOp::Pad, dtype, {input}, {output}, {pads.begin(), pads.end()}, mode, value};
}

LayoutPlan::LayoutPlan(const KernelContext& kc, LayoutProblem problem)
    : kc_(kc), problem_(std::move(problem)) {
  const size_t inputs = problem_.op == LayoutOp::Concat ? problem_.inputs.size() : 1;
  const size_t outputs = problem_.op == LayoutOp::Split ? problem_.outputs.size() : 1;
  if (problem_.inputs.size() != inputs || problem_.outputs.size() != outputs) {
    throw std::invalid_argument(fmt::format("{}: {} inputs and {} outputs", op_name(problem_.op),
                                            problem_.inputs.size(), problem_.outputs.size()));
  }
  plan_steps();
}

void LayoutPlan::plan_steps() {
  const LayoutProblem& p = problem_;
  const std::string name = op_name(p.op);
  auto one = [&](IndexMap map) {
    steps_.push_back({0, 0, IndexMapKernel(kc_, std::move(map), p.dtype, name)});
  };
  switch (p.op) {
    case LayoutOp::Transpose: {
      TransposePlan t = plan_transpose(kc_, p.inputs[0], p.dtype, p.params, p.outputs[0]);
      if (t.map) steps_.push_back({0, 0, std::move(*t.map)});
      if (t.tiled) tiled_.emplace(std::move(*t.tiled));
      return;
    }
    case LayoutOp::Slice:
      return one(slice_map(p.inputs[0], slice_dims(p.params), p.outputs[0]));
    case LayoutOp::Expand:
      return one(expand_map(p.inputs[0], p.outputs[0]));
    case LayoutOp::Tile:
      return one(tile_map(p.inputs[0], p.params, p.outputs[0]));
    case LayoutOp::Pad:
      return one(pad_map(p.inputs[0], p.dtype, p.params, p.pad_mode, p.pad_value, p.outputs[0]));
    case LayoutOp::Concat: {
      if (auto blocks = ConcatBlocks::plan(kc_, p.inputs, p.dtype, p.params.at(0))) blocks_.emplace(std::move(*blocks));
      std::vector<IndexMap> maps = concat_maps(p.inputs, p.params.at(0), p.outputs[0]);
      for (size_t k = 0; k < maps.size(); ++k) {
        steps_.push_back({k, 0, IndexMapKernel(kc_, std::move(maps[k]), p.dtype, name)});
      }
      return;
    }
    case LayoutOp::Split: {
      std::vector<IndexMap> maps = split_maps(p.inputs[0], p.params.at(0), p.outputs);
      for (size_t k = 0; k < maps.size(); ++k) {
        steps_.push_back({0, k, IndexMapKernel(kc_, std::move(maps[k]), p.dtype, name)});
      }
      return;
    }
  }
}

void LayoutPlan::check_tensors(std::span<const Tensor> inputs, std::span<const Tensor> outputs) const {
  const char* name = op_name(problem_.op);
  if (inputs.size() != problem_.inputs.size() || outputs.size() != problem_.outputs.size()) {
    throw std::invalid_argument(fmt::format("{}: {} inputs and {} outputs, planned for {} and {}", name,
                                            inputs.size(), outputs.size(), problem_.inputs.size(),
                                            problem_.outputs.size()));
  }
  auto check = [&](const char* role, size_t k, const Tensor& t, const Shape& planned) {
    if (t.shape() != planned || t.dtype() != problem_.dtype) {
      throw std::invalid_argument(fmt::format("{}: {} {} is {} {}, planned for {} {}", name, role, k,
                                              dtype_name(t.dtype()), shape_string(t.shape()),
                                              dtype_name(problem_.dtype), shape_string(planned)));
    }
  };
  for (size_t k = 0; k < inputs.size(); ++k) check("input", k, inputs[k], problem_.inputs[k]);
  for (size_t k = 0; k < outputs.size(); ++k) check("output", k, outputs[k], problem_.outputs[k]);
}

void LayoutPlan::record(gpu::CommandRecorder& recorder, std::span<const Tensor> inputs,
                        std::span<const Tensor> outputs) const {
  check_tensors(inputs, outputs);
  if (tiled_ && fits_one_binding(kc_.gpu, inputs[0]) && fits_one_binding(kc_.gpu, outputs[0])) {
    tiled_->record(recorder, inputs[0], outputs[0]);
    return;
  }
  if (blocks_ && fits_one_binding(kc_.gpu, outputs[0]) &&
      std::all_of(inputs.begin(), inputs.end(), [&](const Tensor& t) { return fits_one_binding(kc_.gpu, t); })) {
    blocks_->record(recorder, inputs, outputs[0]);
    return;
  }
  for (const Step& step : steps_) step.map.record(recorder, inputs[step.input], outputs[step.output]);
}

}  // namespace onda::kernels
