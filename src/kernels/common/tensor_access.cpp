#include "kernels/common/tensor_access.h"

#include <stdexcept>

#include "kernels/shader_template.h"

namespace onda::kernels {

std::string tensor_access_wgsl(const std::string& name, int binding, DType dtype, bool writable) {
  if (!is_float(dtype)) {
    throw std::invalid_argument(name + ": expected a float16 or float32 tensor, got " + std::string(dtype_name(dtype)));
  }
  return render_shader("common/tensor_access.wgsl", {{"NAME", name},
                                                      {"BINDING", std::to_string(binding)},
                                                      {"WRITABLE", writable ? "1" : "0"},
                                                      {"F16", dtype == DType::f16 ? "1" : "0"}});
}

}  // namespace onda::kernels
