// What names one compiled compute pipeline: the shader's id (an embedded file such as
// "conv/im2col.wgsl", or a generator's name), the values its text is a function of (template values,
// defines, a generator's parameters), the entry point and the override constants. The pipeline layout
// is the shader's own (auto layout), so the shader id and values determine it.
// A lookup hashes these few short strings; the WGSL text is produced only when the key is new.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace onda::gpu {

// WGSL `override` constants: name -> value.
using OverrideConstants = std::vector<std::pair<std::string, double>>;

struct PipelineKey {
  explicit PipelineKey(std::string shader_id, std::map<std::string, std::string> template_values = {},
                       std::string entry = "main", OverrideConstants override_constants = {})
      : shader(std::move(shader_id)),
        values(std::move(template_values)),
        entry_point(std::move(entry)),
        constants(std::move(override_constants)) {}

  std::string shader;                         // the shader's id
  std::map<std::string, std::string> values;  // what its text is a function of
  std::string entry_point;
  OverrideConstants constants;

  bool operator==(const PipelineKey&) const = default;
};

struct PipelineKeyHash {
  size_t operator()(const PipelineKey& key) const;
};

}  // namespace onda::gpu
