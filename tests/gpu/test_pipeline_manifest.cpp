// The pipeline manifest's file (gpu/pipeline_manifest.h): what is written comes back whole; another
// identity, a truncated file or a flipped byte read as no manifest (never a crash or a partial list);
// concurrent writers leave one writer's whole manifest; a folder that cannot be written is no error.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gpu/atomic_file.h"
#include "gpu/pipeline_manifest.h"
#include "test_onnx_support.h"

namespace onda::test {
namespace {

// `count` entries whose every field depends on `seed`: keys with values and override constants
// (a NaN and a negative zero among them: their bit patterns must survive), multi-line WGSL.
std::vector<gpu::PipelineManifestEntry> sample_entries(int seed, int count) {
  std::vector<gpu::PipelineManifestEntry> entries;
  for (int i = 0; i < count; ++i) {
    gpu::OverrideConstants constants = {{"WG", 64.0 + i},
                                        {"SCALE", seed * 0.1},
                                        {"ZERO", -0.0},
                                        {"NOT_A_NUMBER", std::numeric_limits<double>::quiet_NaN()}};
    std::map<std::string, std::string> values = {{"dtype", i % 2 ? "f16" : "f32"},
                                                 {"seed", std::to_string(seed)}};
    std::string wgsl = "// shader " + std::to_string(seed) + "/" + std::to_string(i) + "\n";
    for (int line = 0; line < 50 + i; ++line) wgsl += "fn f" + std::to_string(line) + "() {}\n";
    wgsl.push_back('\0');  // any byte may occur
    wgsl += "tail";
    entries.push_back({gpu::PipelineKey("family/kernel_" + std::to_string(i) + ".wgsl", values,
                                        i % 3 ? "main" : "reduce", constants),
                       "label " + std::to_string(i), wgsl});
  }
  return entries;
}

// Entries compared field by field, constants by bit pattern (NaN != NaN as a double).
bool same_entries(const std::vector<gpu::PipelineManifestEntry>& a,
                  const std::vector<gpu::PipelineManifestEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const gpu::PipelineKey &x = a[i].key, &y = b[i].key;
    if (x.shader != y.shader || x.values != y.values || x.entry_point != y.entry_point) return false;
    if (a[i].label != b[i].label || a[i].wgsl != b[i].wgsl) return false;
    if (x.constants.size() != y.constants.size()) return false;
    for (size_t c = 0; c < x.constants.size(); ++c) {
      if (x.constants[c].first != y.constants[c].first) return false;
      if (std::memcmp(&x.constants[c].second, &y.constants[c].second, sizeof(double)) != 0) return false;
    }
  }
  return true;
}

TEST(PipelineManifest, WrittenEntriesComeBackWhole) {
  TemporaryFolder folder;
  const std::string identity = "onda test\nadapter lavapipe\nmodel 1234\n";
  const auto path = gpu::pipeline_manifest_path(folder.path() / "manifests", identity);
  EXPECT_TRUE(gpu::read_pipeline_manifest(path, identity).empty()) << "no file yet";
  const auto entries = sample_entries(1, 25);
  ASSERT_TRUE(gpu::write_pipeline_manifest(path, identity, entries));  // creates the folder
  EXPECT_TRUE(same_entries(gpu::read_pipeline_manifest(path, identity), entries));
  EXPECT_TRUE(std::isnan(gpu::read_pipeline_manifest(path, identity)[0].key.constants[3].second));
  // Only the manifest is left in the folder (no temporary file).
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(path.parent_path())) {
    EXPECT_EQ(entry.path().extension(), ".manifest") << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 1u);
  // An empty manifest is a manifest too.
  ASSERT_TRUE(gpu::write_pipeline_manifest(path, identity, {}));
  EXPECT_TRUE(gpu::read_pipeline_manifest(path, identity).empty());
}

TEST(PipelineManifest, AnotherIdentityReadsAsNone) {
  TemporaryFolder folder;
  const auto path = folder.path() / "m.manifest";
  ASSERT_TRUE(gpu::write_pipeline_manifest(path, "model A on adapter X", sample_entries(2, 3)));
  EXPECT_TRUE(gpu::read_pipeline_manifest(path, "model A on adapter Y").empty());
  EXPECT_TRUE(gpu::read_pipeline_manifest(path, "model A on adapter").empty());
  EXPECT_EQ(gpu::read_pipeline_manifest(path, "model A on adapter X").size(), 3u);
  EXPECT_NE(gpu::pipeline_manifest_path(folder.path(), "model A on adapter X"),
            gpu::pipeline_manifest_path(folder.path(), "model A on adapter Y"));
}

