#pragma once
// Token comparison whose running time does not depend on where the strings differ, so a client
// cannot guess a token byte by byte from response times.

#include <cstddef>
#include <string_view>

namespace ecsd::net {

/// @brief True when a and b are equal; time depends only on the lengths.
[[nodiscard]] inline bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    // volatile keeps the compiler from turning the loop back into an early-exit compare.
    volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
    const std::size_t n = a.size() > b.size() ? a.size() : b.size();
    for (std::size_t i = 0; i < n; ++i) {
        const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
        const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
        diff = diff | static_cast<unsigned char>(x ^ y);
    }
    return diff == 0;
}

}  // namespace ecsd::net
