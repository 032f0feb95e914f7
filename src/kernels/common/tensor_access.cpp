#include "kernels/common/tensor_access.h"

#include <stdexcept>

#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

// A token: the prefix, then NAME BINDING f|h r|w, separated by spaces (names hold no spaces).
constexpr std::string_view kTokenPrefix = "@tensor_access ";

void require_float(const std::string& name, DType dtype) {
  if (!is_float(dtype)) {
    throw std::invalid_argument(name + ": expected a float16 or float32 tensor, got " + std::string(dtype_name(dtype)));
  }
}

std::string render_access(const std::string& name, const std::string& binding, bool f16, bool writable) {
  return render_shader(
      "common/tensor_access.wgsl",
      {{"NAME", name}, {"BINDING", binding}, {"WRITABLE", writable ? "1" : "0"}, {"F16", f16 ? "1" : "0"}});
}

}  // namespace

std::string tensor_access(const std::string& name, int binding, DType dtype, bool writable) {
  require_float(name, dtype);
  std::string token(kTokenPrefix);
  token += name;
  token += ' ';
  token += std::to_string(binding);
  token += dtype == DType::f16 ? " h" : " f";
  token += writable ? " w" : " r";
  return token;
}

std::string tensor_access_wgsl(const std::string& name, int binding, DType dtype, bool writable) {
  require_float(name, dtype);
  return render_access(name, std::to_string(binding), dtype == DType::f16, writable);
}

std::optional<std::string> expand_tensor_access(std::string_view value) {
  if (!value.starts_with(kTokenPrefix)) return std::nullopt;
  value.remove_prefix(kTokenPrefix.size());
  const size_t a = value.find(' '), b = value.find(' ', a + 1), c = value.find(' ', b + 1);
  if (a == std::string_view::npos || b == std::string_view::npos || c == std::string_view::npos) {
    throw std::invalid_argument("malformed tensor accessor token '" + std::string(value) + "'");
  }
  return render_access(std::string(value.substr(0, a)), std::string(value.substr(a + 1, b - a - 1)),
                       value[b + 1] == 'h', value[c + 1] == 'w');
}

}  // namespace onda::kernels
