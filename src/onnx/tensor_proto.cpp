#include "onnx/tensor_proto.h"

#include <cstring>

#include "graph/model_error.h"
#include "graph/onnx_data_type.h"

namespace onda::onnx_format {

namespace {

Shape dims_of(const onnx::TensorProto& proto, const std::string& what) {
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t dim : shape)
    if (dim < 0) throw ModelError(what + " has a negative dimension in " + shape_to_string(shape));
  return shape;
}

HostTensor from_external(const onnx::TensorProto& proto, DType dtype, Shape shape,
                         ExternalDataFiles* external, const std::string& what) {
  if (!external) throw ModelError(what + " uses external data, which is not allowed here");
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto& entry : proto.external_data()) {
    try {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset")
        offset = std::stoull(entry.value());
      else if (entry.key() == "length")
        length = std::stoull(entry.value());
    } catch (const std::logic_error&) {  // stoull: not a number / out of range
      throw ModelError(what + ": external data '" + entry.key() + "' is not a number: '" + entry.value() +
                       "'");
    }
  }
  if (location.empty()) throw ModelError(what + ": external data without a 'location'");
  return external->read(proto.name(), dtype, std::move(shape), location, offset, length);
}

// Typed fields: onnx.proto stores f16, bool, uint8 (and int32) in int32_data, one element per entry.
HostTensor from_typed_fields(const onnx::TensorProto& proto, DType dtype, Shape shape,
                             const std::string& what) {
  // Count before allocating: a corrupt dims field must not become a huge allocation.
  const int64_t numel = shape_numel(shape);
  const int field_size = dtype == DType::f32   ? proto.float_data_size()
                         : dtype == DType::i64 ? proto.int64_data_size()
                                               : proto.int32_data_size();
  if (numel != 0 && numel != field_size)
    throw ModelError(what + ": " +
                     (dtype == DType::f32   ? "float_data"
                      : dtype == DType::i64 ? "int64_data"
                                            : "int32_data") +
                     " has " + std::to_string(field_size) + " values, the shape " + shape_to_string(shape) +
                     " needs " + std::to_string(numel));
  HostTensor tensor(dtype, std::move(shape));
  if (numel == 0) return tensor;
  std::byte* out = tensor.mutable_data();
  switch (dtype) {
    case DType::f32:
      std::memcpy(out, proto.float_data().data(), tensor.byte_size());
      break;
    case DType::i64:
      std::memcpy(out, proto.int64_data().data(), tensor.byte_size());
      break;
    case DType::i32:
      std::memcpy(out, proto.int32_data().data(), tensor.byte_size());
      break;
    case DType::f16:
      for (int64_t i = 0; i < numel; ++i) {
        const uint16_t bits = static_cast<uint16_t>(proto.int32_data(static_cast<int>(i)) & 0xffff);
        std::memcpy(out + 2 * i, &bits, 2);
      }
      break;
    case DType::u8:
    case DType::boolean:
      for (int64_t i = 0; i < numel; ++i) {
        const int32_t value = proto.int32_data(static_cast<int>(i));
        out[i] = static_cast<std::byte>(dtype == DType::boolean ? value != 0 : value & 0xff);
      }
      break;
  }
  return tensor;
}

