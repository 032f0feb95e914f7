// Dawn's blob cache kept on disk, so that compiled pipelines outlive the process: Dawn hands every
// compiled artefact it can reuse (the SPIR-V it generated from WGSL, the Vulkan driver's pipeline
// cache data) to a store callback with a key that already names the adapter, the driver, the
// toggles and the shader, and asks the load callback for it before compiling again. A second
// `onda` invocation then skips most of the first run's pipeline compilation.
//
// One file per entry in the cache folder, named by a hash of the key; the file holds the whole key
// too, so a hash collision reads as a miss, never as another entry. Writes go to a temporary file
// that is renamed into place, so a concurrent reader or an interrupted writer never sees half an
// entry. A cache folder that cannot be created or written is no error: the entry is just not kept.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace onda::gpu {

class DiskBlobCache {
 public:
  // `folder` is created on the first store.
  explicit DiskBlobCache(std::filesystem::path folder);

  // Dawn's WGPUDawnLoadCacheDataFunction: copies the entry into `value` when it fits and returns its
  // size (0: no entry); Dawn first asks with value == nullptr for the size.
  size_t load(const void* key, size_t key_size, void* value, size_t value_size) const;
  // Dawn's WGPUDawnStoreCacheDataFunction.
  void store(const void* key, size_t key_size, const void* value, size_t value_size) const;

  const std::filesystem::path& folder() const { return folder_; }
  uint64_t loads() const { return loads_; }
  uint64_t stores() const { return stores_; }

 private:
  std::filesystem::path entry_path(const void* key, size_t key_size) const;

  std::filesystem::path folder_;
  // Dawn may call from its compilation threads.
  mutable std::atomic<uint64_t> loads_ = 0;   // entries handed to Dawn
  mutable std::atomic<uint64_t> stores_ = 0;  // entries written
};

// The per-user cache folder: $XDG_CACHE_HOME/onda/pipelines, else ~/.cache/onda/pipelines;
// empty when neither variable is set (read once, with the other variables: gpu/environment.h).
std::filesystem::path default_pipeline_cache_folder();

}  // namespace onda::gpu
