// Tensors larger than one storage binding (maxStorageBufferBindingSize: 128 MiB by WebGPU's
// default, and on lavapipe and many laptop and browser adapters) are processed in pieces, each
// piece binding only the window of flat elements it reads or writes. A window's binding starts at
// the largest offset below it that minStorageBufferOffsetAlignment allows (usually 256 bytes), so
// the kernel adds `offset` to the tensor's flat indices instead of assuming element 0 at the start.
#pragma once
#include <cstdint>

#include "gpu/command_recorder.h"
#include "gpu/context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

struct ElementWindow {
  gpu::BufferBinding binding;
  int64_t offset = 0;  // added to a flat index of the tensor: the index within the binding
};

// The binding of the flat elements [begin, end) of `t` (float16 widened to whole 32-bit words).
// Throws std::logic_error when that binding exceeds the device's limit: callers plan windows with
// window_capacity, so an oversized one is a planning error, never silently bound.
ElementWindow element_window(const gpu::Context& context, const Tensor& t, int64_t begin, int64_t end);

// The whole tensor as one window, as Tensor::binding / element_offset give it.
ElementWindow whole_window(const gpu::Context& context, const Tensor& t);

// Whether `t` fits one binding whole.
bool fits_one_binding(const gpu::Context& context, const Tensor& t);

// How many consecutive elements of `dtype` a window may span and still fit one binding, wherever it
// starts (the binding may begin up to one offset alignment early and ends on a 16-byte boundary).
int64_t window_capacity(const gpu::Context& context, DType dtype);

// How many of `rows` rows of `row_elements` elements of `dtype` one window takes so that a view of
// whole rows fits one binding: all of them where they fit, else an even count (float16 views stay on
// whole words) or 1; 0 when one row alone exceeds the binding limit.
int64_t rows_per_window(const gpu::Context& context, DType dtype, int64_t rows, int64_t row_elements);

}  // namespace onda::kernels
