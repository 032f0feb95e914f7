// The persistent pipeline cache's store (gpu/blob_cache.h): what Dawn stores comes back byte for
// byte, another key never reads an entry, and a folder it cannot write is no error. And through a
// real device: a second context on the same folder loads what the first one stored.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gpu/blob_cache.h"
#include "gpu/context.h"
#include "gpu/pipeline_cache.h"

namespace onda::test {
namespace {

std::filesystem::path fresh_folder(const std::string& name) {
  auto folder =
      std::filesystem::temp_directory_path() / ("onda-blob-cache-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(folder);
  return folder;
}

std::vector<char> random_bytes(size_t size, uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<char> bytes(size);
  for (char& byte : bytes) byte = static_cast<char>(generator());
  return bytes;
}

TEST(DiskBlobCache, StoredEntriesComeBackWhole) {
  auto folder = fresh_folder("roundtrip");
  gpu::DiskBlobCache cache(folder);
  std::vector<char> key = random_bytes(97, 1), value = random_bytes(100000, 2);
  EXPECT_EQ(cache.load(key.data(), key.size(), nullptr, 0), 0u) << "an empty cache has no entry";
  cache.store(key.data(), key.size(), value.data(), value.size());
  ASSERT_EQ(cache.load(key.data(), key.size(), nullptr, 0), value.size());
  std::vector<char> loaded(value.size(), 0x55);
  ASSERT_EQ(cache.load(key.data(), key.size(), loaded.data(), loaded.size()), value.size());
  EXPECT_EQ(loaded, value);
  // A second cache on the same folder (another process) reads the same entry.
  gpu::DiskBlobCache other(folder);
  std::vector<char> again(value.size());
  EXPECT_EQ(other.load(key.data(), key.size(), again.data(), again.size()), value.size());
  EXPECT_EQ(again, value);
  // No temporary file is left behind.
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    EXPECT_EQ(entry.path().extension(), ".blob") << entry.path();
  }
  std::filesystem::remove_all(folder);
}

TEST(DiskBlobCache, AnotherKeyIsAMissEvenWithTheSameFile) {
  auto folder = fresh_folder("collision");
  gpu::DiskBlobCache cache(folder);
  std::vector<char> key = random_bytes(40, 3), value = random_bytes(64, 4);
  cache.store(key.data(), key.size(), value.data(), value.size());
  std::vector<char> other_key = key;
  other_key.back() ^= 1;
  EXPECT_EQ(cache.load(other_key.data(), other_key.size(), nullptr, 0), 0u);
  // A file whose stored key differs (as a hash collision would give) reads as a miss.
  auto entry = std::filesystem::directory_iterator(folder)->path();
  std::filesystem::rename(entry, folder / "moved.blob");
  cache.store(other_key.data(), other_key.size(), value.data(), value.size());
  std::filesystem::path other_entry;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    if (e.path().filename() != "moved.blob") other_entry = e.path();
  }
  std::filesystem::copy_file(folder / "moved.blob", other_entry,
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(cache.load(other_key.data(), other_key.size(), nullptr, 0), 0u);
  std::filesystem::remove_all(folder);
}

TEST(DiskBlobCache, UnwritableFolderIsNoError) {
  auto file = fresh_folder("not-a-folder");
  { std::ofstream(file) << "x"; }
  gpu::DiskBlobCache cache(file / "pipelines");  // under a regular file: cannot be created
  std::vector<char> key = random_bytes(8, 5), value = random_bytes(8, 6);
  cache.store(key.data(), key.size(), value.data(), value.size());
  EXPECT_EQ(cache.load(key.data(), key.size(), nullptr, 0), 0u);
  EXPECT_EQ(cache.stores(), 0u);
  std::filesystem::remove(file);
}

// Dawn hands its compiled artefacts to the cache, and a later device on the same folder loads them.
TEST(DiskBlobCache, ASecondDeviceLoadsWhatTheFirstStored) {
  auto folder = fresh_folder("device");
  const char* shader = R"(
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) { data[id.x] = data[id.x] * 3.0 + 0.5; }
)";
  gpu::ContextOptions options;
  options.pipeline_cache_folder = folder;
  {
    gpu::Context context(options);
    gpu::PipelineCache pipelines(context);
    pipelines.get(shader, {}, "blob-cache-test");
    context.finish();
    ASSERT_NE(context.pipeline_blob_cache(), nullptr);
    EXPECT_GT(context.pipeline_blob_cache()->stores(), 0u) << "Dawn stored nothing";
  }
  gpu::Context context(options);
  gpu::PipelineCache pipelines(context);
  pipelines.get(shader, {}, "blob-cache-test");
  context.finish();
  EXPECT_GT(context.pipeline_blob_cache()->loads(), 0u) << "the second device loaded nothing";
  std::filesystem::remove_all(folder);
}

TEST(DiskBlobCache, AnEmptyFolderTurnsItOff) {
  gpu::ContextOptions options;
  options.pipeline_cache_folder = std::filesystem::path();
  gpu::Context context(options);
  EXPECT_EQ(context.pipeline_blob_cache(), nullptr);
}

}  // namespace
}  // namespace onda::test
