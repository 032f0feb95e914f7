#include "kernels/fft/fft_description.h"

#include <fmt/format.h>

#include <stdexcept>

namespace onda::kernels::fft {

FftLayout contiguous_layout(int64_t axis_length, int64_t inner_count, int components) {
  FftLayout layout;
  layout.inner_stride = components;
  layout.axis_stride = inner_count * components;
  layout.outer_stride = axis_length * inner_count * components;
  return layout;
}

int64_t FftDescription::input_samples() const {
  if (domain == FftDomain::complex_to_real) return length / 2 + 1;
  return input_length > 0 ? input_length : length;
}

int64_t FftDescription::output_samples() const {
  return domain == FftDomain::real_to_complex ? length / 2 + 1 : length;
}

void FftDescription::validate() const {
  auto fail = [&](const std::string& what) { throw std::invalid_argument("FFT " + summary() + ": " + what); };
  if (length < 1) fail(fmt::format("length must be >= 1, got {}", length));
  if (length > (int64_t{1} << 28))
    fail(fmt::format("length {} is larger than this FFT supports (2^28)", length));
  if (outer_count < 1 || inner_count < 1) fail("outer_count and inner_count must be >= 1");
  if (input_length < 0) fail("input_length must be >= 0");
  if (input_length > 0 && domain == FftDomain::complex_to_real) {
    fail("input_length (zero-padding / truncation) is not defined for Hermitian (complex_to_real) input");
  }
  if (windowed && domain == FftDomain::complex_to_real)
    fail("a window applies to complex or real input only");
  if (dtype != DType::f32 && dtype != DType::f16) fail("dtype must be float32 or float16");
  for (const FftLayout* layout : {&input, &output}) {
    const char* which = layout == &input ? "input" : "output";
    if (layout->offset < 0 || layout->outer_stride < 0 || layout->inner_stride < 0 ||
        layout->axis_stride < 0) {
      fail(fmt::format("{} layout has a negative offset or stride", which));
    }
  }
  if (dtype == DType::f16) {
    // A complex f16 value is one packed 32-bit word: it must start on a word.
    auto word_aligned = [](const FftLayout& l) {
      return l.offset % 2 == 0 && l.outer_stride % 2 == 0 && l.inner_stride % 2 == 0 &&
             l.axis_stride % 2 == 0;
    };
    if (!input_is_real() && !word_aligned(input)) fail("float16 complex input needs even offset and strides");
    if (!output_is_real() && !word_aligned(output))
      fail("float16 complex output needs even offset and strides");
  }
}

std::string FftDescription::summary() const {
  const char* domain_name = domain == FftDomain::complex           ? "c2c"
                            : domain == FftDomain::real_to_complex ? "r2c"
                                                                   : "c2r";
  return fmt::format("[N={} {} {}{} batch={}x{} {}]", length, domain_name,
                     direction == FftDirection::forward ? "forward" : "inverse", normalize ? " 1/N" : "",
                     outer_count, inner_count, dtype_name(dtype));
}

}  // namespace onda::kernels::fft