// Every truncation and a flipped bit at many places: no manifest, never a crash or a shorter list.
TEST(PipelineManifest, TruncatedOrCorruptedFilesReadAsNone) {
  TemporaryFolder folder;
  const std::string identity = "identity";
  const auto path = folder.path() / "m.manifest";
  ASSERT_TRUE(gpu::write_pipeline_manifest(path, identity, sample_entries(3, 4)));
  const std::string whole = read_file_bytes(path);
  ASSERT_GT(whole.size(), 1000u);
  const auto damaged = folder.path() / "damaged.manifest";
  size_t checked = 0;
  for (size_t size = 0; size < whole.size(); size += (size < 300 || size + 300 > whole.size()) ? 1 : 37) {
    write_file(damaged, whole.substr(0, size));
    ASSERT_TRUE(gpu::read_pipeline_manifest(damaged, identity).empty())
        << "truncated to " << size << " bytes";
    ++checked;
  }
  for (size_t at = 0; at < whole.size(); at += (at < 200 || at + 200 > whole.size()) ? 1 : 23) {
    std::string bytes = whole;
    bytes[at] = static_cast<char>(bytes[at] ^ (1 << (at % 8)));
    write_file(damaged, bytes);
    ASSERT_TRUE(gpu::read_pipeline_manifest(damaged, identity).empty()) << "byte " << at << " flipped";
    ++checked;
  }
  write_file(damaged, whole + "extra");
  EXPECT_TRUE(gpu::read_pipeline_manifest(damaged, identity).empty()) << "trailing bytes";
  write_file(damaged, std::string(5000, '\xff'));
  EXPECT_TRUE(gpu::read_pipeline_manifest(damaged, identity).empty()) << "garbage";
  std::printf("  %zu damaged files read as no manifest\n", checked);
  EXPECT_EQ(gpu::read_pipeline_manifest(path, identity).size(), 4u) << "the whole file still reads";
}

// Writers on several threads (as sessions of several processes) and a reader: every read is empty
// (before the first rename) or exactly one writer's entries; the last file is one writer's whole.
TEST(PipelineManifest, ConcurrentWritersLeaveOneWholeManifest) {
  TemporaryFolder folder;
  const std::string identity = "shared model";
  const auto path = folder.path() / "manifests" / "m.manifest";
  constexpr int kWriters = 6, kWrites = 15;
  std::vector<std::vector<gpu::PipelineManifestEntry>> sets;
  for (int w = 0; w < kWriters; ++w) sets.push_back(sample_entries(100 + w, 5 + 3 * w));
  std::atomic<int> writing = kWriters;
  std::atomic<int> reads = 0, bad_reads = 0;
  std::thread reader([&] {
    while (writing > 0) {
      const auto read = gpu::read_pipeline_manifest(path, identity);
      ++reads;
      bool matches = read.empty();
      for (const auto& set : sets) matches = matches || same_entries(read, set);
      if (!matches) ++bad_reads;
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int k = 0; k < kWrites; ++k) EXPECT_TRUE(gpu::write_pipeline_manifest(path, identity, sets[w]));
      --writing;
    });
  }
  for (auto& writer : writers) writer.join();
  reader.join();
  std::printf("  %d reads during %d writes\n", reads.load(), kWriters * kWrites);
  EXPECT_EQ(bad_reads, 0);
  const auto last = gpu::read_pipeline_manifest(path, identity);
  bool whole = false;
  for (const auto& set : sets) whole = whole || same_entries(last, set);
  EXPECT_TRUE(whole);
  for (const auto& entry : fs::directory_iterator(path.parent_path()))
    EXPECT_EQ(entry.path().filename(), "m.manifest") << "left behind: " << entry.path();
}

TEST(PipelineManifest, AFolderThatCannotBeWrittenIsNoError) {
  TemporaryFolder folder;
  write_file(folder.path() / "file", "x");
  const auto path = folder.path() / "file" / "manifests" / "m.manifest";  // under a regular file
  EXPECT_FALSE(gpu::write_pipeline_manifest(path, "id", sample_entries(4, 2)));
  EXPECT_TRUE(gpu::read_pipeline_manifest(path, "id").empty());
  EXPECT_TRUE(gpu::read_pipeline_manifest(folder.path() / "missing" / "m.manifest", "id").empty());
  EXPECT_FALSE(gpu::write_file_atomically(folder.path() / "file" / "x", {"bytes"}));
}

// The writer keeps a manifest within the limits a reader accepts: the first entries.
TEST(PipelineManifest, TooManyEntriesKeepTheFirst) {
  TemporaryFolder folder;
  const auto path = folder.path() / "m.manifest";
  // Keys "k0", "k1", ... (built with fmt: GCC 12 warns falsely on "k" + std::to_string here).
  const auto key = [](size_t i) { return fmt::format("k{}", i); };
  std::vector<gpu::PipelineManifestEntry> entries;
  for (size_t i = 0; i < gpu::kMaxManifestEntries + 10; ++i)
    entries.push_back({gpu::PipelineKey(key(i)), "label", "w"});
  ASSERT_TRUE(gpu::write_pipeline_manifest(path, "id", entries));
  const auto read = gpu::read_pipeline_manifest(path, "id");
  ASSERT_EQ(read.size(), gpu::kMaxManifestEntries);
  EXPECT_EQ(read.front().key.shader, "k0");
  EXPECT_EQ(read.back().key.shader, key(gpu::kMaxManifestEntries - 1));
}

}  // namespace
}  // namespace onda::test
