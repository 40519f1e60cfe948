#pragma once
// Splits a byte stream into lines: LF ends a line, a CR right before it is dropped. Pure: no
// sockets, so it is tested and fuzzed on plain bytes. The caller reads straight into the
// framer's buffer (prepare/commit) and then asks next() until it answers need_more.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace ecsd::protocol {

/// @brief Default longest line, terminator excluded (1 MiB).
inline constexpr std::size_t default_max_line_bytes = std::size_t{1024} * 1024;

/// @brief What next() found in the buffer.
enum class frame_status {
    line,       ///< a complete line (terminator stripped) is in frame::line
    need_more,  ///< no complete line yet; read more bytes
    too_large,  ///< the current line is over the limit; the stream cannot be resynchronised
};

/// @brief One answer of line_framer::next().
struct frame {
    frame_status status;
    std::string_view line;  ///< valid until the next prepare()/feed()
};

/// @brief Incremental LF/CRLF line splitter with a maximum line length.
class line_framer {
  public:
    /// @brief A framer refusing lines longer than max_line_bytes.
    explicit line_framer(std::size_t max_line_bytes = default_max_line_bytes) noexcept
        : max_line_(max_line_bytes) {}

    /// @brief Writable space of at least min_bytes at the end of the buffer; fill it, then commit().
    [[nodiscard]] std::span<char> prepare(std::size_t min_bytes);
    /// @brief Marks n bytes of the last prepare() as received.
    void commit(std::size_t n) noexcept { size_ += n; }
    /// @brief Copies bytes in (prepare + commit in one call).
    void feed(std::string_view bytes);

    /// @brief The next complete line, or need_more, or too_large.
    [[nodiscard]] frame next() noexcept;

    /// @brief Changes the limit, e.g. lifted after authentication.
    void set_max_line_bytes(std::size_t n) noexcept { max_line_ = n; }
    /// @brief The current limit.
    [[nodiscard]] std::size_t max_line_bytes() const noexcept { return max_line_; }
    /// @brief Bytes received and not yet returned as lines.
    [[nodiscard]] std::size_t buffered() const noexcept { return size_ - start_; }
    /// @brief Bytes the buffer holds now, used or not (given back after a long line, see read_space.hpp).
    [[nodiscard]] std::size_t capacity() const noexcept { return buf_.size(); }

  private:
    std::string buf_;
    std::size_t start_ = 0;    // first byte of the unreturned data
    std::size_t scanned_ = 0;  // bytes after start_ already known to hold no LF
    std::size_t size_ = 0;     // bytes of buf_ holding data
    std::size_t max_line_;
};

}  // namespace ecsd::protocol
