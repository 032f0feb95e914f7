// Helpers shared by the layout kernel tests: random host tensors of every dtype in host (ONNX)
// layout, uploads as views with an element offset, poisoned output views inside a larger poisoned
// buffer (so both unwritten elements and writes past the view fail), and a byte-exact CPU
// reference driven by a per-element source index.
#pragma once
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/kernel_context.h"
#include "tensor/half.h"

namespace onda::test {

inline kernels::KernelContext layout_kc() {
  return {gpu().context, gpu().pipelines};
}

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> d = {DType::f32, DType::f16, DType::i32,
                                       DType::i64, DType::u8,  DType::boolean};
  return d;
}

struct HostBytes {
  DType dtype = DType::f32;
  Shape shape;
  std::vector<uint8_t> bytes;  // host layout
  size_t element_size() const { return host_element_size(dtype); }
  const uint8_t* element(int64_t i) const { return bytes.data() + i * element_size(); }
};

inline HostBytes random_host(Random& rng, DType dtype, const Shape& shape) {
  HostBytes h{dtype, shape, std::vector<uint8_t>(element_count(shape) * host_element_size(dtype))};
  const int64_t n = element_count(shape);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = h.bytes.data() + i * h.element_size();
    switch (dtype) {
      case DType::f32: {
        const float v = static_cast<float>(rng.integer(-1000000, 1000000)) / 1024.0f;
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::f16: {
        // Any finite half, subnormals included: layout kernels move bits.
        uint16_t v = static_cast<uint16_t>(rng.integer(0, 0xFFFF));
        if ((v & 0x7C00) == 0x7C00) v &= 0xBFFF;
        std::memcpy(p, &v, 2);
        break;
      }
      case DType::i32: {
        const int32_t v = static_cast<int32_t>(rng.integer(INT32_MIN, INT32_MAX));
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::i64: {
        const int64_t v = rng.integer(INT32_MIN, INT32_MAX);
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::u8:
        *p = static_cast<uint8_t>(rng.integer(0, 255));
        break;
      case DType::boolean:
        *p = static_cast<uint8_t>(rng.integer(0, 1));
        break;
    }
  }
  return h;
}

// `h` on the GPU as a view `offset` elements into a larger buffer (offset even for f16).
inline Tensor upload_view(Random& rng, const HostBytes& h, int64_t offset) {
  const int64_t n = element_count(h.shape);
  HostBytes parent = random_host(rng, h.dtype, {offset + n + 3});
  std::memcpy(parent.bytes.data() + offset * h.element_size(), h.bytes.data(), h.bytes.size());
  Tensor t = Tensor::upload(gpu().context, gpu().pool, h.dtype, parent.shape, parent.bytes.data());
  return t.slice_outer(offset, offset + n).reshape(h.shape);
}

// A random view offset: 0 half of the time, else up to 67 elements (even for f16).
inline int64_t random_offset(Random& rng, DType dtype) {
  if (rng.integer(0, 1) == 0) return 0;
  const int64_t k = rng.integer(1, 67);
  return dtype == DType::f16 ? k & ~int64_t{1} : k;
}

// A poisoned output view `offset` elements into a poisoned buffer with `tail` elements after it.
struct OutputView {
  Tensor parent;
  Tensor view;
  int64_t offset = 0;
};

inline OutputView poisoned_view(DType dtype, const Shape& shape, int64_t offset, int64_t tail = 3) {
  OutputView o;
  o.offset = offset;
  o.parent = poisoned(dtype, {offset + element_count(shape) + tail});
  o.view = o.parent.slice_outer(offset, offset + element_count(shape)).reshape(shape);
  return o;
}

// Number of elements that differ from `expected` inside the view, plus any element outside the
// view that is no longer the poison.
inline int64_t count_mismatches(const OutputView& o, const HostBytes& expected) {
  const std::vector<uint8_t> got = o.parent.download_bytes(gpu().context);
  const Tensor probe = poisoned(expected.dtype, {1});
  const std::vector<uint8_t> poison = probe.download_bytes(gpu().context);
  const size_t es = expected.element_size();
  const int64_t n = element_count(expected.shape);
  const int64_t total = static_cast<int64_t>(got.size() / es);
  int64_t bad = 0;
  for (int64_t i = 0; i < total; ++i) {
    const uint8_t* g = got.data() + i * es;
    const bool inside = i >= o.offset && i < o.offset + n;
    const uint8_t* want = inside ? expected.element(i - o.offset) : poison.data();
    if (std::memcmp(g, want, es) != 0) ++bad;
  }
  return bad;
}

// Host bytes of `value` as `dtype` (the ONNX layout).
inline std::vector<uint8_t> host_value(DType dtype, double value) {
  std::vector<uint8_t> b(host_element_size(dtype));
  switch (dtype) {
    case DType::f32: {
      const float f = static_cast<float>(value);
      std::memcpy(b.data(), &f, 4);
      break;
    }
    case DType::f16: {
      const uint16_t h = float_to_half(static_cast<float>(value));
      std::memcpy(b.data(), &h, 2);
      break;
    }
    case DType::i32: {
      const int32_t v = static_cast<int32_t>(value);
      std::memcpy(b.data(), &v, 4);
      break;
    }
    case DType::i64: {
      const int64_t v = static_cast<int64_t>(value);
      std::memcpy(b.data(), &v, 8);
      break;
    }
    case DType::u8:
      b[0] = static_cast<uint8_t>(value);
      break;
    case DType::boolean:
      b[0] = value != 0;
      break;
  }
  return b;
}

// Byte-exact reference: output element with coordinates `c` is input element source(c), or
// `fill` when source returns -1.
inline HostBytes reference_gather(const HostBytes& in, const Shape& out_shape,
                                   const std::function<int64_t(const std::vector<int64_t>&)>& source,
                                   const std::vector<uint8_t>& fill = {}) {
  HostBytes out{in.dtype, out_shape, std::vector<uint8_t>(element_count(out_shape) * in.element_size())};
  const int64_t n = element_count(out_shape);
  std::vector<int64_t> c(out_shape.size());
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (size_t d = out_shape.size(); d-- > 0;) {
      c[d] = rest % out_shape[d];
      rest /= out_shape[d];
    }
    const int64_t s = source(c);
    std::memcpy(out.bytes.data() + i * in.element_size(), s < 0 ? fill.data() : in.element(s),
                in.element_size());
  }
  return out;
}

inline int64_t flat_index(const Shape& shape, const std::vector<int64_t>& c) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + c[d];
  return index;
}

inline Shape random_shape(Random& rng, int min_rank, int max_rank, int64_t max_dim) {
  Shape s(rng.integer(min_rank, max_rank));
  for (auto& d : s) d = rng.integer(1, max_dim);
  return s;
}

inline std::string dtype_label(DType t) {
  return std::string(dtype_name(t));
}

// Runs `record` writing into a poisoned output view and returns the mismatch count.
inline int64_t run_and_compare(Random& rng, const HostBytes& expected,
                               const std::function<void(gpu::CommandRecorder&, const Tensor&)>& record) {
  OutputView out = poisoned_view(expected.dtype, expected.shape, random_offset(rng, expected.dtype));
  gpu::CommandRecorder recorder(gpu().context);
  record(recorder, out.view);
  recorder.submit_and_wait();
  return count_mismatches(out, expected);
}

}  // namespace onda::test
