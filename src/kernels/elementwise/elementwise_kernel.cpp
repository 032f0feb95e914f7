#include "kernels/elementwise/elementwise_kernel.h"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "kernels/elementwise/broadcast.h"
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

// The compute type of a storage dtype: f16 unpacks to f32; i64 is stored as i32; u8/bool as u32.
std::string compute_type(DType t) {
  if (is_float(t)) return "f32";
  if (t == DType::i32 || t == DType::i64) return "i32";
  return "u32";
}

std::string cast_expression(DType from, DType to) {
  const std::string in = compute_type(from);
  if (to == DType::boolean) {
    return in == "f32" ? "select(0u, 1u, a != 0.0)" : in == "i32" ? "select(0u, 1u, a != 0)" : "select(0u, 1u, a != 0u)";
  }
  if (to == DType::u8) {
    return in == "f32" ? "u32(clamp(a, 0.0, 255.0))" : in == "i32" ? "u32(a) & 255u" : "a & 255u";
  }
  const std::string out = compute_type(to);
  return out == in ? "a" : fmt::format("{}(a)", out);
}

std::string expression(const ElementwiseOp& op, std::span<const DType> inputs, DType out) {
  if (op.kind == ElementwiseKind::Cast) return cast_expression(inputs[0], out);
  if (op.kind == ElementwiseKind::Numeric || op.kind == ElementwiseKind::Compare) {
    if (compute_type(inputs[0]) == "i32") return op.integer_expr;
    if (inputs[0] == DType::u8) return op.unsigned_expr;
  }
  return op.float_expr;
}

}  // namespace

