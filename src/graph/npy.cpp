#include "graph/npy.h"

#include <cstring>
#include <fstream>
#include <optional>

#include "graph/model_error.h"

namespace onda {

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes, then major, minor version

std::optional<DType> dtype_from_descr(const std::string& descr) {
  if (descr == "<f4") return DType::f32;
  if (descr == "<f2") return DType::f16;
  if (descr == "<i4") return DType::i32;
  if (descr == "<i8") return DType::i64;
  if (descr == "|u1" || descr == "<u1" || descr == "u1") return DType::u8;
  if (descr == "|b1" || descr == "<b1" || descr == "b1" || descr == "?") return DType::boolean;
  return std::nullopt;
}

std::string descr_of(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "<f4";
    case DType::f16:
      return "<f2";
    case DType::i32:
      return "<i4";
    case DType::i64:
      return "<i8";
    case DType::u8:
      return "|u1";
    case DType::boolean:
      return "|b1";
  }
  return "?";
}

// The header is a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// numpy writes it in this form; we read the three keys without a general Python parser.
class HeaderReader {
 public:
  HeaderReader(std::string header, const std::string& what) : header_(std::move(header)), what_(what) {}

  std::string value_text(const std::string& key) const {
    size_t at = find_key(key);
    at = header_.find(':', at);
    if (at == std::string::npos) fail("no value for '" + key + "'");
    ++at;
    while (at < header_.size() && header_[at] == ' ') ++at;
    if (at >= header_.size()) fail("no value for '" + key + "'");
    const char open = header_[at];
    size_t end;
    if (open == '\'' || open == '"') {
      end = header_.find(open, at + 1);
      if (end == std::string::npos) fail("unterminated string for '" + key + "'");
      return header_.substr(at + 1, end - at - 1);
    }
    if (open == '(') {
      end = header_.find(')', at);
      if (end == std::string::npos) fail("unterminated shape tuple");
      return header_.substr(at, end - at + 1);
    }
    end = header_.find_first_of(",}", at);
    if (end == std::string::npos) fail("no end for the value of '" + key + "'");
    std::string text = header_.substr(at, end - at);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw NpyError(what_ + ": bad .npy header (" + problem + "): " + header_);
  }

 private:
  size_t find_key(const std::string& key) const {
    for (const char quote : {'\'', '"'}) {
      const size_t at = header_.find(quote + key + quote);
      if (at != std::string::npos) return at + key.size() + 2;
    }
    fail("no key '" + key + "'");
  }

  std::string header_;
  const std::string& what_;
};

Shape parse_shape_tuple(const std::string& text, const HeaderReader& reader) {
  // "()", "(5,)", "(1, 201, 321)"
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') reader.fail("shape is not a tuple");
  Shape shape;
  size_t at = 1;
  while (at < text.size() - 1) {
    while (at < text.size() - 1 && (text[at] == ' ' || text[at] == ',')) ++at;
    if (at >= text.size() - 1) break;
    size_t end = at;
    while (end < text.size() - 1 && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == at || end - at > 18) reader.fail("bad shape dimension in " + text);
    shape.push_back(std::stoll(text.substr(at, end - at)));
    at = end;
    // Python writes "(2L, 3L)" in old files.
    if (at < text.size() - 1 && text[at] == 'L') ++at;
  }
  return shape;
}

uint32_t read_le(const std::byte* bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = 0; i < count; ++i) value |= static_cast<uint32_t>(bytes[i]) << (8 * i);
  return value;
}

}  // namespace

