#include "kernels/elementwise/broadcast.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace onda::kernels {

Shape broadcast_shape(std::span<const Shape> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      const int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const auto& t : shapes) all += (all.empty() ? "" : " and ") + shape_string(t);
      throw std::invalid_argument(fmt::format("shapes {} cannot be broadcast together", all));
    }
  }
  return out;
}

BroadcastLayout plan_broadcast(std::span<const Shape> inputs, const Shape& out,
                               std::span<const std::vector<int64_t>> strides) {
  if (!strides.empty() && strides.size() != inputs.size())
    throw std::invalid_argument("plan_broadcast: strides for some inputs only");
  const size_t rank = out.size();
  const int64_t count = element_count(out);
  // Full-rank strides per input.
  std::vector<std::vector<int64_t>> full(inputs.size());
  for (auto& strides : full) strides.assign(rank, 0);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Shape& s = inputs[k];
    if (s.size() > rank) throw std::invalid_argument("input has more dims than the output");
    int64_t stride = 1;
    for (size_t i = s.size(); i-- > 0;) {
      const size_t o = rank - s.size() + i;
      if (s[i] != 1 && s[i] != out[o]) {
        throw std::invalid_argument(fmt::format("shape {} does not broadcast to {}", shape_string(s), shape_string(out)));
      }
      const bool view = !strides.empty() && !strides[k].empty();
      if (view && strides[k].size() != s.size())
        throw std::invalid_argument("plan_broadcast: a view's strides must match its rank");
      full[k][o] = s[i] == 1 ? 0 : view ? strides[k][i] : stride;
      stride *= s[i];
    }
  }
  BroadcastLayout layout;
  layout.strides.assign(inputs.size(), {});
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    bool merge = !layout.out_dims.empty();
    for (size_t k = 0; k < inputs.size() && merge; ++k) {
      // Mergeable when the previous (outer) dim continues this one in memory for every input.
      merge = layout.strides[k].back() == full[k][d] * out[d];
    }
    if (merge) {
      layout.out_dims.back() *= out[d];
      for (size_t k = 0; k < inputs.size(); ++k) layout.strides[k].back() = full[k][d];
    } else {
      layout.out_dims.push_back(out[d]);
      for (size_t k = 0; k < inputs.size(); ++k) layout.strides[k].push_back(full[k][d]);
    }
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int64_t n = element_count(inputs[k]);
    // A view walks contiguously only when its coalesced layout is one run of stride 1.
    const bool view = !strides.empty() && !strides[k].empty();
    const bool contiguous = !view || (layout.strides[k].size() <= 1 &&
                                      (layout.strides[k].empty() || layout.strides[k][0] == 1));
    const std::vector<int64_t>& st = layout.strides[k];
    const bool rows = !st.empty() && st.back() == 1 && layout.out_dims.back() % 4 == 0 &&
                      std::all_of(st.begin(), st.end() - 1, [](int64_t v) { return v % 4 == 0; });
    layout.modes.push_back(n == count && contiguous ? BroadcastMode::Same
                           : n == 1                 ? BroadcastMode::Scalar
                           : rows                   ? BroadcastMode::Rows
                                                    : BroadcastMode::Strided);
  }
  return layout;
}

}  // namespace onda::kernels
