#include "gpu/pipeline_cache.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "gpu/environment.h"
#include "gpu/gpu_error.h"
#include "gpu/pipeline_prefetch.h"

namespace onda::gpu {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// ONDA_DUMP_WGSL=DIR: every shader compiled is also written to DIR/NNN.wgsl, its label on the first
// line (to read what the generators emit for one shape, or to feed a driver's offline compiler).
void dump_wgsl(const std::string& wgsl, const std::string& label) {
  const std::string& dir = user_environment().dump_wgsl_dir;
  if (dir.empty()) return;
  static int count = 0;
  std::ofstream(fmt::format("{}/{:03}.wgsl", dir, count++)) << "// " << label << "\n" << wgsl;
}

}  // namespace

size_t PipelineKeyHash::operator()(const PipelineKey& key) const {
  const std::hash<std::string> hash_string;
  size_t h = hash_string(key.shader);
  const auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const auto& [name, value] : key.values) {
    mix(hash_string(name));
    mix(hash_string(value));
  }
  mix(hash_string(key.entry_point));
  for (const auto& [name, value] : key.constants) {
    mix(hash_string(name));
    mix(std::hash<double>{}(value));
  }
  return h;
}

const wgpu::ComputePipeline& PipelineCache::get(const std::string& wgsl, const OverrideConstants& constants,
                                                const std::string& label, const std::string& entry_point) {
  return get(
      PipelineKey{wgsl, {}, entry_point, constants}, [&] { return wgsl; }, label);
}

PipelineCache::PipelineCache(Context& context) : context_(context) {}
PipelineCache::~PipelineCache() = default;

void PipelineCache::prefetch(std::vector<PipelineManifestEntry> entries) {
  prefetch_.reset();
  if (!entries.empty()) prefetch_ = std::make_unique<PipelinePrefetch>(context_, std::move(entries));
}

const wgpu::ComputePipeline& PipelineCache::create(const PipelineKey& key, const std::string& wgsl,
                                                   const std::string& label) {
  if (prefetch_) {
    const auto start = std::chrono::steady_clock::now();
    wgpu::ComputePipeline made = prefetch_->take(key, wgsl);
    stats_.prefetch_wait_ms += ms_since(start);
    if (made) {
      dump_wgsl(wgsl, label);
      ++stats_.pipelines;
      ++stats_.prefetched;
      if (remember_created_) created_.push_back({key, label, wgsl});
      return pipelines_.emplace(key, std::move(made)).first->second;
    }
  }
  const OverrideConstants& constants = key.constants;
  std::vector<wgpu::ConstantEntry> entries(constants.size());
  for (size_t i = 0; i < constants.size(); ++i) {
    entries[i].key = constants[i].first.c_str();
    entries[i].value = constants[i].second;
  }
  dump_wgsl(wgsl, label);
  wgpu::ComputePipeline pipeline;
  std::string error = context_.capture_error(wgpu::ErrorFilter::Validation, [&] {
    wgpu::ShaderSourceWGSL source;
    source.code = wgsl.c_str();
    wgpu::ShaderModuleDescriptor module_descriptor;
    module_descriptor.nextInChain = &source;
    module_descriptor.label = label.c_str();
    wgpu::ComputePipelineDescriptor descriptor;
    descriptor.label = label.c_str();
    auto start = std::chrono::steady_clock::now();
    descriptor.compute.module = context_.device().CreateShaderModule(&module_descriptor);
    stats_.module_ms += ms_since(start);
    descriptor.compute.entryPoint = key.entry_point.c_str();
    descriptor.compute.constantCount = entries.size();
    descriptor.compute.constants = entries.data();
    start = std::chrono::steady_clock::now();
    pipeline = context_.device().CreateComputePipeline(&descriptor);
    stats_.pipeline_ms += ms_since(start);
  });
  ++stats_.pipelines;
  if (!error.empty()) throw GpuError(fmt::format("shader '{}' failed to compile: {}", label, error));
  if (remember_created_) created_.push_back({key, label, wgsl});
  return pipelines_.emplace(key, std::move(pipeline)).first->second;
}

std::optional<bool> PipelineCache::recall(const wgpu::ComputePipeline& pipeline,
                                          const std::string& fact) const {
  const auto it = facts_.find({pipeline.Get(), fact});
  if (it == facts_.end()) return std::nullopt;
  return it->second;
}

void PipelineCache::remember(const wgpu::ComputePipeline& pipeline, const std::string& fact, bool value) {
  facts_[{pipeline.Get(), fact}] = value;
}

}  // namespace onda::gpu
