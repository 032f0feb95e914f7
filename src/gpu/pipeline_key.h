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
  std::string shader;                         // the shader's id
  std::map<std::string, std::string> values;  // what its text is a function of
  std::string entry_point = "main";
  OverrideConstants constants;

  bool operator==(const PipelineKey&) const = default;
};

struct PipelineKeyHash {
  size_t operator()(const PipelineKey& key) const;
};

}  // namespace onda::gpu
