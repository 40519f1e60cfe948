#include "ecs/entity_table.hpp"

#include <set>

#include <gtest/gtest.h>

using namespace ecsd::ecs;

TEST(EntityId, PacksIndexAndGenerationBelow2To53) {
    const entity_id e = make_entity(7, 3);
    EXPECT_EQ(index_of(e), 7u);
    EXPECT_EQ(generation_of(e), 3u);
    EXPECT_LT(make_entity(index_mask, max_generation), entity_id{1} << 53);
    EXPECT_FALSE(well_formed(null_entity));
}

TEST(EntityTable, FirstIdIsGenerationOneSlotZero) {
    entity_table t;
    EXPECT_EQ(t.create(), entity_id{4294967296});
    EXPECT_EQ(t.create(), entity_id{4294967297});
}

TEST(EntityTable, DestroyedIdIsStaleAndNeverAliveAgain) {
    entity_table t;
    const entity_id a = t.create();
    t.destroy(index_of(a));
    const entity_id b = t.create();  // recycles slot 0 with the next generation
    EXPECT_EQ(index_of(b), index_of(a));
    EXPECT_NE(a, b);
    EXPECT_FALSE(t.alive(a));
    EXPECT_TRUE(t.stale(a));
    EXPECT_TRUE(t.alive(b));
}

TEST(EntityTable, FreeSlotsAreRecycledInFifoOrder) {
    entity_table t;
    std::vector<entity_id> ids;
    for (int i = 0; i < 4; ++i) ids.push_back(t.create());
    t.destroy(index_of(ids[2]));
    t.destroy(index_of(ids[0]));
    EXPECT_EQ(index_of(t.create()), 2u);
    EXPECT_EQ(index_of(t.create()), 0u);
    EXPECT_EQ(index_of(t.create()), 4u);
}

TEST(EntityTable, ChurnDoesNotGrowTheTable) {
    entity_table t;
    for (int round = 0; round < 1000; ++round) {
        std::vector<entity_id> ids;
        for (int i = 0; i < 100; ++i) ids.push_back(t.create());
        for (auto e : ids) t.destroy(index_of(e));
    }
    EXPECT_EQ(t.slot_count(), 100u);
    EXPECT_EQ(t.alive_count(), 0u);
}

TEST(EntityTable, SlotWhoseGenerationWouldWrapIsRetired) {
    entity_table t;
    std::set<entity_id> seen;
    entity_id last = 0;
    for (std::uint32_t g = 1; g <= max_generation; ++g) {
        last = t.create();
        ASSERT_EQ(index_of(last), 0u);
        ASSERT_EQ(generation_of(last), g);
        t.destroy(0);
    }
    EXPECT_EQ(t.retired_count(), 1u);
    const entity_id next = t.create();  // slot 0 is retired: a new slot
    EXPECT_EQ(index_of(next), 1u);
    EXPECT_TRUE(t.stale(last));
}

TEST(EntityTable, SignatureBitsBeyondTheInlineWord) {
    entity_table t;
    t.ensure_types(1100);
    const entity_id e = t.create();
    t.set_bit(index_of(e), 3);
    t.set_bit(index_of(e), 1023);
    EXPECT_TRUE(t.has(index_of(e), 3));
    EXPECT_TRUE(t.has(index_of(e), 1023));
    EXPECT_FALSE(t.has(index_of(e), 1022));
    component_mask all, none, any;
    all.set(1023);
    none.set(1000);
    EXPECT_TRUE(t.matches(index_of(e), all, any, none));
    none.set(3);
    EXPECT_FALSE(t.matches(index_of(e), all, any, none));
}

TEST(EntityTable, RecordsGrowFourBytesPerThirtyTwoMoreTypes) {
    const auto bytes_per_slot = [](std::size_t types) {
        entity_table t;
        t.ensure_types(types);
        t.reserve(1000);
        return t.bytes() / 1000;
    };
    EXPECT_EQ(bytes_per_slot(3), 4u);  // generation, alive bit and 10 signature bits share one word
    EXPECT_EQ(bytes_per_slot(10), 4u);
    EXPECT_EQ(bytes_per_slot(11), 8u);
    EXPECT_EQ(bytes_per_slot(42), 8u);
    EXPECT_EQ(bytes_per_slot(43), 12u);
}

TEST(EntityTable, WideningKeepsIdsAndSignatures) {
    entity_table t;
    const entity_id a = t.create();
    t.destroy(index_of(a));
    const entity_id b = t.create();  // slot 0, generation 2
    const entity_id c = t.create();
    t.set_bit(index_of(b), 9);
    t.ensure_types(100);
    EXPECT_TRUE(t.alive(b));
    EXPECT_TRUE(t.alive(c));
    EXPECT_TRUE(t.stale(a));
    EXPECT_TRUE(t.has(index_of(b), 9));
    t.set_bit(index_of(c), 99);
    EXPECT_TRUE(t.has(index_of(c), 99));
    EXPECT_FALSE(t.has(index_of(b), 99));
    std::vector<component_id> seen;
    t.for_each_component(index_of(c), [&](component_id id) { seen.push_back(id); });
    EXPECT_EQ(seen, std::vector<component_id>{99});
}
