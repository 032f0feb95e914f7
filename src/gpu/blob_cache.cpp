#include "gpu/blob_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpu/environment.h"

namespace onda::gpu {
namespace {

// 64-bit FNV-1a: names the entry's file; the key itself is checked on load.
uint64_t fnv1a(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

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
  std::error_code error;
  std::filesystem::create_directories(folder_, error);
  if (error) return;
  std::filesystem::path path = entry_path(key, key_size);
  std::filesystem::path partial = path;
  partial += fmt::format(".{}.partial", getpid());
  {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    if (!file) return;
    uint64_t stored_key_size = key_size;
    file.write(reinterpret_cast<const char*>(&stored_key_size), sizeof stored_key_size);
    file.write(static_cast<const char*>(key), static_cast<std::streamsize>(key_size));
    file.write(static_cast<const char*>(value), static_cast<std::streamsize>(value_size));
    if (!file) {
      file.close();
      std::filesystem::remove(partial, error);
      return;
    }
  }
  std::filesystem::rename(partial, path, error);
  if (error) {
    std::filesystem::remove(partial, error);
    return;
  }
  ++stores_;
}

std::filesystem::path default_pipeline_cache_folder() {
  return user_environment().pipeline_cache_folder;
}

}  // namespace onda::gpu
