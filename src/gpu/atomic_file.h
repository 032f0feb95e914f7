// A file written whole or not at all: the bytes go to a temporary file of a name unique to this
// process and call (so concurrent writers, threads or processes, never share one), which is renamed
// over the destination. A reader sees the old file or the new one, never a mix or half of one; an
// interrupted writer leaves at most a stray temporary file, never a partial destination.
#pragma once
#include <filesystem>
#include <initializer_list>
#include <string_view>

namespace onda::gpu {

// Writes the concatenation of `pieces` to `path`, creating its folder. False (and no temporary file
// left) when the folder or file cannot be written.
bool write_file_atomically(const std::filesystem::path& path, std::initializer_list<std::string_view> pieces);

}  // namespace onda::gpu
