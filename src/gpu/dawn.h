// The one include of Dawn's C++ wrapper for the whole project (keeps its pragmas in one place).
#pragma once
#include <webgpu/webgpu_cpp.h>

#include <string>
#include <string_view>

namespace onda::gpu {

inline std::string to_string(wgpu::StringView view) {
  if (view.data == nullptr) return {};
  if (view.length == WGPU_STRLEN) return std::string(view.data);
  return std::string(view.data, view.length);
}

}  // namespace onda::gpu
