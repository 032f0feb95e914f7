#include "runtime/model_pipeline_manifest.h"

#include <fmt/format.h>

#include <chrono>
#include <variant>

#include "gpu/fnv1a.h"
#include "gpu/pipeline_manifest.h"
#include "gpu/pipeline_prefetch.h"
#include "onda/version.h"

namespace onda::runtime {
namespace {

// Feeds values into one FNV-1a digest, each string with its length so that concatenations differ.
class Digest {
 public:
  void add(std::string_view text) {
    add_number(text.size());
    hash_ = gpu::fnv1a(text.data(), text.size(), hash_);
  }
  void add_number(uint64_t value) { hash_ = gpu::fnv1a(&value, sizeof value, hash_); }
  void add_shape(const Shape& shape) {
    add_number(shape.size());
    for (int64_t d : shape) add_number(static_cast<uint64_t>(d));
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = gpu::kFnv1aOffset;
};

void add_graph(Digest& digest, const Graph& graph);

void add_attribute(Digest& digest, const Attribute& attribute) {
  digest.add(attribute.name);
  digest.add_number(static_cast<uint64_t>(attribute.type()));
  std::visit(
      [&digest](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          digest.add_number(static_cast<uint64_t>(value));
        } else if constexpr (std::is_same_v<T, float>) {
          digest.add(fmt::format("{}", value));
        } else if constexpr (std::is_same_v<T, std::string>) {
          digest.add(value);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          digest.add_shape(value);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          digest.add(fmt::format("{}", fmt::join(value, ",")));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const std::string& text : value) digest.add(text);
        } else if constexpr (std::is_same_v<T, HostTensor>) {
          digest.add(dtype_name(value.dtype()));
          digest.add_shape(value.shape());
        } else if (value) {
          add_graph(digest, *value);
        }
      },
      attribute.value);
}

void add_graph(Digest& digest, const Graph& graph) {
  for (const OpsetImport& opset : graph.opset_imports) {
    digest.add(opset.domain);
    digest.add_number(static_cast<uint64_t>(opset.version));
  }
  for (const auto* names : {&graph.inputs, &graph.outputs})
    for (const std::string& name : *names) digest.add(name);
  for (const auto& [name, tensor] : graph.initializers) {
    digest.add(name);
    digest.add(dtype_name(tensor.dtype()));
    digest.add_shape(tensor.shape());
  }
  for (const Node& node : graph.nodes) {
    digest.add(node.op_type);
    digest.add(node.domain);
    for (const auto* names : {&node.inputs, &node.outputs})
      for (const std::string& name : *names) digest.add(name);
    for (const Attribute& attribute : node.attributes) add_attribute(digest, attribute);
  }
}

std::string identity_of(const gpu::Context& context, const Graph& graph,
                        const std::vector<std::string>& tuning) {
  const gpu::AdapterDescription& adapter = context.adapter_description();
  std::string features;
  for (gpu::Feature feature : context.features()) features += fmt::format("{} ", gpu::feature_name(feature));
  return fmt::format(
      "onda {}\nadapter {} ({:04x}:{:04x}), driver {}, backend {}\nfeatures {}\nbinding cap {}\ntuning "
      "{}\nmodel {}\n",
      version_string(), adapter.name, adapter.vendor_id, adapter.device_id, adapter.driver, adapter.backend,
      features, context.limits().maxStorageBufferBindingSize, fmt::join(tuning, " "),
      model_fingerprint(graph));
}

}  // namespace

std::string model_fingerprint(const Graph& graph) {
  Digest digest;
  add_graph(digest, graph);
  return fmt::format("{:016x}", digest.value());
}

ModelPipelineManifest::ModelPipelineManifest(const gpu::Context& context, const Graph& graph,
                                             const std::vector<std::string>& tuning) {
  const gpu::DiskBlobCache* cache = context.pipeline_blob_cache();
  if (!cache) return;
  identity_ = identity_of(context, graph, tuning);
  path_ = gpu::pipeline_manifest_path(cache->folder() / "manifests", identity_);
}

void ModelPipelineManifest::start(gpu::PipelineCache& pipelines) {
  if (!enabled()) return;
  pipelines.remember_created();
  pipelines.prefetch(gpu::read_pipeline_manifest(path_, identity_));
}

double ModelPipelineManifest::save(const gpu::PipelineCache& pipelines) {
  if (!enabled()) return 0;
  const gpu::PipelineCreationStats& stats = pipelines.stats();
  const uint64_t created_outside = stats.pipelines - stats.prefetched;
  if (created_outside == created_outside_manifest_) return 0;  // the manifest already lists them all
  const auto start = std::chrono::steady_clock::now();
  created_outside_manifest_ = created_outside;
  std::vector<gpu::PipelineManifestEntry> entries = pipelines.created();
  if (const gpu::PipelinePrefetch* prefetched = pipelines.prefetched()) {
    for (gpu::PipelineManifestEntry& entry : prefetched->untaken_entries())
      entries.push_back(std::move(entry));
  }
  gpu::write_pipeline_manifest(path_, identity_, entries);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace onda::runtime