void record_elementwise(const KernelContext& kc, gpu::CommandRecorder& recorder, const ElementwiseOp& op,
                        std::span<const Tensor> inputs, const Tensor& output, const ElementwiseAttributes& attributes) {
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  for (const auto& t : inputs) {
    dtypes.push_back(t.dtype());
    shapes.push_back(t.shape());
  }
  const DType out_dtype = elementwise_result_dtype(op, dtypes, attributes);
  const Shape out_shape = broadcast_shape(shapes);
  if (output.dtype() != out_dtype || output.shape() != out_shape) {
    throw std::invalid_argument(fmt::format("{}: output must be {} {}, got {} {}", op.name, dtype_name(out_dtype),
                                            shape_string(out_shape), dtype_name(output.dtype()),
                                            shape_string(output.shape())));
  }
  const int64_t count = output.numel();
  if (count == 0) return;
  if (count > int64_t{0xFFFFFFFF} - 4) throw std::invalid_argument(op.name + ": more than 2^32 elements");

  const BroadcastLayout layout = plan_broadcast(shapes, out_shape);
  if (layout.out_dims.size() > kMaxRank) throw std::invalid_argument(op.name + ": more than 8 broadcast dims");

  ElementwiseUniforms u{};
  u.count = static_cast<uint32_t>(count);
  u.rank = static_cast<uint32_t>(layout.out_dims.size());
  u.out_offset = output.element_offset(kc.gpu);
  for (size_t d = 0; d < layout.out_dims.size(); ++d) u.out_shape[d] = static_cast<uint32_t>(layout.out_dims[d]);
  u.scalars[0] = attributes.alpha;
  u.scalars[1] = attributes.beta;
  u.scalars[2] = attributes.gamma;

  const bool out_f16 = out_dtype == DType::f16;
  if (out_f16 && u.out_offset % 2 != 0) throw std::invalid_argument(op.name + ": float16 output must start at an even element");
  const bool out_vec4 = !out_f16 && u.out_offset % 4 == 0 && count % 4 == 0;
  // The shader depends on the op, the dtypes and each operand's access mode only.
  gpu::PipelineKey key{"elementwise/elementwise.wgsl", {{"op", op.name}}};
  key.values["out"] = std::string(out_vec4 ? "v" : "s") + std::string(dtype_name(out_dtype));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    const uint32_t offset = t.element_offset(kc.gpu);
    u.in_offset[k] = offset;
    for (size_t d = 0; d < layout.strides[k].size(); ++d) u.in_strides[k][d] = static_cast<uint32_t>(layout.strides[k][d]);
    std::string mode(dtype_name(t.dtype()));
    mode += static_cast<char>('0' + static_cast<int>(layout.modes[k]));
    mode += offset % 4 == 0 ? '4' : offset % 2 == 0 ? '2' : '1';
    key.values["in" + std::to_string(k)] = std::move(mode);
  }
  const auto& pipeline = kc.pipelines.get(
      key,
      [&] {
        std::string input_functions;
        std::vector<std::string> cts;
        for (size_t k = 0; k < inputs.size(); ++k) {
          const Tensor& t = inputs[k];
          const uint32_t offset = u.in_offset[k];
          const std::string ct = compute_type(t.dtype());
          cts.push_back(ct);
          const bool f16 = t.dtype() == DType::f16;
          const bool same = layout.modes[k] == BroadcastMode::Same;
          const bool vec4 = !f16 && same && offset % 4 == 0;
          TemplateValues values = {
              {"IN", fmt::format("in{}", k)},
              {"INDEX", std::to_string(k)},
              {"BINDING", std::to_string(k)},
              {"CT", ct},
              {"STORAGE", f16    ? "u32"
                          : vec4 ? fmt::format("vec4<{}>", ct)
                                 : ct},
              {"MODE_SAME", same ? "1" : "0"},
              {"MODE_SCALAR", layout.modes[k] == BroadcastMode::Scalar ? "1" : "0"},
              {"MODE_BROADCAST", layout.modes[k] == BroadcastMode::Strided ? "1" : "0"},
              {"VEC4", vec4 ? "1" : "0"},
              {"F16", f16 ? "1" : "0"},
              {"F16_PAIRS", f16 && same && offset % 2 == 0 ? "1" : "0"},
          };
          input_functions += render_shader("elementwise/input.wgsl", values);
        }
        const std::string out_ct = compute_type(out_dtype);
        const int arity = static_cast<int>(inputs.size());
        TemplateValues values = {
            {"PARAMS_BINDING", std::to_string(arity + 1)},
            {"OUT_BINDING", std::to_string(arity)},
            {"INPUT_FUNCTIONS", input_functions},
            {"OP_FUNCTIONS", std::string(shader_text("elementwise/math.wgsl"))},
            {"OUT_CT", out_ct},
            {"OUT_STORAGE", out_f16    ? "u32"
                            : out_vec4 ? fmt::format("vec4<{}>", out_ct)
                                       : out_ct},
            {"OUT_VEC4", out_vec4 ? "1" : "0"},
            {"OUT_F16", out_f16 ? "1" : "0"},
            {"CT0", cts[0]},
            {"CT1", arity >= 2 ? cts[1] : cts[0]},
            {"CT2", arity >= 3 ? cts[2] : cts[0]},
            {"ARITY2", arity >= 2 ? "1" : "0"},
            {"ARITY3", arity >= 3 ? "1" : "0"},
            {"EXPR", expression(op, dtypes, out_dtype)},
        };
        return render_shader("elementwise/elementwise.wgsl", values);
      },
      "elementwise " + op.name);

  std::vector<gpu::BufferBinding> bindings;
  for (const auto& t : inputs) bindings.push_back(t.binding(kc.gpu));
  bindings.push_back(output.binding(kc.gpu));
  const uint64_t threads = (static_cast<uint64_t>(count) + kElementsPerThread - 1) / kElementsPerThread;
  const auto workgroups = gpu::split_workgroups((threads + kWorkgroupSize - 1) / kWorkgroupSize, kc.gpu.limits());
  recorder.dispatch(pipeline, bindings, &u, sizeof(u), workgroups, op.name);
}

}  // namespace onda::kernels
