#pragma once
// Crash-safe file replacement: write a temp file in the same folder, fsync it,
// rename it over the target, fsync the folder. A crash at any moment leaves
// either the old file or the new one, never a torn one.

#include <cerrno>
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

/// @brief Throws storage_error for the errno a failed call just left.
[[noreturn]] inline void throw_errno(const std::string& what) {
    throw storage_error(errno, what);
}

/// @brief Replaces `path` with `data` atomically and durably; throws storage_error, and then
/// removes its temp file and leaves the old `path` as it was.
void write_file_atomically(const std::filesystem::path& path, std::string_view data);

/// @brief write_file_atomically() up to the rename, returning a descriptor of the new file open
/// for appending: a writer that goes on appending holds the new file from the rename on. The
/// caller closes it and then calls sync_directory() to make the rename durable.
[[nodiscard]] int replace_file_open(const std::filesystem::path& path, std::string_view data);

/// @brief Writes all of `data` to `fd` (retrying after EINTR and short writes); false, with errno
/// set, when a write fails. Takes no lock and allocates nothing: safe in a forked child.
bool write_all(int fd, std::string_view data) noexcept;

/// @brief The bytes of `path` from `offset` to its end into `out`; false when it cannot be opened
/// (out is then empty). A read error ends the text early.
bool read_file_from(const std::filesystem::path& path, std::uint64_t offset, std::string& out);

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
