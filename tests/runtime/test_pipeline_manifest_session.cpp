// The pipeline manifest through the public API (SessionOptions::pipeline_manifest,
// runtime/model_pipeline_manifest.h): a session on a fresh device (as a new process would open one)
// with the same pipeline cache folder makes every pipeline of its first run ahead of use, from the
// manifest the first session wrote, and its outputs are bit-identical; a corrupt or stale manifest
// is ignored (and rewritten), and with the option off none is read or written.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gpu/pipeline_manifest.h"
#include "harness.h"
#include "onda/device.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// y = Softmax(Relu(x W + b)) transposed, z = ReduceSum(y): a handful of kernel families.
onnx::ModelProto small_model(Random& r) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {6, 40});
  add_float_initializer(graph, "w", {40, 24}, r.normal(40 * 24));
  add_float_initializer(graph, "b", {24}, r.normal(24));
  add_node(graph, "MatMul", {"x", "w"}, {"xw"});
  add_node(graph, "Add", {"xw", "b"}, {"h"});
  add_node(graph, "Relu", {"h"}, {"r"});
  add_int_attribute(add_node(graph, "Softmax", {"r"}, {"s"}), "axis", -1);
  add_ints_attribute(add_node(graph, "Transpose", {"s"}, {"y"}), "perm", {1, 0});
  add_int_attribute(add_node(graph, "ReduceSum", {"y"}, {"z"}), "keepdims", 0);
  add_float_output(graph, "y");
  add_float_output(graph, "z");
  return model;
}

class PipelineManifestSession : public ::testing::Test {
 protected:
  void SetUp() override {
    Random r(test_seed());
    model_path_ = folder_.path() / "model.onnx";
    write_file(model_path_, small_model(r).SerializeAsString());
    inputs_ = {{"x", HostTensor::from_values<float>({6, 40}, r.normal(6 * 40))}};
  }
  fs::path cache() const { return folder_.path() / "cache"; }
  fs::path manifests() const { return cache() / "manifests"; }

  // A session on a device of its own (as in a new process) with the test's cache folder.
  std::map<std::string, HostTensor> run_fresh(RunStats& stats, bool manifest = true) {
    DeviceOptions device_options;
    device_options.pipeline_cache_folder = cache();
    SessionOptions options;
    options.pipeline_manifest = manifest;
    auto session = Session::open(model_path_, options, Device::open(device_options));
    auto outputs = session->run(inputs_);
    stats = session->last_run();
    std::printf("  %llu pipelines created, %llu made ahead from the manifest (waited %.2f ms)\n",
                static_cast<unsigned long long>(stats.pipelines_created),
                static_cast<unsigned long long>(stats.pipelines_prefetched), stats.pipeline_prefetch_wait_ms);
    return outputs;
  }

  std::vector<fs::path> manifest_files() const {
    std::vector<fs::path> files;
    if (!fs::is_directory(manifests())) return files;
    for (const auto& entry : fs::directory_iterator(manifests())) files.push_back(entry.path());
    return files;
  }

  static void expect_bit_identical(const std::map<std::string, HostTensor>& a,
                                   const std::map<std::string, HostTensor>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [name, tensor] : a) {
      const HostTensor& other = b.at(name);
      ASSERT_EQ(tensor.shape(), other.shape()) << name;
      ASSERT_EQ(tensor.byte_size(), other.byte_size()) << name;
      EXPECT_EQ(std::memcmp(tensor.data(), other.data(), tensor.byte_size()), 0) << name << " differs";
    }
  }

  TemporaryFolder folder_;
  fs::path model_path_;
  std::map<std::string, HostTensor> inputs_;
};

