// Errors raised by the GPU layer (public types, include/onda/error.h). Every failure the device
// reports (validation, out of memory, internal, device loss) becomes one of these at the next
// synchronisation point, so a caller never reads a silently wrong answer.
#pragma once
#include "onda/error.h"

namespace onda::gpu {

using onda::DeviceLimitError;
using onda::DeviceLostError;
using onda::GpuError;
using onda::OutOfMemoryError;

}  // namespace onda::gpu
