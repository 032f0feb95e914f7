#include "kernels/common/binding_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace onda::kernels {

ElementWindow element_window(const gpu::Context& context, const Tensor& t, int64_t begin, int64_t end) {
  const int64_t n = t.numel();
  begin = std::clamp<int64_t>(begin, 0, n);
  end = std::clamp<int64_t>(end, begin, n);
  if (t.dtype() == DType::f16) {
    // Kernels move float16 as whole words: the window covers both halves of its edge words (the
    // view's byte offset then stays on a word when the tensor's does).
    begin &= ~int64_t{1};
    end = std::min(n, (end + 1) & ~int64_t{1});
  }
  if (end == begin) end = std::min(n, begin + 1);
  const Tensor view = t.reshape({n}).slice_outer(begin, end);
  ElementWindow w{view.binding(context), static_cast<int64_t>(view.element_offset(context)) - begin};
  if (w.binding.size > context.limits().maxStorageBufferBindingSize) {
    throw std::logic_error(
        fmt::format("a window of {} elements binds {} bytes, over the storage binding limit of {}",
                    end - begin, w.binding.size, context.limits().maxStorageBufferBindingSize));
  }
  return w;
}

ElementWindow whole_window(const gpu::Context& context, const Tensor& t) {
  return {t.binding(context), static_cast<int64_t>(t.element_offset(context))};
}

bool fits_one_binding(const gpu::Context& context, const Tensor& t) {
  return t.binding(context).size <= context.limits().maxStorageBufferBindingSize;
}

int64_t window_capacity(const gpu::Context& context, DType dtype) {
  const uint64_t limit = context.limits().maxStorageBufferBindingSize;
  const uint64_t slack = context.limits().minStorageBufferOffsetAlignment + 16;
  if (limit <= slack) return 0;
  // Two elements spare: a float16 window is widened to whole words at both ends.
  return std::max<int64_t>(static_cast<int64_t>((limit - slack) / device_element_size(dtype)) - 2, 0);
}

int64_t rows_per_window(const gpu::Context& context, DType dtype, int64_t rows, int64_t row_elements) {
  const int64_t capacity = window_capacity(context, dtype);
  const int64_t per_window = capacity / std::max<int64_t>(row_elements, 1);
  if (per_window >= rows) return rows;
  return per_window >= 2 ? per_window / 2 * 2 : per_window;
}

}  // namespace onda::kernels
