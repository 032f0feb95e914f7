#include "gpu/blob_cache.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "gpu/atomic_file.h"
#include "gpu/environment.h"
#include "gpu/fnv1a.h"

namespace onda::gpu {
namespace {

// An entry file: the key's size (8 bytes, little-endian as the host writes it), the key, the value.
bool read_entry(const std::filesystem::path& path, const void* key, size_t key_size,
                std::vector<char>& value) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  uint64_t stored_key_size = 0;
  if (!file.read(reinterpret_cast<char*>(&stored_key_size), sizeof stored_key_size)) return false;
  if (stored_key_size != key_size) return false;
  std::vector<char> stored_key(key_size);
  if (!file.read(stored_key.data(), static_cast<std::streamsize>(key_size))) return false;
  if (std::memcmp(stored_key.data(), key, key_size) != 0) return false;
  value.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

DiskBlobCache::DiskBlobCache(std::filesystem::path folder) : folder_(std::move(folder)) {}

// The file is named by a hash of the key; the key itself is checked on load.
std::filesystem::path DiskBlobCache::entry_path(const void* key, size_t key_size) const {
  return folder_ / fmt::format("{:016x}.blob", fnv1a(key, key_size));
}

size_t DiskBlobCache::load(const void* key, size_t key_size, void* value, size_t value_size) const {
  std::vector<char> entry;
  if (!read_entry(entry_path(key, key_size), key, key_size, entry)) return 0;
  if (value != nullptr && value_size >= entry.size()) {
    std::memcpy(value, entry.data(), entry.size());
    ++loads_;
  }
  return entry.size();
}

void DiskBlobCache::store(const void* key, size_t key_size, const void* value, size_t value_size) const {
  const uint64_t stored_key_size = key_size;
  const bool written = write_file_atomically(
      entry_path(key, key_size),
      {std::string_view(reinterpret_cast<const char*>(&stored_key_size), sizeof stored_key_size),
       std::string_view(static_cast<const char*>(key), key_size),
       std::string_view(static_cast<const char*>(value), value_size)});
  if (written) ++stores_;
}

std::filesystem::path default_pipeline_cache_folder() {
  return user_environment().pipeline_cache_folder;
}

}  // namespace onda::gpu
