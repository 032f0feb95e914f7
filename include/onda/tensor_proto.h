// ONNX TensorProto files (input_N.pb / output_N.pb of ONNX's backend tests and of the model zoo's
// test_data_set folders) in: the CLI's second tensor file format.
#pragma once
#include "onnx/onnx_loader.h"  // onda::read_tensor_proto_file (host-only code)
