#pragma once
// Component masks (seed 000's Signature, without its cap of 32 types).
// Bits for the first `inline_bits` component ids live in one word; ids past
// that spill into overflow words, so a world can hold thousands of types.

#include <cstdint>
#include <vector>

#include "ecs/entity.hpp"

namespace ecsd::ecs {

/// @brief Component ids below this are stored inside the entity's own 64-bit record.
inline constexpr component_id inline_bits = 42;

class component_mask {
public:
    void set(component_id c) {
        if (c < inline_bits) {
            inline_ |= std::uint64_t{1} << c;
            return;
        }
        const auto w = (c - inline_bits) / 64;
        if (overflow_.size() <= w) overflow_.resize(w + 1, 0);
        overflow_[w] |= std::uint64_t{1} << ((c - inline_bits) % 64);
    }
    [[nodiscard]] bool test(component_id c) const noexcept {
        if (c < inline_bits) return (inline_ >> c) & 1;
        const auto w = (c - inline_bits) / 64;
        return w < overflow_.size() && ((overflow_[w] >> ((c - inline_bits) % 64)) & 1);
    }
    [[nodiscard]] bool empty() const noexcept {
        if (inline_) return false;
        for (auto w : overflow_)
            if (w) return false;
        return true;
    }
    [[nodiscard]] std::uint64_t inline_word() const noexcept { return inline_; }
    [[nodiscard]] const std::vector<std::uint64_t>& overflow() const noexcept { return overflow_; }

    template <typename F>
    void for_each(F&& f) const {
        for (component_id c = 0; c < inline_bits; ++c)
            if ((inline_ >> c) & 1) f(c);
        for (std::size_t w = 0; w < overflow_.size(); ++w)
            for (unsigned b = 0; b < 64; ++b)
                if ((overflow_[w] >> b) & 1) f(static_cast<component_id>(inline_bits + w * 64 + b));
    }

private:
    std::uint64_t inline_ = 0;
    std::vector<std::uint64_t> overflow_;
};

}  // namespace ecsd::ecs