// A tensor of a type carried in a wider DType (graph/onnx_data_type.h): DOUBLE becomes float32,
// INT8 / INT16 / UINT16 int32, UINT32 / UINT64 int64 (a UINT64 above INT64_MAX is an error).
HostTensor carried_from_proto(const onnx::TensorProto& proto, DType carrier, Shape shape,
                              const std::string& what) {
  const int64_t type = proto.data_type();
  const std::string type_name = onnx_data_type_name(type);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    throw ModelError(what + ": external data of type " + type_name + " is not supported");
  const int64_t numel = shape_numel(shape);
  const size_t element_size = type == onnx_type::kInt8                                  ? 1
                              : type == onnx_type::kInt16 || type == onnx_type::kUint16 ? 2
                              : type == onnx_type::kUint32                              ? 4
                                                                                        : 8;
  // Every element as the bytes of its little-endian raw form, or from the typed field.
  auto raw_element = [&](int64_t i, auto zero) {
    decltype(zero) value;
    std::memcpy(&value, proto.raw_data().data() + i * sizeof(value), sizeof(value));
    return value;
  };
  const bool raw = proto.has_raw_data();
  if (raw && proto.raw_data().size() != static_cast<size_t>(numel) * element_size)
    throw ModelError(what + ": raw_data has " + std::to_string(proto.raw_data().size()) + " bytes, the " +
                     type_name + " shape " + shape_to_string(shape) + " needs " +
                     std::to_string(numel * static_cast<int64_t>(element_size)));
  const int field_size = type == onnx_type::kDouble                                 ? proto.double_data_size()
                         : type == onnx_type::kUint32 || type == onnx_type::kUint64 ? proto.uint64_data_size()
                                                                                    : proto.int32_data_size();
  if (!raw && numel != 0 && field_size != numel)
    throw ModelError(what + ": the " + type_name + " data has " + std::to_string(field_size) +
                     " values, the shape " + shape_to_string(shape) + " needs " + std::to_string(numel));
  if (type == onnx_type::kDouble) {
    std::vector<double> values(static_cast<size_t>(numel));
    for (int64_t i = 0; i < numel; ++i)
      values[i] = raw ? raw_element(i, double{}) : proto.double_data(static_cast<int>(i));
    return HostTensor::from_double(carrier, std::move(shape), values);
  }
  std::vector<int64_t> values(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) {
    const int index = static_cast<int>(i);
    switch (type) {
      case onnx_type::kInt8:
        values[i] = raw ? raw_element(i, int8_t{}) : static_cast<int8_t>(proto.int32_data(index));
        break;
      case onnx_type::kInt16:
        values[i] = raw ? raw_element(i, int16_t{}) : static_cast<int16_t>(proto.int32_data(index));
        break;
      case onnx_type::kUint16:
        values[i] = raw ? raw_element(i, uint16_t{}) : static_cast<uint16_t>(proto.int32_data(index));
        break;
      case onnx_type::kUint32:
        values[i] = raw ? raw_element(i, uint32_t{}) : static_cast<uint32_t>(proto.uint64_data(index));
        break;
      default: {  // UINT64
        const uint64_t value = raw ? raw_element(i, uint64_t{}) : proto.uint64_data(index);
        if (value > static_cast<uint64_t>(INT64_MAX))
          throw ModelError(what + ": UINT64 value " + std::to_string(value) +
                           " exceeds the int64 that carries UINT64 in onda");
        values[i] = static_cast<int64_t>(value);
      }
    }
  }
  return HostTensor::from_int64(carrier, std::move(shape), values);
}

}  // namespace

HostTensor tensor_from_proto(onnx::TensorProto& proto, ExternalDataFiles* external, const std::string& what) {
  const std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype)
    throw ModelError(what + " has data type " + onnx_data_type_name(proto.data_type()) +
                     ", which onda does not support (supported: FLOAT, FLOAT16, INT32, INT64, UINT8, BOOL, "
                     "and carried in them DOUBLE, INT8, INT16, UINT16, UINT32, UINT64)");
  if (proto.has_segment()) throw ModelError(what + " is a segmented tensor, which onda does not support");
  Shape shape = dims_of(proto, what);
  if (is_carried_onnx_type(proto.data_type()))
    return carried_from_proto(proto, *dtype, std::move(shape), what);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return from_external(proto, *dtype, std::move(shape), external, what);
  if (proto.has_raw_data()) {
    // Little-endian host assumed (x86, ARM): raw_data is little-endian by the spec.
    auto storage = std::make_shared<std::string>(std::move(*proto.mutable_raw_data()));
    const std::byte* bytes = reinterpret_cast<const std::byte*>(storage->data());
    const size_t byte_count = storage->size();
    try {
      return HostTensor::borrow(*dtype, std::move(shape), std::move(storage), bytes, byte_count);
    } catch (const ModelError& error) {
      throw ModelError(what + ": raw_data size does not match: " + error.what());
    }
  }
  return from_typed_fields(proto, *dtype, std::move(shape), what);
}

}  // namespace onda::onnx_format
