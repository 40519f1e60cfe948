#pragma once
// The read buffer both framers share (line_framer, ws_framer): bytes are read into one string, and
// a frame is a view into it until the next prepare().

#include <cstddef>
#include <cstring>
#include <span>
#include <string>

namespace ecsd::protocol::internal {

/// A buffer this large or smaller is kept between messages; a larger one (grown for one long line
/// or message) is given back once nothing is pending, or every connection that ever sent a long
/// request would hold its size (up to the limit, 1 MiB by default) for as long as it stays open.
inline constexpr std::size_t kept_read_bytes = std::size_t{128} << 10;

/// @brief Space of at least min_bytes after the data of buf ([start, size) holds data not yet
/// returned): the data moves to the front when that makes room or nothing is pending.
inline std::span<char> prepare_space(std::string& buf, std::size_t& start, std::size_t& size,
                                     std::size_t min_bytes) {
    if (start > 0 && (start == size || buf.size() - size < min_bytes)) {
        const std::size_t rest = size - start;
        if (rest > 0) std::memmove(buf.data(), buf.data() + start, rest);
        size = rest;
        start = 0;
    }
    if (size == 0 && buf.size() > kept_read_bytes) std::string().swap(buf);
    if (buf.size() - size < min_bytes) buf.resize(size + min_bytes);
    return {buf.data() + size, buf.size() - size};
}

}  // namespace ecsd::protocol::internal
