#include "ecsd/protocol/depth.hpp"

#include <algorithm>

namespace ecsd::protocol {

bool exceeds_depth(std::string_view text, std::size_t max_depth) noexcept {
    // Nesting never goes deeper than the number of brackets that open: counting two characters is
    // a vectorised pass, where the walk below reads byte by byte (every request line comes here).
    const auto opens = static_cast<std::size_t>(std::count(text.begin(), text.end(), '{') +
                                                std::count(text.begin(), text.end(), '['));
    if (opens <= max_depth) return false;
    std::size_t depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;  // skip the escaped character, which may be a quote
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        switch (c) {
            case '"':
                in_string = true;
                break;
            case '[':
            case '{':
                if (++depth > max_depth) return true;
                break;
            case ']':
            case '}':
                if (depth > 0) --depth;
                break;
            default:
                break;
        }
    }
    return false;
}

}  // namespace ecsd::protocol
