// Compiled compute pipelines, keyed by the exact shader text, entry point and override constants.
// Shape never enters the key: kernels read shapes from uniforms, so one pipeline serves all shapes.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpu/context.h"

namespace onda::gpu {

// WGSL `override` constants: name -> value.
using OverrideConstants = std::vector<std::pair<std::string, double>>;

class PipelineCache {
 public:
  explicit PipelineCache(Context& context) : context_(context) {}

  // Throws GpuError with the WGSL compiler's message (and `label`) when the shader does not compile.
  const wgpu::ComputePipeline& get(const std::string& wgsl, const OverrideConstants& constants = {},
                                   const std::string& label = "kernel", const std::string& entry_point = "main");

  // For kernels whose shader is a function of a few choices (op, dtypes, vector widths): `key`
  // spells those choices and `make_wgsl` renders the shader only on the first request, so a warm
  // lookup costs one short hash instead of rendering and hashing kilobytes of WGSL per dispatch.
  template <class MakeWgsl>
  const wgpu::ComputePipeline& get_keyed(const std::string& key, MakeWgsl&& make_wgsl, const std::string& label) {
    auto it = keyed_.find(key);
    if (it != keyed_.end()) return *it->second;
    const wgpu::ComputePipeline& pipeline = get(make_wgsl(), {}, label);
    keyed_.emplace(key, &pipeline);
    return pipeline;
  }

  size_t size() const { return plain_.size() + pipelines_.size(); }

  // Facts learned by running one of this cache's pipelines (whether a grid of it is resident at once,
  // say), named by `fact`. They live as long as the cache, and so as its pipelines: a pipeline
  // created later, by this cache or another, can never match a stale fact by a reused address.
  // `pipeline` must come from this cache.
  std::optional<bool> recall(const wgpu::ComputePipeline& pipeline, const std::string& fact) const;
  void remember(const wgpu::ComputePipeline& pipeline, const std::string& fact, bool value);

 private:
  Context& context_;
  std::unordered_map<std::string, wgpu::ComputePipeline> plain_;      // by WGSL text: main, no constants
  std::unordered_map<std::string, wgpu::ComputePipeline> pipelines_;  // by entry point, constants, text
  std::unordered_map<std::string, const wgpu::ComputePipeline*> keyed_;  // into the two (stable nodes)
  std::map<std::pair<WGPUComputePipeline, std::string>, bool> facts_;
};

}  // namespace onda::gpu
