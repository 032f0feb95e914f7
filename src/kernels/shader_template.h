// The tiny template step that specialises WGSL without copy-paste (as ggml's WebGPU backend does):
//   #include "family/file.wgsl"   inserts another embedded shader (once per render);
//   #if NAME / #ifdef NAME / #ifndef NAME / #else / #endif   keep or drop lines (NAME is true when
//       defined and not "0" or "false"; #ifdef only asks whether it is defined);
//   #for NAME COUNT / #endfor     repeat the lines between with {{NAME}} = 0 .. COUNT - 1 (COUNT a
//       number or a template value; unrolled code where a GPU compiler must not see a loop);
//   {{NAME}}                     is replaced by the value of NAME (an undefined name is an error).
// Shaders live in src/kernels/**/*.wgsl and are embedded at build time (cmake/EmbedWgsl.cmake).
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "gpu/pipeline_cache.h"

namespace onda::kernels {

using TemplateValues = std::map<std::string, std::string>;

// The text of an embedded shader by its path under src/kernels (e.g. "elementwise/elementwise.wgsl").
std::string_view shader_text(const std::string& name);

// Renders an embedded shader with `values` (a tensor_access() token among them becomes its WGSL);
// throws std::runtime_error naming the shader on a malformed directive or an undefined {{NAME}}.
std::string render_shader(const std::string& name, const TemplateValues& values);

// The pipeline of an embedded shader rendered with `values`, keyed by the two (PipelineKey): a
// warm lookup hashes the name and values; the shader is rendered only when the key is new.
const wgpu::ComputePipeline& shader_pipeline(gpu::PipelineCache& pipelines, const std::string& name,
                                             TemplateValues values, const std::string& label);

// Renders template text directly (used by the tests of the template step).
std::string render_template_text(std::string_view text, const TemplateValues& values, const std::string& label);

}  // namespace onda::kernels