namespace {

HostTensor parse_npy_unchecked(std::span<const std::byte> bytes, const std::string& what) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    throw NpyError(what + ": not a .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<int>(bytes[6]);
  size_t header_length, header_start;
  if (major == 1) {
    header_length = read_le(bytes.data() + 8, 2);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw NpyError(what + ": truncated .npy header");
    header_length = read_le(bytes.data() + 8, 4);
    header_start = 12;
  } else {
    throw NpyError(what + ": unsupported .npy format version " + std::to_string(major));
  }
  if (bytes.size() < header_start + header_length) throw NpyError(what + ": truncated .npy header");
  const HeaderReader reader(
      std::string(reinterpret_cast<const char*>(bytes.data() + header_start), header_length), what);

  const std::string descr = reader.value_text("descr");
  const std::optional<DType> dtype = dtype_from_descr(descr);
  if (!dtype) {
    const bool big_endian = !descr.empty() && descr[0] == '>';
    throw NpyError(what + ": .npy dtype '" + descr + "' is not supported" +
                   (big_endian ? " (big-endian)" : "") +
                   "; supported: float32, float16, int32, int64, uint8, bool");
  }
  const std::string fortran = reader.value_text("fortran_order");
  if (fortran == "True")
    throw NpyError(what + ": Fortran-order .npy arrays are not supported (save in C order)");
  if (fortran != "False") reader.fail("fortran_order is neither True nor False");
  Shape shape = parse_shape_tuple(reader.value_text("shape"), reader);

  const size_t data_start = header_start + header_length;
  const size_t expected = static_cast<size_t>(shape_numel(shape)) * host_element_size(*dtype);
  const size_t available = bytes.size() - data_start;
  if (available != expected)
    throw NpyError(what + ": a " + std::string(dtype_name(*dtype)) + " array of shape " +
                   shape_to_string(shape) + " needs " + std::to_string(expected) +
                   " data bytes, the file has " + std::to_string(available));
  HostTensor tensor = HostTensor::copy_of(*dtype, std::move(shape), bytes.data() + data_start, expected);
  if (*dtype == DType::boolean) {  // numpy bools are 0/1; normalise anything else
    std::byte* data = tensor.mutable_data();
    for (size_t i = 0; i < expected; ++i) data[i] = data[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  }
  return tensor;
}

}  // namespace

HostTensor parse_npy(std::span<const std::byte> bytes, const std::string& what) {
  try {
    return parse_npy_unchecked(bytes, what);
  } catch (const ModelError& error) {  // shape arithmetic (overflow, negative dims) from HostTensor
    throw NpyError(what + ": " + error.what());
  }
}

std::string serialize_npy(const HostTensor& tensor) {
  if (!tensor.defined()) throw NpyError("cannot write an undefined tensor as .npy");
  std::string shape_text = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i) {
    shape_text += std::to_string(tensor.shape()[i]);
    shape_text += tensor.shape().size() == 1 ? "," : (i + 1 < tensor.shape().size() ? ", " : "");
  }
  shape_text += ")";
  std::string header =
      "{'descr': '" + descr_of(tensor.dtype()) + "', 'fortran_order': False, 'shape': " + shape_text + ", }";
  // Pad with spaces and end with '\n' so the data starts at a multiple of 64 bytes (as numpy does).
  const bool version2 = header.size() + 1 + 10 > 65535;
  const size_t prefix = version2 ? 12 : 10;
  const size_t total_header = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total_header - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out(kMagic, 6);
  out += static_cast<char>(version2 ? 2 : 1);
  out += '\0';
  const uint32_t length = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < (version2 ? 4u : 2u); ++i) out += static_cast<char>((length >> (8 * i)) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(tensor.data()), tensor.byte_size());
  return out;
}

HostTensor read_npy(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw NpyError(path.string() + ": cannot open the .npy file");
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw NpyError(path.string() + ": read error");
  return parse_npy(std::as_bytes(std::span(bytes.data(), bytes.size())), path.string());
}

void write_npy(const std::filesystem::path& path, const HostTensor& tensor) {
  const std::string bytes = serialize_npy(tensor);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw NpyError(path.string() + ": cannot create the .npy file");
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) throw NpyError(path.string() + ": write error");
}

}  // namespace onda
