#include "gpu/pipeline_prefetch.h"

#include <algorithm>
#include <chrono>

namespace onda::gpu {
namespace {

// Worker threads: enough to parse a model's few hundred modules in a fraction of the time the
// recording thread spends planning and uploading weights, while leaving cores to Dawn's compiler
// threads (and, on a CPU adapter, to the adapter itself).
size_t worker_count() {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<size_t>(cores / 2, 1, 6);
}

// How long take() waits for a worker to parse a module before it stops counting on it.
constexpr auto kParseWait = std::chrono::seconds(120);

// Pops the error scopes start() pushed, innermost first; true when all were clean.
bool pop_clean(const wgpu::Instance& instance, const wgpu::Device& device, int scopes) {
  bool clean = true;
  for (int i = 0; i < scopes; ++i) {
    bool ok = false;
    const wgpu::Future future = device.PopErrorScope(
        wgpu::CallbackMode::WaitAnyOnly,
        [&ok](wgpu::PopErrorScopeStatus status, wgpu::ErrorType type, wgpu::StringView) {
          ok = status == wgpu::PopErrorScopeStatus::Success && type == wgpu::ErrorType::NoError;
        });
    clean = instance.WaitAny(future, UINT64_MAX) == wgpu::WaitStatus::Success && ok && clean;
  }
  return clean;
}

}  // namespace

PipelinePrefetch::PipelinePrefetch(Context& context, std::vector<PipelineManifestEntry> entries)
    : context_(context) {
  slots_.reserve(entries.size());
  for (PipelineManifestEntry& entry : entries) {
    if (by_key_.count(entry.key)) continue;
    by_key_.emplace(entry.key, slots_.size());
    slots_.push_back(Slot{std::move(entry)});
  }
  if (!context_.has(Feature::ImplicitDeviceSynchronization)) {
    work();  // the calling thread parses; the compilations still run on Dawn's threads
    return;
  }
  const size_t workers = std::min(worker_count(), slots_.size());
  for (size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
}

PipelinePrefetch::~PipelinePrefetch() {
  stopping_ = true;
  for (std::thread& worker : workers_) worker.join();
  // Creations still under way finish on Dawn's threads; their callbacks hold only their own result.
}

void PipelinePrefetch::work() {
  for (size_t index = next_++; index < slots_.size() && !stopping_; index = next_++) {
    {
      std::lock_guard lock(mutex_);
      if (slots_[index].state != State::queued) continue;  // take() started it itself
      slots_[index].state = State::creating;
    }
    start(index);
  }
}

void PipelinePrefetch::start(size_t index) {
  const PipelineManifestEntry& entry = slots_[index].entry;  // never written after construction
  const wgpu::Device& device = context_.device();
  std::vector<wgpu::ConstantEntry> constants(entry.key.constants.size());
  for (size_t i = 0; i < constants.size(); ++i) {
    constants[i].key = entry.key.constants[i].first.c_str();
    constants[i].value = entry.key.constants[i].second;
  }
  wgpu::ShaderSourceWGSL source;
  source.code = entry.wgsl.c_str();
  wgpu::ShaderModuleDescriptor module_descriptor;
  module_descriptor.nextInChain = &source;
  module_descriptor.label = entry.label.c_str();
  // This thread's own scopes: a text that does not compile is this entry's failure, never an error
  // reported to the device (and so to the run being recorded).
  device.PushErrorScope(wgpu::ErrorFilter::OutOfMemory);
  device.PushErrorScope(wgpu::ErrorFilter::Internal);
  device.PushErrorScope(wgpu::ErrorFilter::Validation);
  wgpu::ComputePipelineDescriptor descriptor;
  descriptor.label = entry.label.c_str();
  descriptor.compute.module = device.CreateShaderModule(&module_descriptor);
  descriptor.compute.entryPoint = entry.key.entry_point.c_str();
  descriptor.compute.constantCount = constants.size();
  descriptor.compute.constants = constants.data();
  const bool parsed = pop_clean(context_.instance(), device, 3);
  wgpu::Future future{};
  if (parsed) {
    // The callback runs inside the wait in take(), or is cancelled with the instance: it writes only
    // the result it shares.
    future = device.CreateComputePipelineAsync(
        &descriptor, wgpu::CallbackMode::WaitAnyOnly,
        [result = slots_[index].pipeline](wgpu::CreatePipelineAsyncStatus status,
                                          wgpu::ComputePipeline pipeline, wgpu::StringView) {
          if (status == wgpu::CreatePipelineAsyncStatus::Success) *result = std::move(pipeline);
        });
  }
  {
    std::lock_guard lock(mutex_);
    Slot& slot = slots_[index];
    if (slot.state == State::creating) {
      if (parsed) {
        slot.future = future;
        slot.started = true;
      } else {
        slot.state = State::failed;
      }
    }
  }
  started_.notify_all();
}

wgpu::ComputePipeline PipelinePrefetch::take(const PipelineKey& key, const std::string& wgsl) {
  const auto found = by_key_.find(key);
  if (found == by_key_.end()) return nullptr;
  Slot& slot = slots_[found->second];
  std::unique_lock lock(mutex_);
  if (slot.entry.wgsl != wgsl) {
    if (slot.state != State::taken) slot.state = State::stale;
    return nullptr;
  }
  const auto start_wait = std::chrono::steady_clock::now();
  if (slot.state == State::queued) {
    // No worker got to it yet: parse it here rather than wait behind the others.
    slot.state = State::creating;
    lock.unlock();
    start(found->second);
    lock.lock();
  }
  if (slot.state == State::creating &&
      !started_.wait_for(lock, kParseWait, [&] { return slot.state != State::creating || slot.started; })) {
    slot.state = State::failed;
  }
  if (slot.state != State::creating) return nullptr;
  const wgpu::Future future = slot.future;
  lock.unlock();
  context_.wait(future);
  lock.lock();
  wait_ms_ +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_wait).count();
  if (!*slot.pipeline) {
    slot.state = State::failed;
    return nullptr;
  }
  slot.state = State::taken;
  ++taken_;
  return std::move(*slot.pipeline);
}

std::vector<PipelineManifestEntry> PipelinePrefetch::untaken_entries() const {
  std::lock_guard lock(mutex_);
  std::vector<PipelineManifestEntry> entries;
  for (const Slot& slot : slots_) {
    if (slot.state == State::queued || slot.state == State::creating) entries.push_back(slot.entry);
  }
  return entries;
}

}  // namespace onda::gpu
