#pragma once
// Crash-safe file replacement: write a temp file in the same folder, fsync it,
// rename it over the target, fsync the folder. A crash at any moment leaves
// either the old file or the new one, never a torn one.

#include <filesystem>
#include <string_view>

namespace ecsd::persist {

/// @brief Replaces `path` with `data` atomically and durably; throws std::system_error.
void write_file_atomically(const std::filesystem::path& path, std::string_view data);

/// @brief The temp-file name write_file_atomically uses for `path` (".NAME.tmp").
[[nodiscard]] std::filesystem::path temp_path_for(const std::filesystem::path& path);

/// @brief Removes temp files a crash left in `dir`; returns how many.
std::size_t remove_stale_temp_files(const std::filesystem::path& dir);

/// @brief fsyncs a folder so a rename or a new file in it is durable.
void sync_directory(const std::filesystem::path& dir);

}  // namespace ecsd::persist
