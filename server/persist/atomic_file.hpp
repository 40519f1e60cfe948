#pragma once
// Crash-safe file replacement: write a temp file in the same folder, fsync it,
// rename it over the target, fsync the folder. A crash at any moment leaves
// either the old file or the new one, never a torn one.

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace ecsd::persist {

/// @brief A file of the data folder could not be written (disk full, I/O error, permissions):
/// what() names the operation, the file and the errno text ("No space left on device").
/// Requests that meet it are answered `storage_error`, never `internal`.
class storage_error : public std::system_error {
  public:
    storage_error(int err, const std::string& what) : std::system_error(err, std::generic_category(), what) {}
};

/// @brief Replaces `path` with `data` atomically and durably; throws storage_error, and then
/// removes its temp file and leaves the old `path` as it was.
void write_file_atomically(const std::filesystem::path& path, std::string_view data);

/// @brief The temp-file name write_file_atomically uses for `path` (".NAME.tmp").
[[nodiscard]] std::filesystem::path temp_path_for(const std::filesystem::path& path);

/// @brief Removes temp files a crash left in `dir`; returns how many.
std::size_t remove_stale_temp_files(const std::filesystem::path& dir);

/// @brief fsyncs a folder so a rename or a new file in it is durable.
void sync_directory(const std::filesystem::path& dir);

/// @brief Keeps a damaged file out of the way without deleting it: renames `path` (or, with
/// `copy`, copies it) to `path.damaged` (`path.damaged.1`, ... when that exists); returns the name.
std::filesystem::path keep_aside(const std::filesystem::path& path, bool copy);

}  // namespace ecsd::persist
