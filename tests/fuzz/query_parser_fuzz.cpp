// Fuzz target for the query text parser (ecs::parse_query): arbitrary text parses or throws
// ecs_error, nothing else. What parses is resolved against a small registry (unknown names throw
// ecs_error) and matched: the entities for_each_match reports come in ascending id order, once
// each, and without change terms they are exactly those a brute-force check of the terms finds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "ecs/error.hpp"
#include "ecs/query.hpp"
#include "ecs/registry.hpp"

namespace {

using ecsd::ecs::component_id;
using ecsd::ecs::entity_id;
using ecsd::ecs::json;

void check(bool ok) {
    if (!ok) std::abort();
}

/// @brief Components A, B, Health and the tag Tag on a dozen entities, some of them dead, with a
/// tick's worth of changes recorded.
struct fixture {
    ecsd::ecs::registry reg;
    std::vector<entity_id> ids;

    fixture() {
        const auto a = reg.register_dynamic("A", {{"x", 0}});
        const auto b = reg.register_dynamic("B", {{"x", 0}, {"name", ""}});
        const auto health = reg.register_dynamic("Health", {{"hp", {{"type", "integer"}, {"default", 100}}}});
        const auto tag = reg.register_dynamic("Tag", json::object());
        for (int i = 0; i < 12; ++i) {
            const auto e = reg.create();
            ids.push_back(e);
            if (i % 2 == 0) reg.emplace_json(e, a, {{"x", i}});
            if (i % 3 == 0) reg.emplace_json(e, b, {{"x", -i}, {"name", i % 2 ? "boss" : "imp"}});
            if (i % 4 != 1) reg.emplace_json(e, health, {{"hp", i * 10}});
            if (i % 5 == 0) reg.emplace_json(e, tag, json::object());
        }
        reg.end_tick();
        reg.destroy(ids[7]);
        reg.remove(ids[0], a);
        reg.emplace_json(ids[1], a, {{"x", 1.5}});
        reg.set_field_json(ids[2], health, "hp", 5);
        reg.destroy(ids[9]);
        reg.end_tick();
    }
};

bool has_name(const fixture& f, entity_id e, const std::string& name) {
    return f.reg.has(e, f.reg.component_by_name(name));
}

/// @brief What the terms select without change terms, entity by entity.
bool selected(const fixture& f, entity_id e, const ecsd::ecs::query_terms& t) {
    if (!f.reg.alive(e)) return false;
    for (const auto& n : t.all)
        if (!has_name(f, e, n)) return false;
    for (const auto& n : t.none)
        if (has_name(f, e, n)) return false;
    for (const auto& group : t.any)
        if (std::none_of(group.begin(), group.end(), [&](const std::string& n) { return has_name(f, e, n); }))
            return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace ecs = ecsd::ecs;
    static const fixture f;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ecs::query_terms terms;
    try {
        terms = ecs::parse_query(text);
    } catch (const ecs::ecs_error& e) {
        check(e.why() == ecs::reason::invalid_params);
        return 0;
    }
    for (const auto& w : terms.where) check(!ecs::filter_problem(w));
    if (terms.near) check(terms.near->r >= 0);

    ecs::query q;
    try {
        q = f.reg.resolve(terms);
    } catch (const ecs::ecs_error& e) {
        check(e.why() == ecs::reason::no_such_component);
        return 0;
    }
    std::vector<entity_id> found;
    f.reg.for_each_match(q, [&](entity_id e) { found.push_back(e); });
    check(std::adjacent_find(found.begin(), found.end(), [](entity_id x, entity_id y) { return x >= y; }) ==
          found.end());
    const bool changes =
        terms.died || !terms.added.empty() || !terms.changed.empty() || !terms.removed.empty();
    if (!changes) {
        std::vector<entity_id> expected;
        for (const auto e : f.ids)
            if (selected(f, e, terms)) expected.push_back(e);
        check(found == expected);
    }
    // The world applies value filters to what matched; every filter's component is required.
    for (const auto e : found) {
        if (!f.reg.alive(e)) continue;
        for (const auto& w : terms.where) {
            const json value = f.reg.get_json(e, f.reg.component_by_name(w.component));
            const auto it = value.find(w.field);
            if (it != value.end()) (void)ecs::filter_passes(w, *it);
        }
    }
    return 0;
}
