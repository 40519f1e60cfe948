#pragma once
// A uniform grid of every entity's Position, brought up to date for a moment when nothing moves (the
// watch hub's publishing after a tick), so that many near() questions cost the entities around each
// point, not the world each: a thousand players' near(avatar, R) watches visit about a thousand
// neighbourhoods instead of a thousand worlds.
//
// Cells are squares of `cell` metres. When the rectangle the entities occupy has at most four cells
// per entity (a game world), each cell lists its entities' dense positions in the Position pool
// (members_[start_[k], start_[k + 1]), row-major, counting-sorted): a circle's cells in one row are
// one contiguous run, found without a search, and a candidate's position is read from the pool
// itself. Kept from tick to tick: a rebuild walks the pool once, in order, and only when some entity
// changed cell does it sort the members again (integers only). When the pool's order changed (an
// entity added or removed), or an entity left the rectangle and its margin, it starts over.
// Otherwise (a few entities far apart, say one thrown to 1e9 m) they are sorted by (row, col), with
// copies of their positions, and each row's run is found by binary search, so one outlier cannot make
// the grid huge or its cells coarse. The buffers are kept between builds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "ecs/registry.hpp"
#include "world/components.hpp"

namespace ecsd::world {

class position_grid {
  public:
    /// @brief Indexes every entity with a finite Position (cell > 0, in metres), from scratch or
    /// from the last build when that is cheaper. The registry must stay as it is while the grid is
    /// asked (its positions are read then).
    void rebuild(const ecs::registry& reg, double cell);

    /// @brief Calls f(slot) for each entity whose Position is within r of (x, y) (the rim
    /// included, as near() counts it), in cell order: its slot (ecs::index_of), not its id, since
    /// reading every id while building costs a random access per entity of the world.
    template <typename F>
    void for_each_near(double x, double y, double r, F&& f) const {
        if (!(r >= 0)) return;
        const double r2 = r * r;
        const auto within = [&](double px, double py) {
            const double dx = px - x;
            const double dy = py - y;
            return dx * dx + dy * dy <= r2;
        };
        if (dense_) {
            if (members_.empty()) return;
            // The cells the square around (x, y) covers, by the map flat_cell places entities by.
            const double lo_row = rel_row(y - r);
            const double hi_row = rel_row(y + r);
            const double lo_col = rel_col(x - r);
            const double hi_col = rel_col(x + r);
            if (!(hi_row >= 0 && lo_row < rows_d_ && hi_col >= 0 && lo_col < cols_d_)) return;  // NaN too
            const auto row0 = lo_row < 0 ? std::int64_t{0} : static_cast<std::int64_t>(lo_row);
            const auto row1 = hi_row >= rows_d_ ? rows_ - 1 : static_cast<std::int64_t>(hi_row);
            const auto col0 = lo_col < 0 ? std::size_t{0} : static_cast<std::size_t>(lo_col);
            const auto col1 =
                hi_col >= cols_d_ ? static_cast<std::size_t>(cols_ - 1) : static_cast<std::size_t>(hi_col);
            const auto run = [&](std::int64_t row) {
                const auto base = static_cast<std::size_t>(row * cols_);
                return std::pair{start_[base + col0], start_[base + col1 + 1]};
            };
            // The candidates' positions lie scattered in the pool: all of them are asked of the
            // cache first, so that their misses overlap, then tested.
            for (auto row = row0; row <= row1; ++row) {
                const auto [from, to] = run(row);
                for (auto i = from; i < to; ++i) __builtin_prefetch(&positions_->at(members_[i].pos));
            }
            for (auto row = row0; row <= row1; ++row) {
                const auto [from, to] = run(row);
                for (auto i = from; i < to; ++i) {
                    const auto& m = members_[i];
                    const auto& p = positions_->at(m.pos);
                    if (within(p.x, p.y)) f(m.slot);
                }
            }
            return;
        }
        // Sparse: row by row, jumping over what lies outside [col0, col1], so rows without entities
        // cost nothing however large r is.
        const auto row0 = cell_of(y - r);
        const auto row1 = cell_of(y + r);
        const auto col0 = cell_of(x - r);
        const auto col1 = cell_of(x + r);
        const auto visit = [&](std::size_t from, std::size_t to) {
            for (std::size_t i = from; i < to; ++i)
                if (within(entries_[i].x, entries_[i].y)) f(entries_[i].slot);
        };
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
    [[nodiscard]] std::size_t size() const noexcept { return dense_ ? members_.size() : entries_.size(); }

  private:
    struct entry {  // sparse: a copy of the position
        double x;
        double y;
        std::uint32_t slot;
    };
    struct member {  // dense: where the entity's position lies in the pool, and its slot
        std::uint32_t pos;
        std::uint32_t slot;
    };
    using cell_key = std::pair<std::int64_t, std::int64_t>;  // (row, col)
    using position_pool =
        std::remove_cvref_t<decltype(std::declval<const ecs::registry&>().storage<Position>())>;
    [[nodiscard]] std::int64_t cell_of(double v) const noexcept;
    // Dense: a coordinate in cells from the rectangle's corner (floored, its row or column).
    [[nodiscard]] double rel_row(double y) const noexcept { return y * inverse_ - row_origin_; }
    [[nodiscard]] double rel_col(double x) const noexcept { return x * inverse_ - col_origin_; }
    [[nodiscard]] std::size_t lower(std::int64_t row, std::int64_t col) const;
    /// Dense: the flat cell of a position, no_flat when it is not finite, off_grid outside the rectangle.
    [[nodiscard]] std::uint32_t flat_cell(const Position& p) const noexcept;
    /// Dense: whether the last build still holds but for cells; updates cell_ and says if any changed.
    [[nodiscard]] bool update(const position_pool& pool, bool& moved);
    void build(const position_pool& pool);
    void place();  // dense: members_ and start_ from cell_ and slot_

    static constexpr std::uint32_t no_flat = std::numeric_limits<std::uint32_t>::max();
    static constexpr std::uint32_t off_grid = no_flat - 1;
    static constexpr std::int64_t margin = 2;  // cells around the occupied rectangle, for drifters

    double cell_ = 1;
    double inverse_ = 1;  // 1 / cell_
    bool dense_ = true;
    bool built_ = false;  // dense: cell_ and slot_ describe the pool as of the last build
    const position_pool* positions_ = nullptr;
    std::int64_t row_min_ = 0;
    std::int64_t col_min_ = 0;
    std::int64_t rows_ = 0;
    std::int64_t cols_ = 0;
    double row_origin_ = 0;  // dense: row_min_ and col_min_, and rows_ and cols_, as doubles
    double col_origin_ = 0;
    double rows_d_ = 0;
    double cols_d_ = 0;
    std::vector<std::uint32_t> cells_of_;              // dense: each pool position's flat cell
    std::vector<std::uint32_t> slot_;                  // dense: each pool position's slot
    std::vector<member> members_;                      // dense: by cell
    std::vector<std::uint32_t> start_;                 // dense: where each cell's members begin, and the end
    std::vector<entry> entries_;                       // sparse: in cell order
    std::vector<cell_key> keys_;                       // sparse: each entry's cell, sorted
    std::vector<std::pair<cell_key, entry>> scratch_;  // sparse: the sort's working copy
};

}  // namespace ecsd::world
