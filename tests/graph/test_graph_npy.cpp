// .npy read/write: round trips for every supported dtype on random shapes and values, interop with
// numpy itself (when a Python with numpy is present), and clear errors for what is not supported.
#include <cstring>

#include "graph/model_error.h"
#include "graph/npy.h"
#include "harness.h"
#include "tensor/half.h"
#include "test_onnx_support.h"

namespace onda {
namespace {

const DType kAllDtypes[] = {DType::f32, DType::f16, DType::i32, DType::i64, DType::u8, DType::boolean};

// Random values of `dtype` (bools as 0/1, halves as finite f16 bit patterns).
HostTensor random_tensor(DType dtype, const Shape& shape, std::mt19937_64& engine) {
  HostTensor tensor(dtype, shape);
  std::byte* data = tensor.mutable_data();
  std::uniform_real_distribution<float> real(-1000.0f, 1000.0f);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    switch (dtype) {
      case DType::f32: {
        const float value = real(engine);
        std::memcpy(data + 4 * i, &value, 4);
        break;
      }
      case DType::f16: {
        const uint16_t bits = float_to_half(real(engine));
        std::memcpy(data + 2 * i, &bits, 2);
        break;
      }
      case DType::i32: {
        const int32_t value = static_cast<int32_t>(engine());
        std::memcpy(data + 4 * i, &value, 4);
        break;
      }
      case DType::i64: {
        const int64_t value = static_cast<int64_t>(engine());
        std::memcpy(data + 8 * i, &value, 8);
        break;
      }
      case DType::u8:
        data[i] = static_cast<std::byte>(engine() & 0xff);
        break;
      case DType::boolean:
        data[i] = static_cast<std::byte>(engine() & 1);
        break;
    }
  }
  return tensor;
}

Shape random_shape(std::mt19937_64& engine) {
  Shape shape(engine() % 5);                                            // rank 0..4
  for (int64_t& dim : shape) dim = static_cast<int64_t>(engine() % 7);  // zero-size dims included
  return shape;
}

void expect_same_tensor(const HostTensor& actual, const HostTensor& expected, const std::string& what) {
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  ASSERT_EQ(actual.byte_size(), expected.byte_size()) << what;
  EXPECT_EQ(std::memcmp(actual.data(), expected.data(), expected.byte_size()), 0) << what << ": bytes differ";
}

TEST(GraphNpy, RoundTripEveryDtypeRandomShapes) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 engine(seed);
  test::TemporaryFolder folder;
  int cases = 0;
  for (DType dtype : kAllDtypes) {
    for (int repeat = 0; repeat < 8; ++repeat) {
      const Shape shape = repeat == 0 ? Shape{} : random_shape(engine);
      const HostTensor original = random_tensor(dtype, shape, engine);
      const std::filesystem::path path = folder.path() / "t.npy";
      write_npy(path, original);
      expect_same_tensor(
          read_npy(path), original,
          std::string(dtype_name(dtype)) + " " + shape_to_string(shape) + " seed " + std::to_string(seed));
      // numpy aligns the data start to 64 bytes; so do we.
      const std::string bytes = serialize_npy(original);
      EXPECT_EQ((bytes.size() - original.byte_size()) % 64, 0u);
      ++cases;
    }
  }
  std::printf("npy round trips: %d (seed %llu)\n", cases, static_cast<unsigned long long>(seed));
}

