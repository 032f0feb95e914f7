// The pipeline manifest of one model on one kind of device (gpu/pipeline_manifest.h): read when a
// Session opens, to create the pipelines its previous runs used ahead of the first run
// (gpu/pipeline_prefetch.h); written after a run that had to create pipelines the manifest lacked.
//
// The file lives in a "manifests" folder inside the pipeline cache folder; its identity names what
// the pipelines a model needs are a function of: the model's structure, the adapter and its driver,
// the device's features and binding limit, the kernel tuning and onda's version. Each entry is still
// checked against the WGSL rendered when it is used, so the identity only keeps unrelated models and
// devices from wasting each other's compiles.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "gpu/pipeline_cache.h"
#include "graph/graph.h"

namespace onda::runtime {

class ModelPipelineManifest {
 public:
  // No manifest when the context has no pipeline cache folder. `tuning`: the session's tuning
  // assignments (SessionOptions::tuning).
  ModelPipelineManifest(const gpu::Context& context, const Graph& graph,
                        const std::vector<std::string>& tuning);

  bool enabled() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }

  // Starts creating the manifest's pipelines in `pipelines`, which from now on remember what they create.
  void start(gpu::PipelineCache& pipelines);
  // Writes the manifest when `pipelines` created any pipeline it did not hold (what it created, in
  // order, then the manifest's entries for runs this session has not made). Returns the
  // milliseconds it took (0 when there was nothing new).
  double save(const gpu::PipelineCache& pipelines);

 private:
  std::filesystem::path path_;
  std::string identity_;
  uint64_t created_outside_manifest_ = 0;  // at the last save
};

// A digest of what shapes a model's kernels: nodes (op, domain, inputs, outputs, attributes by
// name and type), graph inputs and outputs, initializers' names, dtypes and shapes. Weights' values
// are left out (reading them all would cost more than the manifest saves).
std::string model_fingerprint(const Graph& graph);

}  // namespace onda::runtime
