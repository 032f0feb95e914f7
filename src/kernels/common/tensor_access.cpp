#include "kernels/common/tensor_access.h"

#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "kernels/shader_template.h"

namespace onda::kernels {

const std::string& tensor_access_wgsl(const std::string& name, int binding, DType dtype, bool writable) {
  if (!is_float(dtype)) {
    throw std::invalid_argument(name + ": expected a float16 or float32 tensor, got " + std::string(dtype_name(dtype)));
  }
  // Kernels ask for the same few accessors on every dispatch they record: a short key finds the
  // rendered text (render_shader's own key would spell out every template value).
  const bool f16 = dtype == DType::f16;
  std::string key = name;
  key += '|';
  key += std::to_string(binding);
  key += f16 ? "|h" : "|f";
  key += writable ? "w" : "r";
  static std::mutex mutex;
  static std::unordered_map<std::string, const std::string*> known;
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find(key); it != known.end()) return *it->second;
  }
  const std::string& text = render_shader("common/tensor_access.wgsl", {{"NAME", name},
                                                                         {"BINDING", std::to_string(binding)},
                                                                         {"WRITABLE", writable ? "1" : "0"},
                                                                         {"F16", f16 ? "1" : "0"}});
  std::lock_guard lock(mutex);
  known.emplace(std::move(key), &text);  // render_shader's cache keeps the text alive
  return text;
}

}  // namespace onda::kernels
