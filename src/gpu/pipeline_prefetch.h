// Pipelines created ahead of use from a manifest (pipeline_manifest.h), so that a process's first
// run finds them made instead of creating each one while it records.
//
// Where the time goes without it (a warm blob cache, docs/benchmarks.md "First run"): Tint parsing
// each WGSL text into a shader module on the recording thread, then createComputePipeline, one by
// one. Here worker threads parse the modules (Dawn's CreateShaderModule takes no device-wide lock
// for the parse, so they run side by side and beside the recording thread, which meanwhile plans
// the graph and uploads the weights) and hand each to createComputePipelineAsync, whose compilation
// runs on Dawn's own worker threads. That needs a device whose calls are safe from any thread
// (Feature::ImplicitDeviceSynchronization); without it the calling thread parses them all at once
// and only the compilation is asynchronous.
//
// A worker's shader module errors are caught by its own error scope (Dawn's scopes are per thread),
// an asynchronous creation's by its status: a manifest entry that does not compile is skipped, never
// an error of the device. The recording thread takes a pipeline with take(): only when the WGSL its
// kernel renders now is the entry's text, waiting for the creation if it is still under way.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gpu/context.h"
#include "gpu/pipeline_key.h"
#include "gpu/pipeline_manifest.h"

namespace onda::gpu {

class PipelinePrefetch {
 public:
  // Starts creating the pipeline of every entry (the first of a repeated key).
  PipelinePrefetch(Context& context, std::vector<PipelineManifestEntry> entries);
  // Stops the workers (entries not yet started are dropped) and joins them.
  ~PipelinePrefetch();
  PipelinePrefetch(const PipelinePrefetch&) = delete;
  PipelinePrefetch& operator=(const PipelinePrefetch&) = delete;

  // The pipeline made for `key` when its entry's WGSL is `wgsl`, once: a null pipeline when there is
  // no such entry, its text differs or its creation failed (the caller then creates it as usual).
  wgpu::ComputePipeline take(const PipelineKey& key, const std::string& wgsl);

  // The entries nobody took, in manifest order, without those whose key was asked for with another
  // text (stale): what a manifest written now should keep for runs this process has not made.
  std::vector<PipelineManifestEntry> untaken_entries() const;

  size_t entries() const { return slots_.size(); }
  size_t taken() const { return taken_; }
  // Milliseconds take() spent waiting for creations still under way.
  double wait_ms() const { return wait_ms_; }

 private:
  // queued -> creating (a thread parses its module; `started` once the asynchronous creation is under
  // way) -> taken, or failed (its module or pipeline did not compile), or stale (asked for with
  // another text).
  enum class State { queued, creating, failed, taken, stale };
  struct Slot {
    PipelineManifestEntry entry;
    State state = State::queued;
    bool started = false;
    wgpu::Future future{};  // of createComputePipelineAsync, once started
    // Written by the creation's callback, which runs inside the wait in take().
    std::shared_ptr<wgpu::ComputePipeline> pipeline = std::make_shared<wgpu::ComputePipeline>();
  };

  void work();
  // Parses slot `index`'s module and starts its asynchronous creation (any thread).
  void start(size_t index);

  Context& context_;
  std::vector<Slot> slots_;
  std::unordered_map<PipelineKey, size_t, PipelineKeyHash> by_key_;
  mutable std::mutex mutex_;  // guards the slots' state and future
  std::condition_variable started_;
  std::atomic<size_t> next_ = 0;  // the next slot a worker starts
  std::atomic<bool> stopping_ = false;
  std::vector<std::thread> workers_;
  size_t taken_ = 0;
  double wait_ms_ = 0;
};

}  // namespace onda::gpu
