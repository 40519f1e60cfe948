#pragma once
// Component masks (one bit per component type, without a cap of 32 types).
// Bits for the first `inline_bits` component ids live in the entity's own
// 32-bit record; ids past that spill into 32-bit overflow words, so a world
// can hold thousands of types and pays 4 bytes per entity per 32 more types.

#include <cstdint>
#include <vector>

#include "ecs/entity.hpp"

namespace ecsd::ecs {

/// @brief Component ids below this are stored inside the entity's own 32-bit record
/// (beside the 21-bit generation and the alive bit).
inline constexpr component_id inline_bits = 10;
/// @brief Bits per overflow word.
inline constexpr component_id overflow_word_bits = 32;

class component_mask {
  public:
    void set(component_id c) {
        if (c < inline_bits) {
            inline_ |= std::uint32_t{1} << c;
            return;
        }
        const auto w = (c - inline_bits) / overflow_word_bits;
        if (overflow_.size() <= w) overflow_.resize(w + 1, 0);
        overflow_[w] |= std::uint32_t{1} << ((c - inline_bits) % overflow_word_bits);
    }
    [[nodiscard]] bool test(component_id c) const noexcept {
        if (c < inline_bits) return (inline_ >> c) & 1;
        const auto w = (c - inline_bits) / overflow_word_bits;
        return w < overflow_.size() && ((overflow_[w] >> ((c - inline_bits) % overflow_word_bits)) & 1);
    }
    [[nodiscard]] bool empty() const noexcept {
        if (inline_) return false;
        for (auto w : overflow_)
            if (w) return false;
        return true;
    }
    [[nodiscard]] std::uint32_t inline_word() const noexcept { return inline_; }
    [[nodiscard]] const std::vector<std::uint32_t>& overflow() const noexcept { return overflow_; }

    /// @brief Same bits in the same words (a mask with trailing zero words compares unequal to one
    /// without: callers use it to share work, where a false "different" costs only the sharing).
    friend bool operator==(const component_mask&, const component_mask&) = default;

    template <typename F>
    void for_each(F&& f) const {
        for (component_id c = 0; c < inline_bits; ++c)
            if ((inline_ >> c) & 1) f(c);
        for (std::size_t w = 0; w < overflow_.size(); ++w)
            for (unsigned b = 0; b < overflow_word_bits; ++b)
                if ((overflow_[w] >> b) & 1)
                    f(static_cast<component_id>(inline_bits + w * overflow_word_bits + b));
    }

  private:
    std::uint32_t inline_ = 0;
    std::vector<std::uint32_t> overflow_;
};

}  // namespace ecsd::ecs
