#pragma once
// The server's side of WebSocket framing (RFC 6455, section 5), without sockets: frames from a
// client's byte stream come out as whole messages, as line_framer's lines do, so the TCP face's
// connection serves WebSocket by changing only how it frames. Pure code over bytes: unit tested and
// fuzzed on plain input (tests/fuzz/framer_parser_fuzz.cpp).
//
// What a client may send: masked frames (an unmasked one is a protocol error, 5.1); text messages,
// whole or in fragments; ping, pong and close. A binary message is refused (1003): ecsd speaks JSON
// text. A message longer than the limit is refused as soon as its length is known (1009), before
// its payload is read. Text is not checked for UTF-8 here: the JSON parser refuses invalid UTF-8
// with parse_error, which the client can read, where failing the connection would tell it nothing.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ecsd::protocol {

/// @brief What ws_framer::next() found.
enum class ws_status {
    text,            ///< a whole text message is in ws_frame::payload
    ping,            ///< a ping: answer a pong with the same payload
    pong,            ///< a pong: nothing to do
    closed,          ///< the client closes: ws_frame::code (1005 when it gave none); answer a close frame
    need_more,       ///< no complete frame yet; read more bytes
    too_large,       ///< the message is over the limit: close with 1009
    protocol_error,  ///< a frame breaks RFC 6455: close with ws_frame::code and ws_frame::why
};

/// @brief One answer of ws_framer::next().
struct ws_frame {
    ws_status status;
    std::string_view payload;  ///< message, ping or close reason; valid until the next prepare()/next()
    std::uint16_t code = 0;    ///< close: the client's status code; protocol_error: the one to close with
    std::string_view why;      ///< protocol_error: what was wrong
};

/// @brief Incremental decoder of a client's WebSocket frames into messages.
class ws_framer {
  public:
    explicit ws_framer(std::size_t max_message_bytes) noexcept : max_message_(max_message_bytes) {}

    /// @brief Writable space of at least min_bytes; fill it, then commit().
    [[nodiscard]] std::span<char> prepare(std::size_t min_bytes);
    void commit(std::size_t n) noexcept { size_ += n; }
    /// @brief Copies bytes in (prepare + commit in one call).
    void feed(std::string_view bytes);

    /// @brief The next message or control frame, need_more, or why the stream cannot go on.
    [[nodiscard]] ws_frame next();

    void set_max_message_bytes(std::size_t n) noexcept { max_message_ = n; }
    [[nodiscard]] std::size_t max_message_bytes() const noexcept { return max_message_; }
    /// @brief Bytes received and not yet returned, and those of a fragmented message begun.
    [[nodiscard]] std::size_t buffered() const noexcept { return size_ - start_ + fragments_.size(); }
    /// @brief Bytes the buffers hold now, used or not (given back after a long message, see
    /// read_space.hpp).
    [[nodiscard]] std::size_t capacity() const noexcept { return buf_.size() + fragments_.capacity(); }

  private:
    std::string buf_;
    std::size_t start_ = 0;
    std::size_t size_ = 0;
    std::string fragments_;      // a fragmented text message, so far
    bool in_fragments_ = false;  // a text frame without FIN began one
    bool failed_ = false;        // a protocol error or too_large: nothing more is read
    std::size_t max_message_;
};

/// @brief Opcodes of the frames the server writes.
enum class ws_opcode : std::uint8_t { text = 0x1, close = 0x8, ping = 0x9, pong = 0xA };

/// @brief The header of an unmasked frame with FIN set (servers never mask), for a payload of
/// `payload_bytes` that follows it.
[[nodiscard]] std::string ws_frame_header(ws_opcode op, std::uint64_t payload_bytes);
/// @brief A whole close frame: the status code and a reason cut to fit a control frame.
[[nodiscard]] std::string ws_close_frame(std::uint16_t code, std::string_view reason = {});

}  // namespace ecsd::protocol
