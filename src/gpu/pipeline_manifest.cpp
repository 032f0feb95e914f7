#include "gpu/pipeline_manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <system_error>

#include "gpu/atomic_file.h"
#include "gpu/fnv1a.h"

namespace onda::gpu {
namespace {

// The layout: kMagic, then the identity and the entries, each string as a u64 byte count and its
// bytes, counts as u64 (host byte order: the file is the machine's own cache), constants' values as
// their 64-bit patterns; last, a u64 FNV-1a of every byte before it.
constexpr std::string_view kMagic = "onda pipeline manifest 1\n";

class Writer {
 public:
  void number(uint64_t value) { bytes_.append(reinterpret_cast<const char*>(&value), sizeof value); }
  void text(std::string_view value) {
    number(value.size());
    bytes_.append(value);
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

// Reads what Writer wrote; every read checks the bytes left, so a damaged file ends as a failure.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  std::optional<uint64_t> number() {
    if (bytes_.size() < sizeof(uint64_t)) return std::nullopt;
    uint64_t value = 0;
    std::memcpy(&value, bytes_.data(), sizeof value);
    bytes_.remove_prefix(sizeof value);
    return value;
  }
  std::optional<std::string> text() {
    const std::optional<uint64_t> size = number();
    if (!size || *size > bytes_.size()) return std::nullopt;
    std::string value(bytes_.substr(0, *size));
    bytes_.remove_prefix(*size);
    return value;
  }
  // A count of items that each take at least `min_item_bytes`: more than the bytes left can hold is
  // damage, not a reason to reserve memory.
  std::optional<uint64_t> count(size_t min_item_bytes) {
    const std::optional<uint64_t> n = number();
    if (!n || *n > bytes_.size() / min_item_bytes) return std::nullopt;
    return n;
  }
  bool done() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

std::optional<PipelineManifestEntry> read_entry(Reader& reader) {
  std::optional<std::string> shader = reader.text();
  if (!shader) return std::nullopt;
  std::map<std::string, std::string> values;
  const std::optional<uint64_t> value_count = reader.count(2 * sizeof(uint64_t));
  if (!value_count) return std::nullopt;
  for (uint64_t i = 0; i < *value_count; ++i) {
    std::optional<std::string> name = reader.text(), value = reader.text();
    if (!name || !value) return std::nullopt;
    values.emplace(std::move(*name), std::move(*value));
  }
  std::optional<std::string> entry_point = reader.text();
  if (!entry_point) return std::nullopt;
  OverrideConstants constants;
  const std::optional<uint64_t> constant_count = reader.count(2 * sizeof(uint64_t));
  if (!constant_count) return std::nullopt;
  for (uint64_t i = 0; i < *constant_count; ++i) {
    std::optional<std::string> name = reader.text();
    std::optional<uint64_t> bits = reader.number();
    if (!name || !bits) return std::nullopt;
    constants.emplace_back(std::move(*name), std::bit_cast<double>(*bits));
  }
  std::optional<std::string> label = reader.text(), wgsl = reader.text();
  if (!label || !wgsl) return std::nullopt;
  return PipelineManifestEntry{
      PipelineKey{std::move(*shader), std::move(values), std::move(*entry_point), std::move(constants)},
      std::move(*label), std::move(*wgsl)};
}

void write_entry(Writer& writer, const PipelineManifestEntry& entry) {
  writer.text(entry.key.shader);
  writer.number(entry.key.values.size());
  for (const auto& [name, value] : entry.key.values) {
    writer.text(name);
    writer.text(value);
  }
  writer.text(entry.key.entry_point);
  writer.number(entry.key.constants.size());
  for (const auto& [name, value] : entry.key.constants) {
    writer.text(name);
    writer.number(std::bit_cast<uint64_t>(value));
  }
  writer.text(entry.label);
  writer.text(entry.wgsl);
}

std::optional<std::string> read_whole_file(const std::filesystem::path& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > kMaxManifestBytes) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::string bytes(size, '\0');
  if (!file.read(bytes.data(), static_cast<std::streamsize>(size))) return std::nullopt;
  return bytes;
}

}  // namespace

std::vector<PipelineManifestEntry> read_pipeline_manifest(const std::filesystem::path& path,
                                                          const std::string& identity) {
  const std::optional<std::string> file = read_whole_file(path);
  if (!file || file->size() < kMagic.size() + sizeof(uint64_t)) return {};
  std::string_view bytes(*file);
  if (!bytes.starts_with(kMagic)) return {};
  const std::string_view body = bytes.substr(0, bytes.size() - sizeof(uint64_t));
  uint64_t checksum = 0;
  std::memcpy(&checksum, bytes.data() + body.size(), sizeof checksum);
  if (fnv1a(body.data(), body.size()) != checksum) return {};
  Reader reader(body.substr(kMagic.size()));
  const std::optional<std::string> stored_identity = reader.text();
  if (!stored_identity || *stored_identity != identity) return {};
  // An entry takes at least the sizes of its four strings and two counts.
  const std::optional<uint64_t> count = reader.count(6 * sizeof(uint64_t));
  if (!count || *count > kMaxManifestEntries) return {};
  std::vector<PipelineManifestEntry> entries;
  entries.reserve(*count);
  for (uint64_t i = 0; i < *count; ++i) {
    std::optional<PipelineManifestEntry> entry = read_entry(reader);
    if (!entry) return {};
    entries.push_back(std::move(*entry));
  }
  if (!reader.done()) return {};
  return entries;
}

bool write_pipeline_manifest(const std::filesystem::path& path, const std::string& identity,
                             const std::vector<PipelineManifestEntry>& entries) {
  Writer writer;
  writer.bytes().append(kMagic);
  writer.text(identity);
  // The first entries (the ones a run needs first) are kept within the limits.
  size_t count = 0, estimate = 0;
  for (; count < std::min(entries.size(), kMaxManifestEntries); ++count) {
    const PipelineManifestEntry& entry = entries[count];
    estimate += entry.wgsl.size() + entry.key.shader.size() + entry.label.size() + 1024;
    if (estimate > kMaxManifestBytes / 2) break;
  }
  writer.number(count);
  for (size_t i = 0; i < count; ++i) write_entry(writer, entries[i]);
  std::string& body = writer.bytes();
  if (body.size() + sizeof(uint64_t) > kMaxManifestBytes) return false;
  const uint64_t checksum = fnv1a(body.data(), body.size());
  return write_file_atomically(
      path, {body, std::string_view(reinterpret_cast<const char*>(&checksum), sizeof checksum)});
}

std::filesystem::path pipeline_manifest_path(const std::filesystem::path& folder,
                                             const std::string& identity) {
  return folder / fmt::format("{:016x}.manifest", fnv1a(identity.data(), identity.size()));
}

}  // namespace onda::gpu
