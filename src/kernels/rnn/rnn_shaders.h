// Each recurrent kernel for one layer: its shader file, the template values of its cell (rnn_cell.wgsl:
// flags, activations, gates) and of its tiling (rnn_step_tiling.h), and the accessors of Y, Y_h and
// Y_c in the output dtype. RnnKernel (rnn_kernel.h) compiles what plan_rnn chose (rnn_pipeline).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/rnn/rnn_spec.h"
#include "kernels/rnn/rnn_step_tiling.h"
#include "kernels/shader_template.h"
#include "tensor/tensor.h"

namespace onda::kernels::rnn {

// What every cell kernel of one layer compiles in: its flags (StepFlags, rnn_uniforms.h) and whether its
// activations are the spec's defaults.
TemplateValues layer_values(const RnnSpec& spec, uint32_t flags, int64_t directions);

// One recurrent kernel to compile: its embedded file, its template values, and the tensor_access()
// tokens of the accessors placed before it (or after it: a kernel that starts with `enable
// subgroups;` must precede every declaration; WGSL's module scope is otherwise order-free).
struct RnnShader {
  std::string file;
  TemplateValues values;
  std::vector<std::string> accessors;
  bool accessors_first = true;
};

// The pipeline of `shader`, keyed by its file, values and accessors; rendered only on a miss.
const wgpu::ComputePipeline& rnn_pipeline(gpu::PipelineCache& pipelines, const RnnShader& shader,
                                          const std::string& label);

// The dot-product step (rnn_step.wgsl), one phase ("fused", "zr" or "h") with `gates_in_product`
// gates; whole_sequence: every step in one dispatch.
RnnShader step_shader(const RnnSpec& spec, const TemplateValues& layer, const char* phase,
                      int gates_in_product, const StepTiling& t, bool whole_sequence, DType out);

// The register-tiled step (rnn_step_tiled.wgsl), one phase.
RnnShader tiled_step_shader(const RnnSpec& spec, const TemplateValues& layer, const char* phase,
                            int gates_in_product, const TiledStepTiling& t, DType out);

// The vec4 step (rnn_step_vec4.wgsl): the fused cell with every gate in the product; a persistent
// tiling runs every step (hidden size `hidden`; on_gpu sets its spin bound).
RnnShader vec4_step_shader(const RnnSpec& spec, const TemplateValues& layer, const Vec4StepTiling& t,
                           int64_t hidden, bool on_gpu, DType out);

// The cell half of a GEMM step (rnn_step_gates.wgsl).
RnnShader gates_step_shader(const RnnSpec& spec, const TemplateValues& layer, DType out);

// The row-sequence kernel (rnn_sequence_rows.wgsl).
RnnShader row_sequence_shader(const RnnSpec& spec, const TemplateValues& layer, const RowSequenceTiling& t,
                              int64_t hidden, DType out);

// The resident kernel (rnn_sequence_resident.wgsl).
RnnShader resident_shader(const RnnSpec& spec, const TemplateValues& layer, const ResidentTiling& t,
                          int64_t hidden, bool subgroup_reduce, DType out);

// The cooperative kernel (rnn_sequence_cooperative.wgsl); on_gpu sets its spin bound.
RnnShader cooperative_shader(const RnnSpec& spec, const TemplateValues& layer, const CooperativeTiling& t,
                             int64_t hidden, bool subgroup_reduce, bool on_gpu, DType out);

}  // namespace onda::kernels::rnn
