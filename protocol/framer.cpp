#include "ecsd/protocol/framer.hpp"

#include <cstring>

#include "read_space.hpp"

namespace ecsd::protocol {

std::span<char> line_framer::prepare(std::size_t min_bytes) {
    return internal::prepare_space(buf_, start_, size_, min_bytes);
}

void line_framer::feed(std::string_view bytes) {
    auto space = prepare(bytes.size());
    if (!bytes.empty()) std::memcpy(space.data(), bytes.data(), bytes.size());
    commit(bytes.size());
}

frame line_framer::next() noexcept {
    const char* base = buf_.data() + start_;
    const std::size_t avail = size_ - start_;
    const void* lf = avail > scanned_ ? std::memchr(base + scanned_, '\n', avail - scanned_) : nullptr;
    if (lf == nullptr) {
        scanned_ = avail;
        // A pending line may be max_line_ bytes plus a CR still waiting for its LF.
        const bool over = avail > max_line_ + 1 || (avail == max_line_ + 1 && base[avail - 1] != '\r');
        if (over) return {frame_status::too_large, {}};
        // No reset to the front here, even when everything was consumed: a read may be in flight
        // into the space prepare() handed out at size_, and its commit() must find it there.
        // prepare() moves to the front when nothing is pending.
        return {frame_status::need_more, {}};
    }
    std::size_t len = static_cast<const char*>(lf) - base;
    const std::size_t consumed = len + 1;
    if (len > 0 && base[len - 1] == '\r') --len;
    if (len > max_line_) return {frame_status::too_large, {}};
    start_ += consumed;
    scanned_ = 0;
    return {frame_status::line, std::string_view(base, len)};
}

}  // namespace ecsd::protocol
