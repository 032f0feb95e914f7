// onda::Device: one GPU adapter and its WebGPU device (context, queue, error state). Every Session
// runs on a Device; sessions opened without one make their own. Share one Device between sessions
// (and threads) so that they share the GPU context, and so that one model's DeviceTensor outputs can
// be the next model's inputs without a trip through host memory.
//
// Thread safety: a Device may be used from any number of threads. Each Device has one lock; every
// Session call that touches the GPU (open, run, run_device, run_split, submit, collect, a Stream's
// step, DeviceTensor upload and download, destruction) holds it, so work of sessions on one Device
// is serialised (the GPU has one queue per device anyway; CPU recording of two sessions does not
// overlap today). A device error (validation, device loss) is reported by the next call on any
// session of that Device. What may run concurrently, call by call: docs/library.md.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onda {

struct AdapterInfo {
  int index = 0;     // position in Device::list_adapters()
  std::string name;  // e.g. "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string vendor;
  std::string architecture;
  std::string driver;   // driver description, e.g. "Mesa 25.0.7" or "580.159.04"
  std::string backend;  // "Vulkan", "Metal", ...
  std::string type;     // "discrete GPU", "integrated GPU", "CPU"
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
};

// What the device allows (WebGPU's limits that bound onda's kernels), and its subgroup sizes.
struct DeviceLimits {
  uint64_t max_buffer_size = 0;
  uint64_t max_storage_buffer_binding_size = 0;
  uint32_t max_storage_buffers_per_shader_stage = 0;
  uint64_t max_uniform_buffer_binding_size = 0;
  uint32_t min_storage_buffer_offset_alignment = 0;
  uint32_t min_uniform_buffer_offset_alignment = 0;
  uint32_t max_compute_workgroup_storage_size = 0;
  uint32_t max_compute_invocations_per_workgroup = 0;
  uint32_t max_compute_workgroup_size[3] = {0, 0, 0};
  uint32_t max_compute_workgroups_per_dimension = 0;
  uint32_t subgroup_min_size = 0;
  uint32_t subgroup_max_size = 0;
};

struct DeviceOptions {
  // Which adapter: "" = the ONDA_ADAPTER environment variable if set, else the default
  // high-performance adapter; otherwise an index into list_adapters() or a case-insensitive
  // substring of the adapter name.
  std::string adapter;
  // Largest storage binding the kernels may use, in bytes (at least 64 KiB); 0 = the adapter's
  // maxStorageBufferBindingSize. Lower it to run models as an adapter with smaller bindings would:
  // the kernels split their work over several bindings and the outputs do not change.
  uint64_t max_storage_binding_bytes = 0;
  // Where compiled pipelines persist across processes: unset = the per-user cache folder
  // ($XDG_CACHE_HOME/onda/pipelines, else ~/.cache/onda/pipelines); an empty path = none.
  std::optional<std::filesystem::path> pipeline_cache_folder;
  // How long a wait for the GPU polls before it blocks, in microseconds: unset = 1000 on GPUs, 0 on
  // CPU adapters. A blocking wait can wake up late (on an H100 ~0.5 ms after a short run is done),
  // which matters for streamed frames; polling keeps one CPU thread busy for up to this long.
  std::optional<uint32_t> spin_wait_microseconds;
};

class Device {
 public:
  // Throws GpuError when no adapter matches or the device cannot be created.
  static std::shared_ptr<Device> open(const DeviceOptions& options = {});
  // Every adapter this machine offers, in a stable order (no device is created).
  static std::vector<AdapterInfo> list_adapters();

  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const AdapterInfo& adapter() const;
  // Optional features in use, e.g. "shader-f16", "subgroups", "timestamp-query".
  std::vector<std::string> features() const;
  const DeviceLimits& limits() const;

  // onda's own layers reach the GPU context through this (src/runtime/device_impl.h).
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  explicit Device(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace onda
