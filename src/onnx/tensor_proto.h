// onnx::TensorProto -> HostTensor: raw bytes, the typed repeated fields (float_data, int32_data,
// int64_data) and external data. Internal to the loader: the public API does not show protobuf.
#pragma once
#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1)

#include <string>

#include "graph/host_tensor.h"
#include "onnx/external_data.h"

namespace onda::onnx_format {

// `what` names the tensor's role in messages ("initializer 'w'", "attribute 'value' of node 'c'").
// Moves raw_data out of `proto` instead of copying it. `external` may be null when external data
// is not allowed (then an external tensor is a ModelError).
HostTensor tensor_from_proto(onnx::TensorProto& proto, ExternalDataFiles* external, const std::string& what);

}  // namespace onda::onnx_format
