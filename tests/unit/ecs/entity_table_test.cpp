#include "ecs/entity_table.hpp"

#include <set>
#include <vector>

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

TEST(EntityTable, OverflowWordsArePaidOnlyByPagesThatUseThem) {
    // Generation, alive bit and the first 10 signature bits share one word a slot, however many
    // types there are: an entity with only those types costs 4 bytes (issue 16).
    const auto bytes_per_slot = [](std::size_t types) {
        entity_table t;
        t.ensure_types(types);
        t.reserve(1000);
        for (int i = 0; i < 1000; ++i) t.set_bit(index_of(t.create()), 9);
        return t.bytes() / 1000;
    };
    EXPECT_EQ(bytes_per_slot(3), 4u);
    EXPECT_EQ(bytes_per_slot(10), 4u);
    EXPECT_EQ(bytes_per_slot(43), 4u);

    // A later type's bit makes the overflow words of its page only: a page of page_slots slots,
    // one word a slot per 32 types past the first 10.
    entity_table t;
    t.ensure_types(43);  // 33 overflow types: two words
    std::vector<entity_id> ids;
    for (std::size_t i = 0; i < 3 * entity_table::page_slots; ++i) ids.push_back(t.create());
    const auto before = t.bytes();
    const auto far = index_of(ids[entity_table::page_slots + 7]);  // in the second page
    t.set_bit(far, 42);
    const auto page_bytes = entity_table::page_slots * 2 * sizeof(std::uint32_t);
    EXPECT_GE(t.bytes() - before, page_bytes);
    EXPECT_LT(t.bytes() - before, page_bytes + 64);  // and the page table's few pointers
    EXPECT_TRUE(t.has(far, 42));
    EXPECT_FALSE(t.has(far + 1, 42));  // the rest of the page reads as 0
    EXPECT_FALSE(t.has(index_of(ids[0]), 42));
    EXPECT_FALSE(t.has(index_of(ids.back()), 42));  // a page never made reads as 0
    t.set_bit(far + 1, 41);
    EXPECT_LT(t.bytes() - before, page_bytes + 64);  // the same page: nothing more
    component_mask all, none, any;
    all.set(42);
    EXPECT_TRUE(t.matches(far, all, any, none));
    EXPECT_FALSE(t.matches(far + 1, all, any, none));
    EXPECT_FALSE(t.matches(index_of(ids.back()), all, any, none));
    // Destroying the slot clears its later bits, so a new id on it starts with none.
    t.destroy(far);
    t.clear_bit(index_of(ids.back()), 42);  // clearing in a page never made changes nothing
    const entity_id again = t.create();     // the only free slot
    ASSERT_EQ(index_of(again), far);
    EXPECT_FALSE(t.has(far, 42));
    std::vector<component_id> seen;
    t.for_each_component(far + 1, [&](component_id c) { seen.push_back(c); });
    EXPECT_EQ(seen, std::vector<component_id>{41});
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
