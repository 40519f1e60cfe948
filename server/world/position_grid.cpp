#include "world/position_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "world/components.hpp"

namespace ecsd::world {

std::int64_t position_grid::cell_of(double v) const noexcept {
    // Far outside any real world the cells clamp: a position that far still lands in an edge cell
    // and is compared by its exact distance, so the answer stays right. A multiply and a truncation
    // rather than a division and floor() (a library call on baseline x86-64): the grid is rebuilt
    // every tick, and only has to agree with itself, which a monotonic cell_of does.
    constexpr double limit = 1e15;
    const double q = std::clamp(v * inverse_, -limit, limit);
    if (!(q == q)) return 0;  // NaN: no cell (for_each_near's distance test then fails)
    const auto t = static_cast<std::int64_t>(q);
    return t - static_cast<std::int64_t>(q < static_cast<double>(t));
}

void position_grid::rebuild(const ecs::registry& reg, double cell) {
    cell_ = cell > 0 ? cell : 1.0;
    inverse_ = 1.0 / cell_;
    entries_.clear();
    keys_.clear();
    cells_.clear();
    const auto& pool = reg.storage<Position>();
    const std::size_t n = pool.size();
    // Pass 1: each entity's cell, once, and the occupied rectangle.
    std::int64_t row_min = std::numeric_limits<std::int64_t>::max();
    std::int64_t row_max = std::numeric_limits<std::int64_t>::min();
    std::int64_t col_min = row_min;
    std::int64_t col_max = row_max;
    std::size_t finite = 0;
    cells_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& p = pool.at(static_cast<std::uint32_t>(i));
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
            cells_[i] = {no_cell, 0};
            continue;
        }
        const auto row = cell_of(p.y);
        const auto col = cell_of(p.x);
        cells_[i] = {row, col};
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
            if (cells_[i].first == no_cell) continue;
            const auto& p = pool.at(static_cast<std::uint32_t>(i));
            scratch_.push_back({cells_[i], {p.x, p.y, pool.slot_at(i)}});
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
    for (auto& [row, col] : cells_) {
        if (row == no_cell) continue;
        // The flat cell index, kept in `col` for pass 3.
        col = static_cast<std::int64_t>(static_cast<std::size_t>(row - row_min) * width +
                                        static_cast<std::size_t>(col - col_min));
        ++start_[static_cast<std::size_t>(col) + 1];
    }
    for (std::size_t k = 1; k <= cells; ++k) start_[k] += start_[k - 1];
    entries_.resize(finite);
    for (std::size_t i = 0; i < n; ++i) {
        if (cells_[i].first == no_cell) continue;
        const auto& p = pool.at(static_cast<std::uint32_t>(i));
        entries_[start_[static_cast<std::size_t>(cells_[i].second)]++] = {p.x, p.y, pool.slot_at(i)};
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
