#include "persist/snapshot.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "persist/journal.hpp"

namespace ecsd::persist {

using ecs::entity_id;

json snapshot_head(const world::world& w, std::uint64_t journal_seq) {
    const auto& s = w.settings();
    json systems = json::object();
    for (const auto& sys : w.systems()) systems[sys.name] = {{"enabled", sys.enabled}};
    json types = json::array();
    for (const auto& [name, fields] : w.runtime_components())
        types.push_back({{"name", name}, {"fields", fields}});
    json prefabs = json::object();
    for (const auto& [name, comps] : w.prefabs()) prefabs[name] = comps;
    return {{"format", "ecsd-snapshot"},
            {"version", snapshot_version},
            {"journal_seq", journal_seq},
            {"world",
             {{"name", s.name},
              {"tick", w.tick()},
              {"tick_hz", s.tick_hz},
              {"gravity", {{"x", s.gravity_x}, {"y", s.gravity_y}}},
              {"bounds", s.bounds.to_json()},
              {"paused", s.paused},
              {"max_entities", s.max_entities},
              {"threads", s.threads}}},
            {"systems", std::move(systems)},
            {"component_types", std::move(types)},
            {"prefabs", std::move(prefabs)}};
}

namespace {
/// @brief The JSON form's head: snapshot_head plus the allocator, where every slot is live, free
/// (queued, with its next generation) or retired. (The binary form writes the allocator as arrays.)
json json_head(const world::world& w, std::uint64_t journal_seq) {
    json head = snapshot_head(w, journal_seq);
    const auto& table = w.registry().entities();
    const auto queue = table.free_queue();
    std::vector<bool> queued(table.slot_count(), false);
    json free = json::array();
    for (auto slot : queue) {
        queued[slot] = true;
        free.push_back({slot, table.generation(slot)});
    }
    json retired = json::array();
    for (std::uint32_t slot = 0; slot < table.slot_count(); ++slot)
        if (!table.slot_alive(slot) && !queued[slot]) retired.push_back({slot, table.generation(slot)});
    head["allocator"] = {
        {"slots", table.slot_count()}, {"free", std::move(free)}, {"retired", std::move(retired)}};
    return head;
}

/// @brief Calls entity(id, components) for each live entity and order(name, ids) for each storage.
template <typename E, typename O>
void walk_contents(const world::world& w, E&& entity, O&& order) {
    const auto& reg = w.registry();
    const auto& table = reg.entities();
    for (std::uint32_t slot = 0; slot < table.slot_count(); ++slot) {
        if (!table.slot_alive(slot)) continue;
        json comps = json::object();
        table.for_each_component(slot, [&](ecs::component_id c) {
            comps[reg.storage(c).name()] = reg.storage(c).value_json(slot);
        });
        entity(table.id_of(slot), comps);
    }
    for (ecs::component_id c = 0; c < reg.component_count(); ++c) {
        const auto& p = reg.storage(c);
        if (!p.empty()) order(p, table);
    }
}
}  // namespace

json to_snapshot(const world::world& w, std::uint64_t journal_seq) {
    json doc = json_head(w, journal_seq);
    json entities = json::array();
    json order = json::object();
    walk_contents(
        w,
        [&](entity_id id, json& comps) {
            entities.push_back({{"id", id}, {"components", std::move(comps)}});
        },
        [&](const ecs::pool& p, const ecs::entity_table& table) {
            json ids = json::array();
            for (std::size_t i = 0; i < p.size(); ++i) ids.push_back(table.id_of(p.slot_at(i)));
            order[p.name()] = std::move(ids);
        });
    doc["entities"] = std::move(entities);
    doc["dense_order"] = std::move(order);
    return doc;
}

std::string snapshot_text(const world::world& w, std::uint64_t journal_seq) {
    std::string out = json_head(w, journal_seq).dump();
    out.pop_back();  // the closing brace: entities and dense_order follow
    out.reserve(out.size() + w.registry().size() * 96);
    out += ",\"entities\":[";
    bool first = true;
    bool order_opened = false;
    walk_contents(
        w,
        [&](entity_id id, const json& comps) {
            if (!first) out += ',';
            first = false;
            out += "{\"id\":";
            out += std::to_string(id);
            out += ",\"components\":";
            out += comps.dump();
            out += '}';
        },
        [&](const ecs::pool& p, const ecs::entity_table& table) {
            out += order_opened ? "," : "],\"dense_order\":{";
            order_opened = true;
            out += json(p.name()).dump();
            out += ":[";
            for (std::size_t i = 0; i < p.size(); ++i) {
                if (i) out += ',';
                out += std::to_string(table.id_of(p.slot_at(i)));
            }
            out += ']';
        });
    if (!order_opened) out += "],\"dense_order\":{";  // no storage holds anything
    out += "}}";
    return out;
}

std::uint64_t snapshot_journal_seq(const json& doc) {
    return doc.value("journal_seq", std::uint64_t{0});
}

namespace {
constexpr std::string_view seal_head = ",\"checksum\":\"crc32:";
}

std::string seal_snapshot(std::string text) {
    while (!text.empty() && text.back() != '}') text.pop_back();
    if (!text.empty()) text.pop_back();
    char tail[32];
    std::snprintf(tail, sizeof tail, "%08x\"}\n", crc32(text));
    text += seal_head;
    text += tail;
    return text;
}

snapshot_seal check_snapshot_seal(std::string_view text) {
    snapshot_seal out;
    auto end = text.size();
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ')) --end;
    // The file ends with ,"checksum":"crc32:XXXXXXXX"} (8 hex digits, a quote, the closing brace).
    const std::size_t tail = seal_head.size() + 8 + 2;
    if (end < tail || text.substr(end - 2, 2) != "\"}" ||
        text.substr(end - tail, seal_head.size()) != seal_head)
        return out;
    const auto hex = std::string(text.substr(end - 10, 8));
    unsigned int stored = 0;
    char extra = 0;
    if (std::sscanf(hex.c_str(), "%8x%c", &stored, &extra) != 1) return out;
    out.offset = end - tail;
    out.stored = stored;
    out.computed = crc32(text.substr(0, out.offset));
    out.status = out.stored == out.computed ? snapshot_seal::state::good : snapshot_seal::state::mismatch;
    return out;
}

namespace {
[[noreturn]] void fail(const std::string& source, const std::string& what) {
    throw persist_error(source + ": " + what);
}

}  // namespace

void check_snapshot_header(const json& doc, const std::string& source) {
    // Looked up, not json::value(): a "format" that is not a string would throw a type error.
    const auto format = doc.is_object() ? doc.find("format") : doc.end();
    if (format == doc.end() || !format->is_string() || *format != "ecsd-snapshot")
        fail(source, "not an ecsd snapshot (no \"format\": \"ecsd-snapshot\")");
    if (!doc.contains("version") || !doc["version"].is_number_integer())
        fail(source, "snapshot has no integer \"version\"");
    const int v = doc["version"].get<int>();
    if (v > snapshot_version)
        fail(source, "snapshot version " + std::to_string(v) + " is newer than this server understands (" +
                         std::to_string(snapshot_version) + "); upgrade ecsd");
    if (v < 1) fail(source, "snapshot version " + std::to_string(v) + " is not valid");
}

namespace {

/// @brief A count, id or slot: a whole number from 0 to T's largest. (json::get<T>() casts any
/// number, and a float out of T's range, 1e30 as an id, is undefined behaviour.)
template <typename T>
T whole(const json& j, const std::string& source, const std::string& what) {
    constexpr auto most = std::numeric_limits<T>::max();
    if (j.is_number_unsigned() && j.get<std::uint64_t>() <= most)
        return static_cast<T>(j.get<std::uint64_t>());
    if (j.is_number_float()) {
        const double d = j.get<double>();
        if (d >= 0 && d == std::floor(d) && d < static_cast<double>(most) + 1.0) return static_cast<T>(d);
    }
    fail(source, what + " must be a whole number from 0 to " + std::to_string(most));
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> slot_pairs(const json& list, const std::string& source) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
    for (const auto& p : list)
        out.emplace_back(whole<std::uint32_t>(p.at(0), source, "an allocator slot"),
                         whole<std::uint32_t>(p.at(1), source, "an allocator generation"));
    return out;
}
}  // namespace

std::unique_ptr<world::world> world_from_head(const json& doc, const std::string& source) {
    const auto& wj = doc.at("world");
    world::world_settings s;
    s.name = wj.at("name").get<std::string>();
    s.tick_hz = wj.at("tick_hz").get<double>();
    s.gravity_x = wj.at("gravity").at("x").get<double>();
    s.gravity_y = wj.at("gravity").at("y").get<double>();
    s.bounds = world::world_bounds::from_json(wj.value("bounds", json()));  // absent before bounds existed
    s.paused = wj.at("paused").get<bool>();
    if (wj.contains("max_entities"))
        s.max_entities = whole<std::size_t>(wj["max_entities"], source, "max_entities");
    if (wj.contains("threads"))  // absent before threads existed: the server's default
        s.threads = whole<unsigned>(wj["threads"], source, "threads");
    auto w = std::make_unique<world::world>(s);
    w->set_tick(whole<std::uint64_t>(wj.at("tick"), source, "tick"));

    const json types = doc.value("component_types", json::array());
    const json prefabs = doc.value("prefabs", json::object());
    const json systems = doc.value("systems", json::object());
    for (const auto& t : types)
        w->register_component(t.at("name").get<std::string>(), t.value("fields", json::object()));
    for (const auto& [name, comps] : prefabs.items()) w->define_prefab(name, comps);
    for (const auto& [name, state] : systems.items())
        w->set_system_enabled(name, state.value("enabled", true));
    return w;
}

std::unique_ptr<world::world> rebuild_world(const std::string& source,
                                            const std::function<std::unique_ptr<world::world>()>& build) {
    // The world's own state: values load as they were saved (numbers past ±1e15, prefabs an older
    // server accepted), never refused by the rules for what clients send.
    const ecs::restoring_scope restoring;
    try {
        return build();
    } catch (const persist_error&) {
        throw;
    } catch (const ecs::ecs_error& e) {
        fail(source, e.what());
    } catch (const json::exception& e) {
        fail(source, std::string("malformed snapshot: ") + e.what());
    }
}

std::unique_ptr<world::world> from_snapshot(const json& doc, const std::string& source) {
    check_snapshot_header(doc, source);
    return rebuild_world(source, [&] {
        // Which journal records replay (and whether the journal is emptied) follows from it: a value
        // snapshot_journal_seq cannot read as a count is damage.
        if (doc.contains("journal_seq") && !doc["journal_seq"].is_number_unsigned())
            fail(source, "\"journal_seq\" is not a non-negative integer");
        auto w = world_from_head(doc, source);

        auto& reg = w->registry();
        const auto& entities = doc.at("entities");
        std::vector<entity_id> live;
        std::unordered_map<entity_id, const json*> by_id;
        live.reserve(entities.size());
        for (const auto& e : entities) {
            const auto id = whole<entity_id>(e.at("id"), source, "an entity id");
            live.push_back(id);
            if (!by_id.emplace(id, &e.at("components")).second)
                fail(source, "entity " + std::to_string(id) + " appears twice");
        }
        const auto& alloc = doc.at("allocator");
        const json free = alloc.value("free", json::array());
        const json retired = alloc.value("retired", json::array());
        // Every slot is live, free or retired: more slots than those listed is damage, found before the
        // registry allocates them all.
        const auto slots = whole<std::size_t>(alloc.at("slots"), source, "allocator.slots");
        if (slots > live.size() + free.size() + retired.size())
            fail(source, "allocator.slots is " + std::to_string(slots) + " but only " +
                             std::to_string(live.size() + free.size() + retired.size()) +
                             " live, free and retired slots are listed");
        reg.restore_entities(slots, live, slot_pairs(free, source), slot_pairs(retired, source));

        // Components go in each storage's saved dense order; anything the order does not list
        // (a hand-written snapshot) follows in entity order.
        const json order = doc.value("dense_order", json::object());
        std::unordered_map<std::string, std::size_t> placed;
        for (const auto& [name, ids] : order.items()) {
            const auto c = reg.component_by_name(name);
            for (const auto& idj : ids) {
                const auto id = whole<entity_id>(idj, source, "a dense_order id");
                const auto it = by_id.find(id);
                if (it == by_id.end() || !it->second->contains(name))
                    fail(source,
                         "dense_order of " + name + " names entity " + std::to_string(id) + " without it");
                reg.restore_component(c, id, it->second->at(name));
                ++placed[name];
            }
        }
        for (auto id : live) {
            for (const auto& [name, value] : by_id[id]->items()) {
                const auto c = reg.component_by_name(name);
                if (!reg.has(id, c)) reg.restore_component(c, id, value);
            }
        }
        reg.finish_restore();
        return w;
    });
}

}  // namespace ecsd::persist
