#include "gpu/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <system_error>

namespace onda::gpu {

bool write_file_atomically(const std::filesystem::path& path,
                           std::initializer_list<std::string_view> pieces) {
  static std::atomic<uint64_t> writes = 0;
  std::error_code error;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), error);
    if (error) return false;
  }
  std::filesystem::path partial = path;
  partial += fmt::format(".{}.{}.partial", getpid(), writes++);
  {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    if (!file) return false;
    for (std::string_view piece : pieces)
      file.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    file.close();
    if (!file) {
      std::filesystem::remove(partial, error);
      return false;
    }
  }
  std::filesystem::rename(partial, path, error);
  if (error) {
    std::filesystem::remove(partial, error);
    return false;
  }
  return true;
}

}  // namespace onda::gpu
