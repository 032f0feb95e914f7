// Compiled compute pipelines, keyed by a PipelineKey (pipeline_key.h): the shader's id, the values
// its text is a function of, the entry point and the override constants. The WGSL text is rendered
// only when a key is new. Shape never enters the key: kernels read shapes from uniforms, so one
// pipeline serves all shapes.
//
// Across processes: a cache can take pipelines made ahead from a manifest (prefetch(): the entries a
// previous process's cache listed with created()); a new key is then served by the prefetched
// pipeline when the WGSL rendered for it now is the manifest's text, else created as usual.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpu/context.h"
#include "gpu/pipeline_key.h"
#include "gpu/pipeline_manifest.h"

namespace onda::gpu {

class PipelinePrefetch;  // pipeline_prefetch.h

// What creating this cache's pipelines cost on the host, summed since the cache was made: a run's
// share is the difference of two readings (a first run's cost; none once every key is warm).
struct PipelineCreationStats {
  uint64_t pipelines = 0;       // pipelines created (keys seen for the first time)
  double render_ms = 0;         // rendering their WGSL text
  double module_ms = 0;         // CreateShaderModule: the WGSL parsed and validated by Tint
  double pipeline_ms = 0;       // CreateComputePipeline: code generation and the driver's compile,
                                // or their results from the blob cache
  uint64_t prefetched = 0;      // of `pipelines`, those taken from prefetch() (made ahead of use)
  double prefetch_wait_ms = 0;  // waiting for those still being made (part of no other figure)
};

class PipelineCache {
 public:
  explicit PipelineCache(Context& context);
  ~PipelineCache();  // stops a prefetch's workers

  // The pipeline of `key`; `make_wgsl()` renders its text, called only when the key is new. Throws
  // GpuError with the WGSL compiler's message (and `label`) when the shader does not compile.
  template <class MakeWgsl>
  const wgpu::ComputePipeline& get(const PipelineKey& key, MakeWgsl&& make_wgsl, const std::string& label) {
    if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
    const auto start = std::chrono::steady_clock::now();
    const std::string wgsl = make_wgsl();
    stats_.render_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return create(key, wgsl, label);
  }

  // A shader with no id (a test's, a one-off's): its text is its id.
  const wgpu::ComputePipeline& get(const std::string& wgsl, const OverrideConstants& constants = {},
                                   const std::string& label = "kernel",
                                   const std::string& entry_point = "main");

  size_t size() const { return pipelines_.size(); }
  const PipelineCreationStats& stats() const { return stats_; }

  // Starts making `entries`' pipelines ahead of use (pipeline_prefetch.h); replaces an earlier prefetch.
  void prefetch(std::vector<PipelineManifestEntry> entries);
  // The prefetch under way, or null.
  const PipelinePrefetch* prefetched() const { return prefetch_.get(); }
  // From now on, remember every pipeline this cache creates (its key, label and WGSL), in order of
  // creation: a manifest's entries (created()).
  void remember_created() { remember_created_ = true; }
  const std::vector<PipelineManifestEntry>& created() const { return created_; }

  // Facts learned by running one of this cache's pipelines (whether a grid of it is resident at once,
  // say), named by `fact`. They live as long as the cache, and so as its pipelines: a pipeline
  // created later, by this cache or another, can never match a stale fact by a reused address.
  // `pipeline` must come from this cache.
  std::optional<bool> recall(const wgpu::ComputePipeline& pipeline, const std::string& fact) const;
  void remember(const wgpu::ComputePipeline& pipeline, const std::string& fact, bool value);

 private:
  Context& context_;
  const wgpu::ComputePipeline& create(const PipelineKey& key, const std::string& wgsl,
                                      const std::string& label);

  std::unordered_map<PipelineKey, wgpu::ComputePipeline, PipelineKeyHash> pipelines_;  // nodes are stable
  std::map<std::pair<WGPUComputePipeline, std::string>, bool> facts_;
  PipelineCreationStats stats_;
  std::unique_ptr<PipelinePrefetch> prefetch_;
  bool remember_created_ = false;
  std::vector<PipelineManifestEntry> created_;
};

}  // namespace onda::gpu
