// A C++ consumer of onda: opens an ONNX model from memory on a shared Device, feeds it the inputs of
// an ONNX test case (a folder with model.onnx and test_data_set_0/input_N.pb, output_N.pb, as in
// ONNX's node tests and the model zoo) and checks its outputs against the expected ones.
//   onda_example_cpp <test case folder>      exit status 0: every output within tolerance
#include <onda/session.h>
#include <onda/tensor.h>
#include <onda/tensor_proto.h>
#include <onda/version.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <ONNX test case folder>\n", argv[0]);
    return 2;
  }
  const fs::path folder = argv[1];
  try {
    std::ifstream file(folder / "model.onnx", std::ios::binary);
    const std::vector<char> chars{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(chars.data()), chars.size());

    auto device = onda::Device::open();
    auto session = onda::Session::open_bytes(bytes, {}, device);
    std::printf("onda %s on %s\n", onda::version_string(), device->adapter().name.c_str());

    std::map<std::string, onda::Tensor> inputs;
    for (size_t i = 0; i < session->inputs().size(); ++i) {
      const auto path = folder / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb");
      inputs[session->inputs()[i].name] = onda::read_tensor_proto_file(path);
    }
    const auto outputs = session->run(inputs);
    int failed = 0;
    for (size_t i = 0; i < session->outputs().size(); ++i) {
      const std::string& name = session->outputs()[i].name;
      const onda::Tensor expected =
          onda::read_tensor_proto_file(folder / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
      const onda::Tensor& got = outputs.at(name);
      const std::vector<double> a = got.to_double(), b = expected.to_double();
      double worst = a.size() == b.size() ? 0.0 : INFINITY;
      for (size_t k = 0; k < a.size() && k < b.size(); ++k) worst = std::fmax(worst, std::fabs(a[k] - b[k]));
      std::printf("%s: %s %s, max |diff| %.3g\n", name.c_str(), onda::shape_to_string(got.shape()).c_str(),
                  std::string(onda::dtype_name(got.dtype())).c_str(), worst);
      if (!(worst <= 1e-4)) ++failed;
    }
    return failed == 0 ? 0 : 1;
  } catch (const onda::Error& e) {
    std::fprintf(stderr, "onda: %s\n", e.what());
    return 1;
  }
}
