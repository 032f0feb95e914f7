// The layout an ONNX STFT op hands the FFT: frames of a signal as a strided inner dimension (hop),
// a window multiplied on the way in, onesided bins out, with no framing copy.
#include <gtest/gtest.h>

#include "test_fft_reference.h"

namespace onda::test {
namespace {

using namespace fft_reference;

TEST(FftStft, WindowedFramesOfASignal) {
  Gpu& g = gpu();
  Random random(test_seed());
  struct Shape3 {
    int64_t n, hop, signal;
    DType dtype;
  };
  for (const Shape3& s : {Shape3{400, 160, 1600, DType::f32}, Shape3{401, 100, 1000, DType::f32},
                          Shape3{512, 128, 2048, DType::f16}}) {
    const int64_t batch = 2, frames = 1 + (s.signal - s.n) / s.hop, bins = s.n / 2 + 1;
    FftDescription d;
    d.length = s.n;
    d.outer_count = batch;
    d.inner_count = frames;
    d.domain = FftDomain::real_to_complex;
    d.dtype = s.dtype;
    d.windowed = true;
    d.input.outer_stride = s.signal;
    d.input.inner_stride = s.hop;
    d.input.axis_stride = 1;
    d.output = kernels::fft::contiguous_layout(bins, 1, 2);
    d.output.inner_stride = bins * 2;
    d.output.outer_stride = frames * bins * 2;
    std::vector<float> hann(s.n);
    for (int64_t i = 0; i < s.n; ++i) hann[i] = static_cast<float>(0.5 - 0.5 * std::cos(2 * M_PI * i / s.n));
    hann = round_to_dtype(hann, s.dtype);
    const std::vector<float> signal = round_to_dtype(random.normal(batch * s.signal), s.dtype);
    Tensor input = upload_floats(signal, s.dtype, {batch, s.signal});
    Tensor window = upload_floats(hann, s.dtype, {s.n});
    Tensor output = poisoned(s.dtype, {batch, frames, bins, 2});
    FftKernel kernel(g.context, g.pool, g.pipelines, d);
    gpu::CommandRecorder recorder(g.context);
    EXPECT_THROW(kernel.record(recorder, input, output), std::invalid_argument);  // window missing
    kernel.record(recorder, input, output, &window);
    recorder.submit_and_wait();
    const double e =
        rel_l2(output.download_floats(g.context), reference_output(d, signal, output.numel(), &hann));
    std::printf("stft %s %s F=%lld frames=%lld: rel L2 %.3g\n", d.summary().c_str(),
                kernels::fft::algorithm_name(kernel.plan().algorithm),
                static_cast<long long>(kernel.plan().fft_length), static_cast<long long>(frames), e);
    EXPECT_LE(e, s.dtype == DType::f16 ? 1e-3 : 1e-6);
  }
}

}  // namespace
}  // namespace onda::test
