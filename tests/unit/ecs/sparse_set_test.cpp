#include "ecs/sparse_set.hpp"

#include <algorithm>
#include <iterator>
#include <random>
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

TEST(IdList, HoldsWhatWasPushedInOrderAndKeepsRunsOfConsecutiveIdsInTwoWords) {
    // Random mixes of runs and scattered ids (generations included) against a plain vector.
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
        id_list list;
        std::vector<entity_id> want;
        const int pieces = static_cast<int>(rng() % 20);
        for (int p = 0; p < pieces; ++p) {
            auto e = make_entity(static_cast<std::uint32_t>(rng() % 50),
                                 1 + static_cast<std::uint32_t>(rng() % 3));
            const int run = rng() % 3 == 0 ? static_cast<int>(rng() % 6) : 1;
            for (int k = 0; k < run; ++k, ++e) {
                list.push_back(e);
                want.push_back(e);
            }
        }
        EXPECT_EQ(std::vector<entity_id>(list.begin(), list.end()), want) << "round " << round;
        EXPECT_EQ(list.size(), want.size());
        EXPECT_EQ(list.empty(), want.empty());
        EXPECT_EQ(static_cast<std::size_t>(std::distance(list.begin(), list.end())), want.size());
    }
    // append_run(first, n) is n push_backs: mixed with them at random, the ids come out the same.
    for (int round = 0; round < 200; ++round) {
        id_list pushed, appended;
        const int pieces = static_cast<int>(rng() % 20);
        for (int p = 0; p < pieces; ++p) {
            const auto e = make_entity(static_cast<std::uint32_t>(rng() % 50),
                                       1 + static_cast<std::uint32_t>(rng() % 2));
            const auto n = rng() % 5;
            for (std::uint64_t k = 0; k < n; ++k) pushed.push_back(e + k);
            if (rng() % 2 == 0) {
                appended.append_run(e, n);
            } else {
                for (std::uint64_t k = 0; k < n; ++k) appended.push_back(e + k);
            }
        }
        EXPECT_EQ(std::vector<entity_id>(appended.begin(), appended.end()),
                  std::vector<entity_id>(pushed.begin(), pushed.end()))
            << "round " << round;
        EXPECT_EQ(appended.size(), pushed.size());
        EXPECT_EQ(appended.capacity() > 0, pushed.capacity() > 0);
    }
    // A bulk spawn's records: a million ids in order, one run.
    id_list bulk;
    for (std::uint32_t i = 0; i < 1'000'000; ++i) bulk.push_back(make_entity(i, 1));
    EXPECT_EQ(bulk.size(), 1'000'000U);
    EXPECT_LE(bulk.capacity(), 2U);
    EXPECT_EQ(*std::next(bulk.begin(), 999'999), make_entity(999'999, 1));
    EXPECT_EQ(std::find(bulk.begin(), bulk.end(), make_entity(500'000, 1)) != bulk.end(), true);
    EXPECT_EQ(std::find(bulk.begin(), bulk.end(), make_entity(500'000, 2)) == bulk.end(), true);
    // Scattered ids cost one word each: no worse than a vector.
    id_list scattered;
    for (std::uint32_t i = 0; i < 1000; ++i) scattered.push_back(make_entity(i * 2, 1));
    EXPECT_LE(scattered.capacity(), 1024U);
    scattered.clear();
    EXPECT_TRUE(scattered.empty());
    EXPECT_EQ(scattered.begin(), scattered.end());
}
