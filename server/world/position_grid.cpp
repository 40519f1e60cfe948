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

std::uint32_t position_grid::flat_cell(const Position& p) const noexcept {
    // One multiply and one subtraction a coordinate, the same monotonic map for_each_near uses for
    // its ranges, so an entity within reach always lies in a cell the range covers. A comparison
    // rejects NaN, the infinities and what lies outside the rectangle alike; only then does it ask
    // which it was.
    const double row = rel_row(p.y);
    const double col = rel_col(p.x);
    if (row >= 0 && row < rows_d_ && col >= 0 && col < cols_d_)
        return static_cast<std::uint32_t>(row) * static_cast<std::uint32_t>(cols_) +
               static_cast<std::uint32_t>(col);
    return std::isfinite(p.x) && std::isfinite(p.y) ? off_grid : no_flat;
}

bool position_grid::update(const position_pool& pool, bool& moved) {
    // The last build holds while the pool has the same entities in the same order (an entity
    // added, removed or moved in the pool changes some slot here) and every one is in the rectangle.
    const std::size_t n = pool.size();
    if (n != cells_of_.size() || !std::equal(slot_.begin(), slot_.end(), pool.slots())) return false;
    // No early exit: the loop is one straight pass over the positions and the cells.
    bool off = false;
    bool changed = false;
    std::uint32_t* cells = cells_of_.data();
    for (std::size_t i = 0; i < n; ++i) {
        const auto flat = flat_cell(pool.at(static_cast<std::uint32_t>(i)));
        off |= flat == off_grid;
        changed |= flat != cells[i];
        cells[i] = flat;
    }
    moved = changed;
    return !off;
}

void position_grid::rebuild(const ecs::registry& reg, double cell) {
    const double size = cell > 0 ? cell : 1.0;
    const auto& pool = reg.storage<Position>();
    if (built_ && dense_ && size == cell_ && &pool == positions_) {
        bool moved = false;
        if (update(pool, moved)) {
            if (moved) place();
            return;
        }
    }
    cell_ = size;
    inverse_ = 1.0 / cell_;
    positions_ = &pool;
    build(pool);
}

void position_grid::build(const position_pool& pool) {
    built_ = false;
    entries_.clear();
    keys_.clear();
    members_.clear();
    const std::size_t n = pool.size();
    // Pass 1: the occupied rectangle.
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
    dense_ = true;
    rows_ = cols_ = 0;
    if (finite == 0) return;
    const auto rows = static_cast<double>(row_max) - static_cast<double>(row_min) + 1;
    const auto cols = static_cast<double>(col_max) - static_cast<double>(col_min) + 1;
    dense_ = rows * cols <= 4.0 * static_cast<double>(finite) + 64;  // the margin adds a rim to it
    if (!dense_) {
        scratch_.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const auto& p = pool.at(static_cast<std::uint32_t>(i));
            if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
            scratch_.push_back({{cell_of(p.y), cell_of(p.x)}, {p.x, p.y, pool.slot_at(i)}});
        }
        std::sort(scratch_.begin(), scratch_.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [key, en] : scratch_) {
            keys_.push_back(key);
            entries_.push_back(en);
        }
        return;
    }
    // Pass 2: each entity's cell and slot, then the members by cell.
    row_min_ = row_min - margin;
    col_min_ = col_min - margin;
    rows_ = row_max - row_min + 1 + 2 * margin;
    cols_ = col_max - col_min + 1 + 2 * margin;
    row_origin_ = static_cast<double>(row_min_);
    col_origin_ = static_cast<double>(col_min_);
    rows_d_ = static_cast<double>(rows_);
    cols_d_ = static_cast<double>(cols_);
    cells_of_.resize(n);
    slot_.assign(pool.slots(), pool.slots() + n);
    for (std::size_t i = 0; i < n; ++i) cells_of_[i] = flat_cell(pool.at(static_cast<std::uint32_t>(i)));
    place();
    built_ = true;
}

void position_grid::place() {
    const auto cells = static_cast<std::size_t>(rows_ * cols_);
    start_.assign(cells + 1, 0);
    std::size_t placed = 0;
    for (const auto flat : cells_of_) {
        if (flat >= off_grid) continue;
        ++start_[flat + 1];
        ++placed;
    }
    for (std::size_t k = 1; k <= cells; ++k) start_[k] += start_[k - 1];
    members_.resize(placed);
    for (std::size_t i = 0; i < cells_of_.size(); ++i) {
        const auto flat = cells_of_[i];
        if (flat >= off_grid) continue;
        members_[start_[flat]++] = {static_cast<std::uint32_t>(i), slot_[i]};
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
