#include "kernels/rnn/rnn_shaders.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/common/tensor_access.h"

namespace onda::kernels::rnn {

namespace {

// The accessors of Y, Y_h and Y_c (bindings 4, 5, 6) in the output dtype, which every cell kernel
// writes through.
std::vector<std::string> output_access(DType out) {
  return {tensor_access("y", 4, out, true), tensor_access("yh", 5, out, true),
          tensor_access("yc", 6, out, true)};
}

// The template values of a cell kernel in phase `phase` ("fused", "zr" or "h") with `gates_in_product`
// gates in its product, and the layer's constants (layer_values): what every cell kernel starts from.
TemplateValues cell_values(const RnnSpec& spec, const TemplateValues& layer, const std::string& phase,
                           int gates_in_product) {
  TemplateValues v{{"CELL_LSTM", spec.cell == CellType::lstm ? "1" : "0"},
                   {"CELL_GRU", spec.cell == CellType::gru ? "1" : "0"},
                   {"CELL_RNN", spec.cell == CellType::rnn ? "1" : "0"},
                   {"PHASE_FUSED", phase == "fused" ? "1" : "0"},
                   {"PHASE_ZR", phase == "zr" ? "1" : "0"},
                   {"PHASE_H", phase == "h" ? "1" : "0"},
                   {"G", std::to_string(gates_in_product)},
                   {"GATES_TOTAL", std::to_string(gate_count(spec.cell))},
                   {"ACTS", std::to_string(activations_per_direction(spec.cell))}};
  v.insert(layer.begin(), layer.end());
  return v;
}

// The bound of one wait on the exchange (rnn_exchange.wgsl): 2^21 spins on a GPU, 2^26 on a CPU adapter.
std::string spin_limit(bool on_gpu) { return on_gpu ? "2097152" : "67108864"; }

// A cell with every gate in one product (the fused phase): what the vec4 step, the cell half of the GEMM
// step and the one-dispatch kernels share.
TemplateValues fused_cell_values(const RnnSpec& spec, const TemplateValues& layer) {
  return cell_values(spec, layer, "fused", gate_count(spec.cell));
}

}  // namespace

namespace {

// The WGSL expression of Y's store activation on `x` (rnn_cell.wgsl's y_activation): the cell's own
// activation functions (rnn_activation.wgsl), the slope a literal.
std::string y_activation_expression(const RnnSpec& spec) {
  switch (spec.y_activation) {
    case gemm::Activation::none: return "x";
    case gemm::Activation::relu: return "max(x, 0.0)";
    case gemm::Activation::leaky_relu: return fmt::format("select({:.9e} * x, x, x >= 0.0)", spec.y_activation_alpha);
    case gemm::Activation::sigmoid: return "rnn_sigmoid(x)";
    case gemm::Activation::tanh: return "rnn_tanh(x)";
    case gemm::Activation::gelu_erf: break;
  }
  throw std::invalid_argument("an RNN's Y activation must be relu, leaky_relu, sigmoid or tanh");
}

}  // namespace

// What every cell kernel of one layer compiles in: its flags (StepFlags), whether its activations
// are the spec's defaults, and Y's store activation.
TemplateValues layer_values(const RnnSpec& spec, uint32_t flags, int64_t directions) {
  bool defaults = true;
  if (!spec.activations.empty()) {
    const auto standard = default_activations(spec.cell, static_cast<int>(directions));
    defaults = spec.activations.size() == standard.size();
    for (size_t i = 0; defaults && i < standard.size(); ++i)
      defaults = spec.activations[i].kind == standard[i].kind;
  }
  return {{"FLAGS", std::to_string(flags)},
          {"DEFAULT_ACTS", defaults ? "1" : "0"},
          {"Y_ACTIVATION", y_activation_expression(spec)}};
}

RnnShader step_shader(const RnnSpec& spec, const TemplateValues& layer, const char* phase,
                      int gates_in_product, const StepTiling& t, bool whole_sequence, DType out) {
  const uint32_t g = static_cast<uint32_t>(gates_in_product);
  TemplateValues v = cell_values(spec, layer, phase, gates_in_product);
  v.merge(TemplateValues{
      {"WHOLE_SEQUENCE", whole_sequence ? "1" : "0"},
      {"BT", std::to_string(t.batch_tile)},
      {"JT", std::to_string(t.units)},
      {"KC", std::to_string(t.k_chunk)},
      {"HS_SIZE", std::to_string(t.batch_tile * t.k_chunk)},
      {"ACC", std::to_string(t.batch_tile * g)},
      {"KS", std::to_string(t.k_split)},
      {"K_SPLIT", t.k_split > 1 ? "1" : "0"},
      {"WG_SIZE", std::to_string(t.workgroup_size())},
      {"RED_SIZE", std::to_string(std::max<uint32_t>(1, t.k_split * g * t.batch_tile * t.units))},
  });
  return {"rnn/rnn_step.wgsl", std::move(v), output_access(out)};
}

RnnShader tiled_step_shader(const RnnSpec& spec, const TemplateValues& layer, const char* phase,
                            int gates_in_product, const TiledStepTiling& t, DType out) {
  const uint32_t g = static_cast<uint32_t>(gates_in_product);
  const uint32_t wg = t.workgroup_size();
  TemplateValues v = cell_values(spec, layer, phase, gates_in_product);
  v.merge(TemplateValues{
      {"BT", std::to_string(t.thread_rows)},
      {"TU", std::to_string(t.thread_units)},
      {"BM", std::to_string(t.rows)},
      {"BU", std::to_string(t.units)},
      {"KT", std::to_string(t.k_tile)},
      {"KS", std::to_string(t.k_split)},
      {"K_SPLIT", t.k_split > 1 ? "1" : "0"},
      {"A_VEC4", t.k_tile % (4 * t.k_split) == 0 ? "1" : "0"},
      {"AP", std::to_string(t.padded_k_tile())},
      {"NA", std::to_string((t.rows * t.k_tile + wg - 1) / wg)},
      {"NB", std::to_string((t.k_tile * g * t.units + wg - 1) / wg)},
      {"WG_SIZE", std::to_string(wg)},
      {"ACC", std::to_string(t.thread_rows * g)},
  });
  return {"rnn/rnn_step_tiled.wgsl", std::move(v), output_access(out)};
}

// The vec4 step (rnn_step_vec4.wgsl): the fused cell with every gate in the product.
RnnShader vec4_step_shader(const RnnSpec& spec, const TemplateValues& layer, const Vec4StepTiling& t,
                           int64_t hidden, bool on_gpu, DType out) {
  const uint32_t wg = t.workgroup_size();
  TemplateValues v = fused_cell_values(spec, layer);
  v.merge(TemplateValues{
      {"BT", std::to_string(t.thread_rows)},
      {"TQ", std::to_string(t.thread_rows / 4)},
      {"NV", std::to_string(t.thread_units)},
      {"WG_X", std::to_string(t.wg_x)},
      {"WG_Y", std::to_string(t.wg_y)},
      {"BK", std::to_string(t.k_tile)},
      {"KS", std::to_string(t.k_split)},
      {"K_SPLIT", t.k_split > 1 ? "1" : "0"},
      {"NA", std::to_string((t.rows() * t.k_tile + wg - 1) / wg)},
      {"NB", std::to_string((t.k_tile * t.units() + wg - 1) / wg)},
      {"PREFETCH", t.prefetch ? "1" : "0"},
      {"DOUBLE_BUFFER", t.double_buffer ? "1" : "0"},
      {"COPIES", std::to_string(t.copies())},
      {"WG_SIZE", std::to_string(wg)},
      {"ACC", std::to_string(t.thread_rows * gate_count(spec.cell))},
      {"PERSISTENT", t.persistent ? "1" : "0"},
  });
  if (t.persistent) {
    v.merge(TemplateValues{{"H", std::to_string(hidden)}, {"SPIN_LIMIT", spin_limit(on_gpu)}, {"UNIFORM_BINDING", "8"}});
  }
  return {"rnn/rnn_step_vec4.wgsl", std::move(v), output_access(out)};
}

// The cell half of a GEMM step (rnn_step_gates.wgsl).
RnnShader gates_step_shader(const RnnSpec& spec, const TemplateValues& layer, DType out) {
  TemplateValues v = fused_cell_values(spec, layer);
  v.merge(
      TemplateValues{{"BT", "1"}, {"ACC", std::to_string(gate_count(spec.cell))}, {"UNIFORM_BINDING", "8"}});
  return {"rnn/rnn_step_gates.wgsl", std::move(v), output_access(out)};
}

RnnShader row_sequence_shader(const RnnSpec& spec, const TemplateValues& layer, const RowSequenceTiling& t,
                              int64_t hidden, DType out) {
  const uint32_t g = static_cast<uint32_t>(gate_count(spec.cell));
  const bool vec4 = t.unit_vector == 4;
  const uint32_t slice = t.slice_invocations(hidden);
  // Projections prefetched before the product where the registers allow (accumulators + xp <= 64).
  const bool prefetch = 2 * t.accumulators(g) <= 64;
  TemplateValues v = fused_cell_values(spec, layer);
  v.merge(TemplateValues{
      {"BT", std::to_string(t.thread_rows)},
      {"UV", std::to_string(t.unit_vector)},
      {"VEC4", vec4 ? "1" : "0"},
      {"UX", std::to_string(t.unit_invocations(hidden))},
      {"BM", std::to_string(t.rows)},
      {"H", std::to_string(hidden)},
      {"HP", std::to_string((hidden + 3) / 4 * 4)},
      {"KS", std::to_string(t.k_split)},
      {"KL", std::to_string(t.slice_length(hidden))},
      {"KB", std::to_string(t.k_block)},
      {"K_SPLIT", t.k_split > 1 ? "1" : "0"},
      {"RED_SIZE",
       std::to_string(std::max<uint64_t>(1, uint64_t{t.k_split - 1} * t.accumulators(g) * slice))},
      {"WG_SIZE", std::to_string(t.workgroup_size(hidden))},
      {"ACC", std::to_string(t.thread_rows * g)},
      {"PREFETCH_XP", prefetch ? "1" : "0"},
      {"UNIFORM_BINDING", vec4 ? "8" : "7"},
  });
  return {"rnn/rnn_sequence_rows.wgsl", std::move(v), output_access(out)};
}

namespace {

// The template values the register-resident kernels share (rnn_register_*.wgsl: resident and
// cooperative): the fused cell, the K slices of R^T in registers, the rows of h and their sums.
TemplateValues register_kernel_values(const RnnSpec& spec, const TemplateValues& layer, int64_t hidden,
                                      uint32_t slice_vectors, uint32_t slices, uint32_t rows,
                                      uint32_t workgroup_size, bool subgroup_reduce) {
  const uint32_t g = static_cast<uint32_t>(gate_count(spec.cell));
  TemplateValues v = fused_cell_values(spec, layer);
  v.merge(TemplateValues{
      {"BT", "1"},
      {"H", std::to_string(hidden)},
      {"KQ", std::to_string(slice_vectors)},
      {"NS", std::to_string(slices)},
      {"BM", std::to_string(rows)},
      {"RU", rows % 2 == 0 ? "2" : "1"},
      {"WG_SIZE", std::to_string(workgroup_size)},
      {"ACC", std::to_string(g)},
      {"SUBGROUP_REDUCE", subgroup_reduce ? "1" : "0"},
      {"RED_SIZE", std::to_string(g * workgroup_size)},
      {"CELL_PRELOADED", "1"},
  });
  return v;
}

}  // namespace

RnnShader resident_shader(const RnnSpec& spec, const TemplateValues& layer, const ResidentTiling& t,
                          int64_t hidden, bool subgroup_reduce, DType out) {
  const TemplateValues v = register_kernel_values(spec, layer, hidden, t.slice_vectors, t.slices(hidden),
                                                  t.rows, t.workgroup_size(hidden), subgroup_reduce);
  // The kernel first: its `enable subgroups;` must precede every declaration (WGSL's module scope
  // is otherwise order-free, so the accessors may follow).
  return {"rnn/rnn_sequence_resident.wgsl", v, output_access(out), false};
}

RnnShader cooperative_shader(const RnnSpec& spec, const TemplateValues& layer, const CooperativeTiling& t,
                             int64_t hidden, bool subgroup_reduce, bool on_gpu, DType out) {
  TemplateValues v = register_kernel_values(spec, layer, hidden, t.slice_vectors, t.slices(hidden), t.rows,
                                            t.workgroup_size(hidden), subgroup_reduce);
  v.merge(TemplateValues{{"JT", std::to_string(t.units)},
                         {"RC", std::to_string(t.row_chunks)},
                         {"SPIN_LIMIT", spin_limit(on_gpu)},
                         {"UNIFORM_BINDING", "8"}});
  // The kernel first, for its `enable subgroups;` (as resident_shader).
  return {"rnn/rnn_sequence_cooperative.wgsl", v, output_access(out), false};
}

const wgpu::ComputePipeline& rnn_pipeline(gpu::PipelineCache& pipelines, const RnnShader& shader,
                                          const std::string& label) {
  gpu::PipelineKey key{shader.file, shader.values};
  std::string accessors;
  for (const std::string& token : shader.accessors) {
    accessors += token;
    accessors += '\n';
  }
  // (Inserted, not assigned: GCC 12's -Wrestrict misreads a literal assigned to a std::string.)
  key.values.emplace("@ACCESSORS", std::move(accessors));
  key.values.emplace("@ACCESSORS_FIRST", shader.accessors_first ? "1" : "0");
  return pipelines.get(
      key,
      [&] {
        std::string text;
        for (const std::string& token : shader.accessors) text += *expand_tensor_access(token);
        std::string kernel = render_shader(shader.file, shader.values);
        if (!shader.accessors_first) {
          kernel += text;
          return kernel;
        }
        text += kernel;
        return text;
      },
      label);
}

}  // namespace onda::kernels::rnn
