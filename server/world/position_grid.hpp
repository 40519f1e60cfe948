#pragma once
// A uniform grid of every entity's Position, built in one pass for a moment when nothing moves (the
// watch hub's publishing after a tick), so that many near() questions cost the entities around each
// point, not the world each: a thousand players' near(avatar, R) watches visit about a thousand
// neighbourhoods instead of a thousand worlds.
//
// Cells are squares of `cell` metres. When the rectangle the entities occupy has at most four cells
// per entity (a game world), the entities are counting-sorted by cell, row-major, and a cell's
// entities are entries_[start_[k], start_[k + 1]): a circle's cells in one row are one contiguous
// run, found without a search. Otherwise (a few entities far apart, say one thrown to 1e9 m) they are
// sorted by (row, col) and each row's run is found by binary search, so one outlier cannot make the
// grid huge or its cells coarse. The buffers are kept between builds: rebuilding each tick allocates
// nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "ecs/registry.hpp"

namespace ecsd::world {

class position_grid {
  public:
    /// @brief Indexes every entity with a finite Position (cell > 0, in metres), replacing what
    /// the grid held.
    void rebuild(const ecs::registry& reg, double cell);

    /// @brief Calls f(slot) for each entity whose Position is within r of (x, y) (the rim
    /// included, as near() counts it), in cell order: its slot (ecs::index_of), not its id, since
    /// reading every id while building costs a random access per entity of the world.
    template <typename F>
    void for_each_near(double x, double y, double r, F&& f) const {
        if (entries_.empty() || !(r >= 0)) return;
        const double r2 = r * r;
        const auto visit = [&](std::size_t from, std::size_t to) {
            for (std::size_t i = from; i < to; ++i) {
                const auto& en = entries_[i];
                const double dx = en.x - x;
                const double dy = en.y - y;
                if (dx * dx + dy * dy <= r2) f(en.slot);
            }
        };
        auto row0 = cell_of(y - r);
        auto row1 = cell_of(y + r);
        auto col0 = cell_of(x - r);
        auto col1 = cell_of(x + r);
        if (dense_) {
            row0 = std::max(row0, row_min_);
            row1 = std::min(row1, row_min_ + rows_ - 1);
            col0 = std::max(col0, col_min_);
            col1 = std::min(col1, col_min_ + cols_ - 1);
            if (row0 > row1 || col0 > col1) return;
            for (auto row = row0; row <= row1; ++row) {
                const auto base = static_cast<std::size_t>((row - row_min_) * cols_);
                visit(start_[base + static_cast<std::size_t>(col0 - col_min_)],
                      start_[base + static_cast<std::size_t>(col1 - col_min_) + 1]);
            }
            return;
        }
        // Sparse: row by row, jumping over what lies outside [col0, col1], so rows without entities
        // cost nothing however large r is.
        auto at = lower(row0, col0);
        while (at < keys_.size() && keys_[at].first <= row1) {
            const auto row = keys_[at].first;
            if (keys_[at].second < col0) {
                at = lower(row, col0);
                continue;
            }
            if (keys_[at].second > col1) {
                at = lower(row + 1, col0);
                continue;
            }
            const auto end = lower(row, col1 + 1);
            visit(at, end);
            at = end;
        }
    }
    [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

  private:
    struct entry {
        double x;
        double y;
        std::uint32_t slot;
    };
    using cell_key = std::pair<std::int64_t, std::int64_t>;  // (row, col)
    [[nodiscard]] std::int64_t cell_of(double v) const noexcept;
    [[nodiscard]] std::size_t lower(std::int64_t row, std::int64_t col) const;

    static constexpr std::int64_t no_cell = std::numeric_limits<std::int64_t>::min();  // not finite

    double cell_ = 1;
    double inverse_ = 1;  // 1 / cell_
    bool dense_ = true;
    std::int64_t row_min_ = 0;
    std::int64_t col_min_ = 0;
    std::int64_t rows_ = 0;
    std::int64_t cols_ = 0;
    std::vector<entry> entries_;                       // in cell order
    std::vector<std::uint32_t> start_;                 // dense: where each cell's entries begin, and the end
    std::vector<cell_key> keys_;                       // sparse: each entry's cell, sorted
    std::vector<std::pair<cell_key, entry>> scratch_;  // sparse: the sort's working copy
    std::vector<cell_key> cells_;                      // rebuild: each pool position's cell
};

}  // namespace ecsd::world
