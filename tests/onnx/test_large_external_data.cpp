// A model whose external data exceed 2 GiB (and 4 GiB): its tensors sit at offsets past 2^31 and
// 2^32 of a sparse weights file (the holes take no disk), so any 32-bit offset or length on the
// way from the file to the GPU would read the wrong bytes. One tensor below the host-constant size
// (kept on the host) and one above (uploaded from the mapping).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

void add_external_initializer(onnx::GraphProto* graph, const std::string& name, int64_t count,
                              uint64_t offset) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(count);
  tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  const std::pair<const char*, std::string> entries[] = {
      {"location", "weights.bin"}, {"offset", std::to_string(offset)}, {"length", std::to_string(count * 4)}};
  for (const auto& [key, value] : entries) {
    auto* entry = tensor->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
}

TEST(LargeExternalData, TensorsPastTwoAndFourGibibytesLoad) {
  Random random(test_seed());
  TemporaryFolder folder;
  constexpr int64_t kSmall = 1000, kLarge = 100000;
  constexpr uint64_t kSmallOffset = (uint64_t{1} << 31) + 4096, kLargeOffset = (uint64_t{1} << 32) + 65536;
  const auto w_small = random.normal(kSmall), w_large = random.normal(kLarge);
  {
    const std::string path = (folder.path() / "weights.bin").string();
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(kLargeOffset + kLarge * 4 + 4096)), 0);
    ASSERT_EQ(::pwrite(fd, w_small.data(), kSmall * 4, static_cast<off_t>(kSmallOffset)), kSmall * 4);
    ASSERT_EQ(::pwrite(fd, w_large.data(), kLarge * 4, static_cast<off_t>(kLargeOffset)), kLarge * 4);
    ::close(fd);
  }
  onnx::ModelProto model = empty_model();
  auto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "a", onnx::TensorProto::FLOAT, {kSmall});
  add_tensor_value(g->mutable_input(), "b", onnx::TensorProto::FLOAT, {kLarge});
  add_external_initializer(g, "w_small", kSmall, kSmallOffset);
  add_external_initializer(g, "w_large", kLarge, kLargeOffset);
  add_node(g, "Add", {"a", "w_small"}, {"small_sum"});
  add_node(g, "Add", {"b", "w_large"}, {"large_sum"});
  add_float_output(g, "small_sum");
  add_float_output(g, "large_sum");
  const auto a = random.normal(kSmall), b = random.normal(kLarge);
  auto session = open_session(model, folder);
  const auto out = session->run({{"a", HostTensor::from_values<float>({kSmall}, a)},
                                 {"b", HostTensor::from_values<float>({kLarge}, b)}});
  const auto small = out.at("small_sum").values<float>(), large = out.at("large_sum").values<float>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < kSmall; ++i) wrong += small[i] != a[i] + w_small[i];
  for (int64_t i = 0; i < kLarge; ++i) wrong += large[i] != b[i] + w_large[i];
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace onda::test
