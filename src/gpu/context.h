// The WebGPU context: instance, the chosen adapter, and a device created with the adapter's full
// limits and every optional feature onda can use. It also owns the error plumbing: Dawn reports
// validation/internal errors and device loss through callbacks; they are stored here and thrown
// as GpuError at the next synchronisation point (wait, readback, check_errors).
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpu/bind_group_cache.h"
#include "gpu/blob_cache.h"
#include "gpu/dawn.h"
#include "gpu/feature_names.h"
#include "gpu/readback_buffers.h"
#include "gpu/upload_ring.h"

namespace onda::gpu {

class RunGuards;

struct AdapterDescription {
  int index = 0;     // position in list_adapters()
  std::string name;  // e.g. "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string vendor;
  std::string architecture;
  std::string driver;   // driver description, e.g. "Mesa 25.0.7" or "580.159.04"
  std::string backend;  // "Vulkan", "Metal", ...
  std::string type;     // "discrete GPU", "integrated GPU", "CPU"
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
};

struct ContextOptions {
  // Which adapter: "" = the ONDA_ADAPTER environment variable if set, else the default
  // high-performance adapter; otherwise an index into list_adapters() or a case-insensitive
  // substring of the adapter name.
  std::string adapter;
  // Dawn's robustness transform clamps every buffer access. onda's kernels clamp their own indices
  // (and the tests poison outputs and check every element), so by default it is off on GPUs, where
  // it costs run time (benchmark-log.md has the figure; outputs bit-identical), and on for CPU adapters,
  // where a stray access would land in the process's own memory.
  // Unset: that default; ONDA_ROBUSTNESS=0/1 overrides both.
  std::optional<bool> robustness{};
  // Seconds a single wait may take before it is reported as a hang.
  double wait_timeout_seconds = 600.0;
  // How long a wait polls for completion before it blocks, in microseconds. A blocking wait wakes
  // up late (on an H100, ~0.5 ms after a short run finished), which dominates the round trip of a
  // streamed frame; polling answers within microseconds at the cost of a busy CPU thread for that
  // long. Unset: kGpuSpinWaitMicroseconds on GPUs, 0 on CPU adapters (where the polling thread
  // would take a core from the adapter's own threads).
  std::optional<uint32_t> spin_wait_microseconds{};
  // Where compiled pipelines persist across processes (blob_cache.h): unset = the per-user cache
  // folder (default_pipeline_cache_folder()), an empty path = no persistent cache.
  std::optional<std::filesystem::path> pipeline_cache_folder{};
  // Largest storage binding the kernels may use, in bytes; 0 = the adapter's
  // maxStorageBufferBindingSize. A smaller value lowers limits().maxStorageBufferBindingSize, which
  // every kernel plans with, so the paths that split work over several bindings can be exercised
  // (and checked) on any adapter. At least kMinStorageBindingCap.
  uint64_t max_storage_binding_bytes = 0;
};

// The smallest binding cap ContextOptions accepts (some kernels need one row of a tensor per binding).
// ContextOptions::spin_wait_microseconds' default on GPUs: long enough to cover a streamed frame's
// GPU work, short enough not to matter next to a long run's wait (docs/benchmarks.md, streaming).
inline constexpr uint32_t kGpuSpinWaitMicroseconds = 1000;

inline constexpr uint64_t kMinStorageBindingCap = uint64_t{64} << 10;

class Context {
 public:
  explicit Context(const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Every adapter this machine offers (Dawn's Null backend excluded), in a stable order.
  static std::vector<AdapterDescription> list_adapters();

  const wgpu::Instance& instance() const { return instance_; }
  const wgpu::Adapter& adapter() const { return adapter_; }
  const wgpu::Device& device() const { return device_; }
  const wgpu::Queue& queue() const { return queue_; }
  const wgpu::Limits& limits() const { return limits_; }
  const AdapterDescription& adapter_description() const { return description_; }
  uint32_t subgroup_min_size() const { return subgroup_min_size_; }
  uint32_t subgroup_max_size() const { return subgroup_max_size_; }

  // Features offered by the adapter, requested on the device, and confirmed by use at start-up.
  bool has(Feature feature) const;
  const std::vector<Feature>& features() const { return features_; }

  // Blocks until `future` completes; throws GpuError on timeout or on any pending device error.
  void wait(const wgpu::Future& future);
  // Throws the first device error reported since the last call (validation, internal, loss).
  void check_errors();
  // Blocks until the queue has finished all submitted work, then check_errors().
  void finish();

  // The persistent pipeline cache, or nullptr when there is none.
  const DiskBlobCache* pipeline_blob_cache() const { return blob_cache_.get(); }

  // Bind groups and uniform chunks shared by every recorder of this device.
  BindGroupCache& bind_groups() { return *bind_groups_; }
  // Health words of kernels that can fail in ways only the GPU sees (run_guards.h).
  RunGuards& guards() { return *guards_; }

  // Mappable staging buffers kept for the readbacks (transfer.h).
  ReadbackBuffers& readback_buffers() { return *readback_buffers_; }
  // Staging memory for large one-time uploads (weights; gpu/upload_ring.h).
  UploadRing& upload_ring() { return *upload_ring_; }
  uint32_t spin_wait_microseconds() const { return spin_wait_us_; }

  // Runs `create` inside an error scope for `filter` and returns the error message, if any.
  std::string capture_error(wgpu::ErrorFilter filter, const std::function<void()>& create);

 private:
  struct ErrorState {
    std::mutex mutex;
    std::string first_error;
    bool lost = false;
  };

  void create_device(const ContextOptions& options);
  void confirm_features();

  // Declared first so that it outlives the device whose callbacks point at it.
  std::unique_ptr<ErrorState> errors_ = std::make_unique<ErrorState>();
  // Outlives the device too: Dawn calls it until the device is gone.
  std::unique_ptr<DiskBlobCache> blob_cache_;
  wgpu::Instance instance_;
  wgpu::Adapter adapter_;
  wgpu::Device device_;
  wgpu::Queue queue_;
  wgpu::Limits limits_;
  AdapterDescription description_;
  std::vector<Feature> features_;
  uint32_t subgroup_min_size_ = 0;
  uint32_t subgroup_max_size_ = 0;
  uint64_t wait_timeout_ns_ = 0;
  uint32_t spin_wait_us_ = 0;
  // After the device: released before it.
  std::unique_ptr<BindGroupCache> bind_groups_ = std::make_unique<BindGroupCache>(*this);
  std::unique_ptr<RunGuards> guards_;
  std::unique_ptr<ReadbackBuffers> readback_buffers_ = std::make_unique<ReadbackBuffers>();
  std::unique_ptr<UploadRing> upload_ring_ = std::make_unique<UploadRing>();
};

}  // namespace onda::gpu