TEST_F(PipelineManifestSession, AFreshDeviceMakesEveryPipelineAheadWithTheSameOutputs) {
  RunStats first_stats, second_stats;
  const auto first = run_fresh(first_stats);
  EXPECT_GT(first_stats.pipelines_created, 0u);
  EXPECT_EQ(first_stats.pipelines_prefetched, 0u) << "no manifest yet";
  ASSERT_EQ(manifest_files().size(), 1u);
  const std::string written = read_file_bytes(manifest_files()[0]);

  const auto second = run_fresh(second_stats);
  EXPECT_EQ(second_stats.pipelines_created, first_stats.pipelines_created);
  EXPECT_EQ(second_stats.pipelines_prefetched, second_stats.pipelines_created);
  expect_bit_identical(first, second);
  // Nothing new was created: the manifest is left as it was.
  ASSERT_EQ(manifest_files().size(), 1u);
  EXPECT_EQ(read_file_bytes(manifest_files()[0]), written);
}

TEST_F(PipelineManifestSession, ACorruptManifestIsIgnoredAndRewritten) {
  RunStats stats;
  const auto reference = run_fresh(stats);
  ASSERT_EQ(manifest_files().size(), 1u);
  const fs::path path = manifest_files()[0];
  const std::string whole = read_file_bytes(path);
  for (const std::string& damaged :
       {whole.substr(0, whole.size() / 2), whole.substr(0, whole.size() - 1), std::string("garbage"),
        std::string(),
        whole.substr(0, 60) + std::string(1, static_cast<char>(whole[60] ^ 4)) + whole.substr(61)}) {
    write_file(path, damaged);
    expect_bit_identical(reference, run_fresh(stats));
    EXPECT_EQ(stats.pipelines_prefetched, 0u) << "a damaged manifest was used";
    EXPECT_EQ(read_file_bytes(path), whole) << "the manifest was not rewritten whole";
  }
  // A folder where the manifest file should be: no manifest, no error.
  fs::remove(path);
  fs::create_directories(path);
  expect_bit_identical(reference, run_fresh(stats));
  EXPECT_EQ(stats.pipelines_prefetched, 0u);
}

// A manifest of the right identity whose texts are not what the kernels render now (an older onda's,
// say): none of its pipelines serves a key, and the manifest is rewritten with the current texts.
TEST_F(PipelineManifestSession, StaleEntriesAreNeverUsed) {
  RunStats stats;
  const auto reference = run_fresh(stats);
  ASSERT_EQ(manifest_files().size(), 1u);
  const fs::path path = manifest_files()[0];
  // The identity is the file's first string (gpu/pipeline_manifest.cpp: the magic line, then a u64
  // byte count and the bytes).
  const std::string whole = read_file_bytes(path);
  const size_t magic = whole.find('\n') + 1;
  uint64_t identity_size = 0;
  std::memcpy(&identity_size, whole.data() + magic, sizeof identity_size);
  const std::string identity = whole.substr(magic + 8, identity_size);
  auto entries = gpu::read_pipeline_manifest(path, identity);
  ASSERT_EQ(entries.size(), stats.pipelines_created);
  for (auto& entry : entries) entry.wgsl += "\n// an older text\n";
  ASSERT_TRUE(gpu::write_pipeline_manifest(path, identity, entries));

  expect_bit_identical(reference, run_fresh(stats));
  EXPECT_EQ(stats.pipelines_prefetched, 0u) << "a stale entry served its key";
  EXPECT_EQ(read_file_bytes(path), whole) << "the manifest was not rewritten with the current texts";
  expect_bit_identical(reference, run_fresh(stats));
  EXPECT_EQ(stats.pipelines_prefetched, stats.pipelines_created);
}

TEST_F(PipelineManifestSession, OffReadsAndWritesNone) {
  RunStats stats;
  const auto reference = run_fresh(stats, false);
  EXPECT_TRUE(manifest_files().empty());
  run_fresh(stats, true);
  ASSERT_EQ(manifest_files().size(), 1u);
  expect_bit_identical(reference, run_fresh(stats, false));
  EXPECT_EQ(stats.pipelines_prefetched, 0u);
}

}  // namespace
}  // namespace onda::test
