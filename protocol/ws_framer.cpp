#include "ecsd/protocol/ws_framer.hpp"

#include <cstring>

#include "read_space.hpp"

namespace ecsd::protocol {
namespace {

ws_frame got(ws_status status, std::string_view payload = {}, std::uint16_t code = 0) {
    return {status, payload, code, {}};
}

ws_frame broken(std::uint16_t code, std::string_view why) {
    return {ws_status::protocol_error, {}, code, why};
}

}  // namespace

std::span<char> ws_framer::prepare(std::size_t min_bytes) {
    return internal::prepare_space(buf_, start_, size_, min_bytes);
}

void ws_framer::feed(std::string_view bytes) {
    auto space = prepare(bytes.size());
    if (!bytes.empty()) std::memcpy(space.data(), bytes.data(), bytes.size());
    commit(bytes.size());
}

ws_frame ws_framer::next() {
    if (!in_fragments_ && !fragments_.empty()) {  // the message returned last time
        fragments_.clear();
        if (fragments_.capacity() > internal::kept_read_bytes) fragments_.shrink_to_fit();
    }
    for (;;) {
        if (failed_) return got(ws_status::need_more);
        auto* p = reinterpret_cast<unsigned char*>(buf_.data() + start_);
        const std::size_t avail = size_ - start_;
        if (avail < 2) return got(ws_status::need_more);
        const bool fin = (p[0] & 0x80U) != 0;
        const unsigned op = p[0] & 0x0FU;
        const bool masked = (p[1] & 0x80U) != 0;
        const unsigned len7 = p[1] & 0x7FU;
        failed_ = true;  // until the frame is known to be well formed
        if ((p[0] & 0x70U) != 0) return broken(1002, "reserved bits set: no extension was agreed");
        if (!masked) return broken(1002, "a client's frames must be masked");
        const bool control = (op & 0x8U) != 0;
        if (control && op != 0x8 && op != 0x9 && op != 0xA) return broken(1002, "unknown control opcode");
        if (!control && op > 0x2) return broken(1002, "unknown data opcode");
        if (control && (!fin || len7 > 125))
            return broken(1002, "a control frame must be whole and at most 125 bytes");
        if (op == 0x2) return broken(1003, "binary messages are not accepted: send JSON-RPC as text");
        if (op == 0x0 && !in_fragments_) return broken(1002, "a continuation frame without a message");
        if (op == 0x1 && in_fragments_) return broken(1002, "a new message inside a fragmented one");
        failed_ = false;
        std::size_t header = 2;
        std::uint64_t length = len7;
        if (len7 == 126) {
            if (avail < 4) return got(ws_status::need_more);
            length = (std::uint64_t{p[2]} << 8U) | p[3];
            header = 4;
        } else if (len7 == 127) {
            if (avail < 10) return got(ws_status::need_more);
            length = 0;
            for (int i = 2; i < 10; ++i) length = (length << 8U) | p[i];
            header = 10;
            if ((length >> 63U) != 0) {
                failed_ = true;
                return broken(1002, "a frame length with its top bit set");
            }
        }
        if (!control) {
            const std::uint64_t so_far = op == 0x0 ? fragments_.size() : 0;
            if (length > max_message_ || so_far + length > max_message_) {
                failed_ = true;
                return got(ws_status::too_large);
            }
        }
        header += 4;  // the masking key
        if (avail < header + length) return got(ws_status::need_more);
        const unsigned char* key = p + header - 4;
        char* payload = buf_.data() + start_ + header;
        const auto n = static_cast<std::size_t>(length);
        for (std::size_t i = 0; i < n; ++i) payload[i] = static_cast<char>(payload[i] ^ key[i & 3U]);
        start_ += header + n;
        const std::string_view body(payload, n);
        if (op == 0x9) return got(ws_status::ping, body);
        if (op == 0xA) return got(ws_status::pong, body);
        if (op == 0x8) {
            if (n == 1) {
                failed_ = true;
                return broken(1002, "a close frame with a one-byte body");
            }
            const std::uint16_t code =
                n >= 2 ? static_cast<std::uint16_t>((static_cast<unsigned char>(body[0]) << 8U) |
                                                    static_cast<unsigned char>(body[1]))
                       : 1005;
            return got(ws_status::closed, n >= 2 ? body.substr(2) : std::string_view{}, code);
        }
        if (op == 0x1 && fin) return got(ws_status::text, body);
        fragments_.append(body);
        in_fragments_ = !fin;
        if (fin) return got(ws_status::text, fragments_);
    }
}

std::string ws_frame_header(ws_opcode op, std::uint64_t payload_bytes) {
    std::string h;
    h += static_cast<char>(0x80U | static_cast<unsigned>(op));
    if (payload_bytes < 126) {
        h += static_cast<char>(payload_bytes);
    } else if (payload_bytes <= 0xFFFF) {
        h += static_cast<char>(126);
        h += static_cast<char>((payload_bytes >> 8U) & 0xFFU);
        h += static_cast<char>(payload_bytes & 0xFFU);
    } else {
        h += static_cast<char>(127);
        for (int shift = 56; shift >= 0; shift -= 8)
            h += static_cast<char>((payload_bytes >> static_cast<unsigned>(shift)) & 0xFFU);
    }
    return h;
}

std::string ws_close_frame(std::uint16_t code, std::string_view reason) {
    if (reason.size() > 123) {  // a control frame's payload is at most 125 bytes
        reason = reason.substr(0, 123);
        // Never cut inside a UTF-8 sequence (a close reason must be valid text): drop its tail.
        while (!reason.empty() && static_cast<unsigned char>(reason.back()) >= 0x80U) reason.remove_suffix(1);
    }
    std::string f = ws_frame_header(ws_opcode::close, 2 + reason.size());
    f += static_cast<char>(code >> 8U);
    f += static_cast<char>(code & 0xFFU);
    f += reason;
    return f;
}

}  // namespace ecsd::protocol
