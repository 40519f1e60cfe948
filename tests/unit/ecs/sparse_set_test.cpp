#include "ecs/sparse_set.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "ecs/pool.hpp"
#include "test_components.hpp"

using namespace ecsd::ecs;

namespace {
std::vector<std::uint32_t> dense(const sparse_set& s) {
    return {s.slots(), s.slots() + s.size()};
}
}  // namespace

// Seed 000 (iThome, "Entity Component System"): add A,B,C,D; remove B; remove D; add E.
TEST(Seed000ComponentArray, SwapAndPopKeepsTheArrayPackedInTheArticlesOrder) {
    typed_pool<test::Position> pool(0);
    std::uint32_t epoch = 1;
    pool.bind_epoch(&epoch);
    const std::uint32_t A = 0, B = 1, C = 2, D = 3, E = 4;
    pool.emplace(A, {1, 0});
    pool.emplace(B, {2, 0});
    pool.emplace(C, {3, 0});
    pool.emplace(D, {4, 0});
    EXPECT_EQ(dense(pool), (std::vector<std::uint32_t>{A, B, C, D}));

    pool.erase(B);  // D moves into B's place
    EXPECT_EQ(dense(pool), (std::vector<std::uint32_t>{A, D, C}));
    EXPECT_EQ(pool.index(D), 1u);
    EXPECT_FLOAT_EQ(pool.at(1).x, 4);

    pool.erase(D);  // C moves into D's place
    EXPECT_EQ(dense(pool), (std::vector<std::uint32_t>{A, C}));
    EXPECT_EQ(pool.index(C), 1u);

    pool.emplace(E, {5, 0});
    EXPECT_EQ(dense(pool), (std::vector<std::uint32_t>{A, C, E}));
    EXPECT_EQ(pool.index(E), 2u);
    EXPECT_FLOAT_EQ(pool.get(A).x, 1);
    EXPECT_FLOAT_EQ(pool.get(C).x, 3);
    EXPECT_FLOAT_EQ(pool.get(E).x, 5);
    EXPECT_FALSE(pool.contains(B));
    EXPECT_FALSE(pool.contains(D));
}

TEST(SparseSet, PagedIndexHandlesFarApartSlots) {
    entity_set s;
    s.insert(3);
    s.insert(5'000'000);
    s.insert(4096);
    EXPECT_TRUE(s.contains(5'000'000));
    EXPECT_TRUE(s.contains(4096));
    EXPECT_FALSE(s.contains(4095));
    EXPECT_FALSE(s.contains(9'000'000));
    EXPECT_EQ(s.index(5'000'000), 1u);
    s.erase(3);
    EXPECT_EQ(dense(s), (std::vector<std::uint32_t>{4096, 5'000'000}));
}

TEST(SparseSet, SwapPositionsKeepsIndexConsistent) {
    entity_set s;
    for (std::uint32_t i = 0; i < 5; ++i) s.insert(i * 10);
    s.swap_positions(0, 4);
    EXPECT_EQ(dense(s), (std::vector<std::uint32_t>{40, 10, 20, 30, 0}));
    EXPECT_EQ(s.index(40), 0u);
    EXPECT_EQ(s.index(0), 4u);
}

TEST(TagPool, StoresNoPerEntityData) {
    tag_pool tags(0, "Player");
    entity_set bare;
    typed_pool<test::Position> positions(1);
    std::uint32_t epoch = 1;
    positions.bind_epoch(&epoch);
    for (std::uint32_t i = 0; i < 100'000; ++i) {
        tags.emplace(i);
        bare.insert(i);
        positions.emplace(i, {});
    }
    EXPECT_EQ(tags.memory_bytes(), bare.memory_bytes());  // membership only
    EXPECT_GE(positions.memory_bytes() - tags.memory_bytes(), 100'000 * sizeof(test::Position));
}
