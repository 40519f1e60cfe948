#include "world/position_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "world/components.hpp"

namespace ecsd::world {

std::int64_t position_grid::cell_of(double v) const noexcept {
    // Far outside any real world the cells clamp: a position that far still lands in an edge cell
    // and is compared by its exact distance, so the answer stays right.
    constexpr double limit = 1e15;
    return static_cast<std::int64_t>(std::floor(std::clamp(v / cell_, -limit, limit)));
}

void position_grid::rebuild(const ecs::registry& reg, double cell) {
    cell_ = cell > 0 ? cell : 1.0;
    entries_.clear();
    keys_.clear();
    const auto& pool = reg.storage<Position>();
    const auto& table = reg.entities();
    const std::size_t n = pool.size();
    // Pass 1: the occupied rectangle, in cells.
    std::int64_t row_min = std::numeric_limits<std::int64_t>::max();
    std::int64_t row_max = std::numeric_limits<std::int64_t>::min();
    std::int64_t col_min = row_min;
    std::int64_t col_max = row_max;
    std::size_t finite = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& p = pool.at(static_cast<std::uint32_t>(i));
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
        const auto row = cell_of(p.y);
        const auto col = cell_of(p.x);
        row_min = std::min(row_min, row);
        row_max = std::max(row_max, row);
        col_min = std::min(col_min, col);
        col_max = std::max(col_max, col);
        ++finite;
    }
    if (finite == 0) return;
    const auto rows = static_cast<double>(row_max) - static_cast<double>(row_min) + 1;
    const auto cols = static_cast<double>(col_max) - static_cast<double>(col_min) + 1;
    dense_ = rows * cols <= 4.0 * static_cast<double>(finite) + 64;
    if (!dense_) {
        scratch_.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const auto& p = pool.at(static_cast<std::uint32_t>(i));
            const auto slot = pool.slot_at(i);
            if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
            scratch_.push_back({{cell_of(p.y), cell_of(p.x)}, {p.x, p.y, table.id_of(slot)}});
        }
        std::sort(scratch_.begin(), scratch_.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [key, en] : scratch_) {
            keys_.push_back(key);
            entries_.push_back(en);
        }
        return;
    }
    // Passes 2 and 3: count per cell, then place.
    row_min_ = row_min;
    col_min_ = col_min;
    rows_ = row_max - row_min + 1;
    cols_ = col_max - col_min + 1;
    const auto width = static_cast<std::size_t>(cols_);
    const auto cells = static_cast<std::size_t>(rows_) * width;
    start_.assign(cells + 1, 0);
    const auto key = [&](const Position& p) {
        return static_cast<std::size_t>(cell_of(p.y) - row_min) * width +
               static_cast<std::size_t>(cell_of(p.x) - col_min);
    };
    for (std::size_t i = 0; i < n; ++i) {
        const auto& p = pool.at(static_cast<std::uint32_t>(i));
        if (std::isfinite(p.x) && std::isfinite(p.y)) ++start_[key(p) + 1];
    }
    for (std::size_t k = 1; k <= cells; ++k) start_[k] += start_[k - 1];
    entries_.resize(finite);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& p = pool.at(static_cast<std::uint32_t>(i));
        if (std::isfinite(p.x) && std::isfinite(p.y))
            entries_[start_[key(p)]++] = {p.x, p.y, table.id_of(pool.slot_at(i))};
    }
    // Placing moved each start to its cell's end: shift back by one cell.
    for (std::size_t k = cells; k > 0; --k) start_[k] = start_[k - 1];
    start_[0] = 0;
}

std::size_t position_grid::lower(std::int64_t row, std::int64_t col) const {
    return static_cast<std::size_t>(std::lower_bound(keys_.begin(), keys_.end(), cell_key{row, col}) -
                                    keys_.begin());
}

}  // namespace ecsd::world
