#pragma once
// A 64-bit FNV-1a hasher over exact bit patterns: the world state hash that
// proves two runs bit-identical. Floats hash by their bits, so -0.0 != 0.0.

#include <bit>
#include <cstdint>
#include <string_view>

namespace ecsd::ecs {

class state_hasher {
  public:
    void add_u64(std::uint64_t v) noexcept {
        for (int i = 0; i < 8; ++i) {
            h_ ^= (v >> (i * 8)) & 0xFF;
            h_ *= prime;
        }
    }
    void add_float(float v) noexcept { add_u64(std::bit_cast<std::uint32_t>(v)); }
    void add_double(double v) noexcept { add_u64(std::bit_cast<std::uint64_t>(v)); }
    void add_string(std::string_view s) noexcept {
        add_u64(s.size());
        for (unsigned char c : s) {
            h_ ^= c;
            h_ *= prime;
        }
    }
    [[nodiscard]] std::uint64_t value() const noexcept { return h_; }

  private:
    static constexpr std::uint64_t prime = 1099511628211ull;
    std::uint64_t h_ = 14695981039346656037ull;
};

}  // namespace ecsd::ecs
