// Model-local functions (ModelProto.functions, IR 8+): exporters such as PyTorch's can emit a
// module as a FunctionProto and call it as a node of a custom domain. The loader replaces every
// call by the function's body (recursively), so the rest of the engine sees only ONNX ops.
#pragma once
#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1)

namespace onda::onnx_format {

// Inlines every call of `model.functions` in the main graph and its subgraphs. Values inside a
// call are renamed "<call>/<name>" so calls never collide; attribute references (ref_attr_name)
// take the caller's attribute (or are dropped, leaving the op's default). ModelError for recursion deeper
// than 32, more than a million inlined nodes, or a function body holding subgraphs.
void inline_model_functions(onnx::ModelProto& model);

}  // namespace onda::onnx_format
