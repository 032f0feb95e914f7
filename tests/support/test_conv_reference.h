// Float64 references for Conv and ConvTranspose, written independently of the kernels' gather
// formulation: Conv as the textbook sum over taps, ConvTranspose as a scatter of every
// (input, tap) product to o = i * s - pad + k * d.
#pragma once
#include <vector>

#include "kernels/conv/conv_geometry.h"

namespace onda::test {

inline std::vector<double> reference_conv(const kernels::conv::ConvGeometry& g, const std::vector<float>& x,
                                          const std::vector<float>& w, const std::vector<float>& bias) {
  const int64_t rank = g.spatial_rank();
  auto dim = [&](const std::vector<int64_t>& v, int64_t d) { return d < 3 - rank ? 1 : v[d - (3 - rank)]; };
  auto pad = [&](int64_t d) { return d < 3 - rank ? 0 : g.pads_begin[d - (3 - rank)]; };
  int64_t in[3], out[3], k[3], s[3], dl[3], p[3];
  for (int d = 0; d < 3; ++d) {
    in[d] = dim(g.in_size, d), out[d] = dim(g.out_size, d), k[d] = dim(g.kernel, d);
    s[d] = dim(g.strides, d), dl[d] = dim(g.dilations, d), p[d] = pad(d);
  }
  const int64_t taps = k[0] * k[1] * k[2], in_pos = in[0] * in[1] * in[2], out_pos = out[0] * out[1] * out[2];
  const int64_t cin_g = g.in_channels / g.group, cout_g = g.out_channels / g.group;
  std::vector<double> y(g.batch * g.out_channels * out_pos, 0.0);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t co = 0; co < g.out_channels; ++co) {
      for (int64_t op = 0; op < out_pos; ++op)
        y[(n * g.out_channels + co) * out_pos + op] = bias.empty() ? 0.0 : bias[co];
    }
  }
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t gr = 0; gr < g.group; ++gr)
      for (int64_t cl = 0; cl < cin_g; ++cl)
        for (int64_t ol = 0; ol < cout_g; ++ol)
          for (int64_t a = 0; a < k[0]; ++a)
            for (int64_t b = 0; b < k[1]; ++b)
              for (int64_t c = 0; c < k[2]; ++c) {
                const int64_t ci = gr * cin_g + cl, co = gr * cout_g + ol, tap = (a * k[1] + b) * k[2] + c;
                const double wv =
                    g.transpose ? w[(ci * cout_g + ol) * taps + tap] : w[(co * cin_g + cl) * taps + tap];
                if (!g.transpose) {
                  for (int64_t o0 = 0; o0 < out[0]; ++o0)
                    for (int64_t o1 = 0; o1 < out[1]; ++o1)
                      for (int64_t o2 = 0; o2 < out[2]; ++o2) {
                        const int64_t i0 = o0 * s[0] + a * dl[0] - p[0], i1 = o1 * s[1] + b * dl[1] - p[1],
                                      i2 = o2 * s[2] + c * dl[2] - p[2];
                        if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                        y[(n * g.out_channels + co) * out_pos + (o0 * out[1] + o1) * out[2] + o2] +=
                            wv * x[(n * g.in_channels + ci) * in_pos + (i0 * in[1] + i1) * in[2] + i2];
                      }
                } else {
                  for (int64_t i0 = 0; i0 < in[0]; ++i0)
                    for (int64_t i1 = 0; i1 < in[1]; ++i1)
                      for (int64_t i2 = 0; i2 < in[2]; ++i2) {
                        const int64_t o0 = i0 * s[0] - p[0] + a * dl[0], o1 = i1 * s[1] - p[1] + b * dl[1],
                                      o2 = i2 * s[2] - p[2] + c * dl[2];
                        if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] || o2 < 0 || o2 >= out[2])
                          continue;
                        y[(n * g.out_channels + co) * out_pos + (o0 * out[1] + o1) * out[2] + o2] +=
                            wv * x[(n * g.in_channels + ci) * in_pos + (i0 * in[1] + i1) * in[2] + i2];
                      }
                }
              }
  return y;
}

}  // namespace onda::test