// Our files read by numpy and numpy's files read by us, byte for byte.
TEST(GraphNpy, InteroperatesWithNumpy) {
  const std::optional<std::string> python = test::python_with_numpy();
  if (!python) GTEST_SKIP() << "no python3 with numpy (apt-get install python3-numpy)";
  std::mt19937_64 engine(test::test_seed());
  test::TemporaryFolder folder;
  std::vector<HostTensor> originals;
  for (DType dtype : kAllDtypes) {
    originals.push_back(random_tensor(dtype, {2, 3, 5}, engine));
    write_npy(folder.path() / (std::string(dtype_name(dtype)) + ".npy"), originals.back());
  }
  // numpy loads each of our files, checks dtype and shape, and saves it again with its own writer.
  const std::string script =
      "import numpy as np, sys, os\n"
      "d = sys.argv[1]\n"
      "for name in ['float32', 'float16', 'int32', 'int64', 'uint8', 'bool']:\n"
      "    a = np.load(os.path.join(d, name + '.npy'))\n"
      "    assert a.dtype == np.dtype(name) and a.shape == (2, 3, 5), (name, a.dtype, a.shape)\n"
      "    np.save(os.path.join(d, name + '.numpy.npy'), np.ascontiguousarray(a))\n";
  test::write_file(folder.path() / "interop.py", script);
  const std::string command =
      *python + " " + (folder.path() / "interop.py").string() + " " + folder.path().string();
  ASSERT_EQ(std::system(command.c_str()), 0) << "numpy could not read our .npy files";
  for (size_t i = 0; i < originals.size(); ++i) {
    const std::string name = std::string(dtype_name(kAllDtypes[i])) + ".numpy.npy";
    expect_same_tensor(read_npy(folder.path() / name), originals[i], name);
  }
}

std::string npy_with_header(const std::string& dict, size_t data_bytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(data_bytes, '\0');
}

void expect_npy_error(const std::string& bytes, const std::string& expected_text) {
  try {
    parse_npy(std::as_bytes(std::span(bytes.data(), bytes.size())), "case.npy");
    ADD_FAILURE() << "no error; expected one mentioning '" << expected_text << "'";
  } catch (const NpyError& error) {
    EXPECT_NE(std::string(error.what()).find(expected_text), std::string::npos) << error.what();
  }
}

TEST(GraphNpy, RejectsWhatItCannotHold) {
  expect_npy_error(npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24),
                   "Fortran");
  expect_npy_error(npy_with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24),
                   "big-endian");
  expect_npy_error(npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48),
                   "'<f8'");
  expect_npy_error(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20),
                   "needs 24");
  expect_npy_error(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28),
                   "needs 24");
  expect_npy_error(npy_with_header("{'descr': '<f4', 'fortran_order': False, }", 4), "no key 'shape'");
  expect_npy_error("not a numpy file at all", "magic");
  EXPECT_THROW(read_npy("/nonexistent/folder/x.npy"), NpyError);
}

TEST(GraphNpy, ReadsOneDimensionalAndScalarHeaders) {
  // numpy writes "(5,)" for one dimension and "()" for a scalar.
  const std::string vector_bytes =
      npy_with_header("{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", 40);
  const HostTensor vector = parse_npy(std::as_bytes(std::span(vector_bytes)), "vector.npy");
  EXPECT_EQ(vector.shape(), Shape{5});
  EXPECT_EQ(vector.dtype(), DType::i64);
  const std::string scalar_bytes =
      npy_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1);
  const HostTensor scalar = parse_npy(std::as_bytes(std::span(scalar_bytes)), "scalar.npy");
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.dtype(), DType::boolean);
}

// Random byte mutations of valid files: a tensor or an NpyError, never another failure.
TEST(GraphNpy, MutatedFilesFailCleanly) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 engine(seed);
  int read = 0, rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const DType dtype = kAllDtypes[engine() % 6];
    std::string bytes = serialize_npy(random_tensor(dtype, random_shape(engine), engine));
    // Mutate the header mostly: that is where the parsing is.
    for (int m = 0; m < 1 + static_cast<int>(engine() % 3); ++m)
      bytes[engine() % std::min<size_t>(bytes.size(), 80)] = static_cast<char>(engine() & 0xff);
    if (engine() % 4 == 0) bytes.resize(engine() % bytes.size());
    try {
      parse_npy(std::as_bytes(std::span(bytes)), "mutated.npy");
      ++read;
    } catch (const NpyError&) {
      ++rejected;
    } catch (const std::exception& error) {
      ADD_FAILURE() << "seed " << seed << " trial " << trial << ": " << error.what();
    }
  }
  std::printf("mutated .npy files: %d read, %d rejected with NpyError\n", read, rejected);
}

}  // namespace
}  // namespace onda
