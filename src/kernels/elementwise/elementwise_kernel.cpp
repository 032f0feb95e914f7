#include "kernels/elementwise/elementwise_kernel.h"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr int kMaxRank = 8;
constexpr uint32_t kWorkgroupSize = 256;
constexpr uint32_t kElementsPerThread = 4;

// Mirrors `Params` in elementwise.wgsl.
struct ElementwiseUniforms {
  uint32_t count, rank, out_offset, pad;
  uint32_t out_shape[kMaxRank];
  uint32_t in_offset[4];
  uint32_t in_strides[3][kMaxRank];
  float scalars[4];
};

std::string cast_expression(DType from, DType to) {
  const std::string in = elementwise_compute_type(from);
  if (to == DType::boolean) {
    return in == "f32"   ? "select(0u, 1u, a != 0.0)"
           : in == "i32" ? "select(0u, 1u, a != 0)"
                         : "select(0u, 1u, a != 0u)";
  }
  if (to == DType::u8) {
    return in == "f32" ? "u32(clamp(a, 0.0, 255.0))" : in == "i32" ? "u32(a) & 255u" : "a & 255u";
  }
  const std::string out = elementwise_compute_type(to);
  return out == in ? "a" : fmt::format("{}(a)", out);
}

uint32_t alignment_of_offset(uint32_t offset) {
  return offset % 4 == 0 ? 4 : offset % 2 == 0 ? 2 : 1;
}

}  // namespace

// The compute type of a storage dtype: f16 unpacks to f32; i64 is stored as i32; u8/bool as u32.
std::string elementwise_compute_type(DType t) {
  if (is_float(t)) return "f32";
  if (t == DType::i32 || t == DType::i64) return "i32";
  return "u32";
}

std::string elementwise_expression(ElementwiseOp id, std::span<const DType> inputs, DType out) {
  const ElementwiseDefinition& op = elementwise_definition(id);
  if (op.kind == ElementwiseKind::Cast) return cast_expression(inputs[0], out);
  if (op.kind == ElementwiseKind::Numeric || op.kind == ElementwiseKind::Compare) {
    if (elementwise_compute_type(inputs[0]) == "i32") return op.integer_expr;
    if (inputs[0] == DType::u8) return op.unsigned_expr;
  }
  return op.float_expr;
}

std::string render_elementwise_input(size_t k, DType dtype, BroadcastMode mode, uint32_t alignment) {
  const std::string ct = elementwise_compute_type(dtype);
  const bool f16 = dtype == DType::f16;
  const bool same = mode == BroadcastMode::Same;
  const bool rows = mode == BroadcastMode::Rows;
  const bool vec4 = !f16 && (same || rows) && alignment == 4;
  const TemplateValues values = {
      {"IN", fmt::format("in{}", k)},
      {"INDEX", std::to_string(k)},
      {"BINDING", std::to_string(k)},
      {"CT", ct},
      {"STORAGE", f16    ? "u32"
                  : vec4 ? fmt::format("vec4<{}>", ct)
                         : ct},
      {"MODE_SAME", same ? "1" : "0"},
      {"MODE_SCALAR", mode == BroadcastMode::Scalar ? "1" : "0"},
      {"MODE_BROADCAST", mode == BroadcastMode::Strided ? "1" : "0"},
      {"MODE_ROWS", rows ? "1" : "0"},
      {"VEC4", vec4 ? "1" : "0"},
      {"F16", f16 ? "1" : "0"},
      {"F16_PAIRS", f16 && same && alignment % 2 == 0 ? "1" : "0"},
  };
  return render_shader("elementwise/input.wgsl", values);
}

ElementwiseProblem ElementwiseProblem::of(ElementwiseOp op, std::span<const Tensor> inputs,
                                          const ElementwiseAttributes& attributes) {
  ElementwiseProblem p;
  p.op = op;
  p.attributes = attributes;
  for (const auto& t : inputs) {
    p.input_shapes.push_back(t.shape());
    p.input_dtypes.push_back(t.dtype());
  }
  return p;
}

Elementwise::Elementwise(const KernelContext& kc, ElementwiseProblem problem)
    : kc_(kc), problem_(std::move(problem)) {
  const std::string name(elementwise_op_name(problem_.op));
  out_dtype_ = elementwise_result_dtype(problem_.op, problem_.input_dtypes, problem_.attributes);
  out_shape_ = broadcast_shape(problem_.input_shapes);
  count_ = element_count(out_shape_);
  if (count_ == 0) return;
  if (count_ > int64_t{0xFFFFFFFF} - 4) throw std::invalid_argument(name + ": more than 2^32 elements");
  layout_ = plan_broadcast(problem_.input_shapes, out_shape_);
  if (layout_.out_dims.size() > kMaxRank) throw std::invalid_argument(name + ": more than 8 broadcast dims");
}

void Elementwise::check_tensors(std::span<const Tensor> inputs, const Tensor& output) const {
  const std::string_view name = elementwise_op_name(problem_.op);
  bool inputs_match = inputs.size() == problem_.input_shapes.size();
  for (size_t k = 0; inputs_match && k < inputs.size(); ++k) {
    inputs_match =
        inputs[k].shape() == problem_.input_shapes[k] && inputs[k].dtype() == problem_.input_dtypes[k];
  }
  if (!inputs_match)
    throw std::invalid_argument(fmt::format("{}: inputs differ from the planned problem", name));
  if (output.dtype() != out_dtype_ || output.shape() != out_shape_) {
    throw std::invalid_argument(fmt::format("{}: output must be {} {}, got {} {}", name,
                                            dtype_name(out_dtype_), shape_string(out_shape_),
                                            dtype_name(output.dtype()), shape_string(output.shape())));
  }
}

