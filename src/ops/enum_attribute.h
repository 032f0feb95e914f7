// A string attribute with a fixed set of values (Resize's mode, Pad's mode, ...) as the kernels' enum:
// ONNX spellings are parsed here, in ops/, so kernels take enums (docs/architecture.md).
#pragma once
#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "graph/graph.h"
#include "graph/model_error.h"

namespace onda::ops {

// The enumerator `names` gives the attribute's value (`fallback` when the node lacks it); a
// ModelError "NODE: unsupported ATTRIBUTE 'VALUE'" for any other value.
template <class E>
E enum_attribute(const Node& node, const char* attribute, const char* fallback,
                 std::initializer_list<std::pair<std::string_view, E>> names) {
  const std::string value = node.attribute_string(attribute, fallback);
  for (const auto& [name, e] : names)
    if (value == name) return e;
  throw ModelError(fmt::format("{}: unsupported {} '{}'", node.describe(), attribute, value));
}

}  // namespace onda::ops