Elementwise::Alignment Elementwise::alignment_of(std::span<const Tensor> inputs, uint32_t out_offset) const {
  Alignment a;
  a.out_vec4 = out_dtype_ != DType::f16 && out_offset % 4 == 0 && count_ % 4 == 0;
  for (size_t k = 0; k < inputs.size(); ++k)
    a.in_alignment[k] = alignment_of_offset(inputs[k].element_offset(kc_.gpu));
  return a;
}

std::string Elementwise::render_wgsl(const Alignment& alignment) const {
  const size_t arity = problem_.input_dtypes.size();
  std::string input_functions;
  std::vector<std::string> cts;
  for (size_t k = 0; k < arity; ++k) {
    input_functions +=
        render_elementwise_input(k, problem_.input_dtypes[k], layout_.modes[k], alignment.in_alignment[k]);
    cts.push_back(elementwise_compute_type(problem_.input_dtypes[k]));
  }
  const std::string out_ct = elementwise_compute_type(out_dtype_);
  const bool out_f16 = out_dtype_ == DType::f16;
  const TemplateValues values = {
      {"PARAMS_BINDING", std::to_string(arity + 1)},
      {"OUT_BINDING", std::to_string(arity)},
      {"INPUT_FUNCTIONS", input_functions},
      {"OP_FUNCTIONS", std::string(shader_text("elementwise/math.wgsl"))},
      {"OUT_CT", out_ct},
      {"OUT_STORAGE", out_f16              ? "u32"
                      : alignment.out_vec4 ? fmt::format("vec4<{}>", out_ct)
                                           : out_ct},
      {"OUT_VEC4", alignment.out_vec4 ? "1" : "0"},
      {"OUT_F16", out_f16 ? "1" : "0"},
      {"CT0", cts[0]},
      {"CT1", arity >= 2 ? cts[1] : cts[0]},
      {"CT2", arity >= 3 ? cts[2] : cts[0]},
      {"ARITY2", arity >= 2 ? "1" : "0"},
      {"ARITY3", arity >= 3 ? "1" : "0"},
      {"EXPR", elementwise_expression(problem_.op, problem_.input_dtypes, out_dtype_)},
  };
  return render_shader("elementwise/elementwise.wgsl", values);
}

const wgpu::ComputePipeline& Elementwise::pipeline_for(const Alignment& alignment) const {
  for (const auto& [known, pipeline] : pipelines_) {
    if (known == alignment) return *pipeline;
  }
  // The shader depends on the op, the dtypes and each operand's access mode only.
  const std::string name(elementwise_op_name(problem_.op));
  gpu::PipelineKey key{"elementwise/elementwise.wgsl", {{"op", name}}};
  key.values["out"] = std::string(alignment.out_vec4 ? "v" : "s") + std::string(dtype_name(out_dtype_));
  for (size_t k = 0; k < problem_.input_dtypes.size(); ++k) {
    std::string mode(dtype_name(problem_.input_dtypes[k]));
    mode += static_cast<char>('0' + static_cast<int>(layout_.modes[k]));
    mode += static_cast<char>('0' + alignment.in_alignment[k]);
    key.values["in" + std::to_string(k)] = std::move(mode);
  }
  const auto& pipeline = kc_.pipelines.get(
      key, [&] { return render_wgsl(alignment); }, "elementwise " + name);
  pipelines_.emplace_back(alignment, &pipeline);
  return pipeline;
}

void Elementwise::record(gpu::CommandRecorder& recorder, std::span<const Tensor> inputs,
                         const Tensor& output) const {
  check_tensors(inputs, output);
  if (count_ == 0) return;
  const std::string name(elementwise_op_name(problem_.op));
  ElementwiseUniforms u{};
  u.count = static_cast<uint32_t>(count_);
  u.rank = static_cast<uint32_t>(layout_.out_dims.size());
  u.out_offset = output.element_offset(kc_.gpu);
  for (size_t d = 0; d < layout_.out_dims.size(); ++d)
    u.out_shape[d] = static_cast<uint32_t>(layout_.out_dims[d]);
  u.scalars[0] = problem_.attributes.alpha;
  u.scalars[1] = problem_.attributes.beta;
  u.scalars[2] = problem_.attributes.gamma;
  if (out_dtype_ == DType::f16 && u.out_offset % 2 != 0) {
    throw std::invalid_argument(name + ": float16 output must start at an even element");
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    u.in_offset[k] = inputs[k].element_offset(kc_.gpu);
    for (size_t d = 0; d < layout_.strides[k].size(); ++d) {
      u.in_strides[k][d] = static_cast<uint32_t>(layout_.strides[k][d]);
    }
  }
  const auto& pipeline = pipeline_for(alignment_of(inputs, u.out_offset));

  std::vector<gpu::BufferBinding> bindings;
  for (const auto& t : inputs) bindings.push_back(t.binding(kc_.gpu));
  bindings.push_back(output.binding(kc_.gpu));
  const uint64_t threads = (static_cast<uint64_t>(count_) + kElementsPerThread - 1) / kElementsPerThread;
  const auto workgroups =
      gpu::split_workgroups((threads + kWorkgroupSize - 1) / kWorkgroupSize, kc_.gpu.limits());
  recorder.dispatch(pipeline, bindings, &u, sizeof(u), workgroups, name);
}

void record_elementwise(const KernelContext& kc, gpu::CommandRecorder& recorder, ElementwiseOp op,
                        std::span<const Tensor> inputs, const Tensor& output,
                        const ElementwiseAttributes& attributes) {
  Elementwise(kc, ElementwiseProblem::of(op, inputs, attributes)).record(recorder, inputs, output);
}

}  // namespace onda::kernels
