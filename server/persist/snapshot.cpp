#include "persist/snapshot.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/json_parse.hpp"
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
            {"prefabs", std::move(prefabs)},
            {"scripts", w.scripts_json()}};
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

json read_document(std::string_view text, const std::string& source, std::string_view what) {
    if (protocol::exceeds_depth(text, protocol::max_document_depth))
        fail(source, std::string(what) + " nests deeper than " +
                         std::to_string(protocol::max_document_depth) +
                         " levels, deeper than any snapshot ecsd writes");
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) fail(source, std::string(what) + " is not JSON");
    return doc;
}

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

/// @brief A tick or a journal sequence number: at most 2^53 - 1, the largest every JSON client reads
/// exactly, and so far from 2^64 that counting on from it never wraps (ticks at 1000 Hz would take
/// 285,000 years to get there). A saved counter past it is damage or a hostile import.
std::uint64_t counter(const json& j, const std::string& source, const std::string& what) {
    const auto v = whole<std::uint64_t>(j, source, what);
    if (v >= max_counter) fail(source, what + " is " + std::to_string(v) + ", past 2^53 - 1");
    return v;
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
    w->set_tick(counter(wj.at("tick"), source, "tick"));

    const json types = doc.value("component_types", json::array());
    const json prefabs = doc.value("prefabs", json::object());
    const json systems = doc.value("systems", json::object());
    for (const auto& t : types)
        w->register_component(t.at("name").get<std::string>(), t.value("fields", json::object()));
    for (const auto& [name, comps] : prefabs.items()) w->define_prefab(name, comps);
    // Lua systems and spells (absent before scripts existed), before the enabled flags that name them.
    w->restore_scripts(doc.value("scripts", json::array()));
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

namespace {

/// @brief What a snapshot lists besides its head, as read from either form of document: a tree
/// (`H` = const json*, each entity's components object) or simdjson's DOM of the text (`H` =
/// simdjson::dom::element), whose values become trees one component at a time.
template <typename H>
struct contents {
    std::vector<entity_id> live;
    std::unordered_map<entity_id, H> by_id;  // each entity's components
    std::size_t slots = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> free, retired;
    std::vector<std::pair<std::string, std::vector<entity_id>>> order;  // dense_order, as listed
};

bool has_component(const json* comps, const std::string& name) {
    return comps->is_object() && comps->contains(name);
}
template <typename F>
void with_component(const json* comps, const std::string& name, F&& f) {
    f(comps->at(name));
}
template <typename F>
void each_component(const json* comps, F&& f) {
    for (const auto& [name, value] : comps->items()) f(name, value);
}

bool has_component(simdjson::dom::element comps, const std::string& name) {
    return comps.is_object() && comps.at_key(name).error() == simdjson::SUCCESS;
}
template <typename F>
void with_component(simdjson::dom::element comps, const std::string& name, F&& f) {
    json value;
    protocol::build(comps.at_key(name).value_unsafe(), value);
    f(value);
}
template <typename F>
void each_component(simdjson::dom::element comps, F&& f) {
    simdjson::dom::object fields;
    if (comps.get(fields) != simdjson::SUCCESS)
        throw ecs::ecs_error(ecs::reason::invalid_value, "an entity's components are not an object");
    for (const auto field : fields) {
        json value;
        protocol::build(field.value, value);
        f(std::string(field.key), value);
    }
}

/// @brief Restores the entities, the allocator and every component into `w` (made by
/// world_from_head): the same for both forms of document.
template <typename H>
void restore_contents(world::world& w, const contents<H>& c, const std::string& source) {
    auto& reg = w.registry();
    // Every slot is live, free or retired: more slots than those listed is damage, found before the
    // registry allocates them all.
    const auto listed = c.live.size() + c.free.size() + c.retired.size();
    if (c.slots > listed)
        fail(source, "allocator.slots is " + std::to_string(c.slots) + " but only " + std::to_string(listed) +
                         " live, free and retired slots are listed");
    reg.restore_entities(c.slots, c.live, c.free, c.retired);

    // Components go in each storage's saved dense order; anything the order does not list
    // (a hand-written snapshot) follows in entity order.
    for (const auto& [name, ids] : c.order) {
        const auto component = reg.component_by_name(name);
        for (const auto id : ids) {
            const auto it = c.by_id.find(id);
            if (it == c.by_id.end() || !has_component(it->second, name))
                fail(source,
                     "dense_order of " + name + " names entity " + std::to_string(id) + " without it");
            with_component(it->second, name,
                           [&](const json& value) { reg.restore_component(component, id, value); });
        }
    }
    for (const auto id : c.live) {
        each_component(c.by_id.at(id), [&](const std::string& name, const json& value) {
            const auto component = reg.component_by_name(name);
            if (!reg.has(id, component)) reg.restore_component(component, id, value);
        });
    }
    reg.finish_restore();
}

void check_journal_seq(const json& doc, const std::string& source) {
    // Which journal records replay (and whether the journal is emptied) follows from it: a value
    // snapshot_journal_seq cannot read as a count is damage.
    if (!doc.contains("journal_seq")) return;
    if (!doc["journal_seq"].is_number_unsigned())
        fail(source, "\"journal_seq\" is not a non-negative integer");
    (void)counter(doc["journal_seq"], source, "journal_seq");
}

/// @brief A scalar of the DOM as a tree (an id, a slot, a count), for whole<T>().
json scalar(simdjson::dom::element e) {
    json out;
    if (!e.is_array() && !e.is_object()) protocol::build(e, out);
    return out;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> dom_slot_pairs(simdjson::dom::element list,
                                                                    const std::string& source) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
    if (list.is_null()) return out;
    simdjson::dom::array pairs;
    if (list.get(pairs) != simdjson::SUCCESS) fail(source, "an allocator list is not an array");
    out.reserve(pairs.size());
    for (const auto p : pairs) {
        simdjson::dom::array two;
        if (p.get(two) != simdjson::SUCCESS || two.size() < 2)
            fail(source, "an allocator entry is not [slot, generation]");
        out.emplace_back(
            whole<std::uint32_t>(scalar(two.at(0).value_unsafe()), source, "an allocator slot"),
            whole<std::uint32_t>(scalar(two.at(1).value_unsafe()), source, "an allocator generation"));
    }
    return out;
}

std::vector<entity_id> dom_ids(simdjson::dom::element list, const std::string& source,
                               const std::string& what) {
    simdjson::dom::array ids;
    if (list.get(ids) != simdjson::SUCCESS) fail(source, what + " is not an array of ids");
    std::vector<entity_id> out;
    out.reserve(ids.size());
    for (const auto id : ids) out.push_back(whole<entity_id>(scalar(id), source, what));
    return out;
}

/// @brief from_snapshot over simdjson's DOM of the text: the head (small) becomes a tree, the
/// entities stay in the DOM and become trees one component at a time, so the import of a large
/// world holds the text, its DOM and the world, never a whole tree of it (many times the text).
std::unique_ptr<world::world> from_dom(simdjson::dom::element root, const std::string& name,
                                       const std::string& source) {
    simdjson::dom::object top;
    if (root.get(top) != simdjson::SUCCESS)
        fail(source, "not an ecsd snapshot (no \"format\": \"ecsd-snapshot\")");
    json head = json::object();
    simdjson::dom::element entities, allocator, order;
    bool has_entities = false, has_allocator = false, has_order = false;
    for (const auto field : top) {  // a repeated key's last value counts, as for a tree
        if (field.key == "entities") {
            entities = field.value;
            has_entities = true;
        } else if (field.key == "allocator") {
            allocator = field.value;
            has_allocator = true;
        } else if (field.key == "dense_order") {
            order = field.value;
            has_order = true;
        } else {
            protocol::build(field.value, head[std::string(field.key)]);
        }
    }
    // The world takes the name it is imported as (a copy may be renamed); the rest is as exported.
    if (auto wj = head.find("world"); wj != head.end() && wj->is_object()) (*wj)["name"] = name;
    check_snapshot_header(head, source);
    return rebuild_world(source, [&] {
        check_journal_seq(head, source);
        auto w = world_from_head(head, source);
        contents<simdjson::dom::element> c;
        simdjson::dom::array list;
        if (!has_entities || entities.get(list) != simdjson::SUCCESS)
            fail(source, "\"entities\" is not an array");
        c.live.reserve(list.size());
        for (const auto e : list) {
            simdjson::dom::element id, comps;
            if (!e.is_object() || e.at_key("id").get(id) != simdjson::SUCCESS ||
                e.at_key("components").get(comps) != simdjson::SUCCESS)
                fail(source, "an entity is not {\"id\", \"components\"}");
            const auto eid = whole<entity_id>(scalar(id), source, "an entity id");
            c.live.push_back(eid);
            if (!c.by_id.emplace(eid, comps).second)
                fail(source, "entity " + std::to_string(eid) + " appears twice");
        }
        simdjson::dom::element slots;
        if (!has_allocator || !allocator.is_object() ||
            allocator.at_key("slots").get(slots) != simdjson::SUCCESS)
            fail(source, "\"allocator\" has no \"slots\"");
        c.slots = whole<std::size_t>(scalar(slots), source, "allocator.slots");
        if (simdjson::dom::element l; allocator.at_key("free").get(l) == simdjson::SUCCESS)
            c.free = dom_slot_pairs(l, source);
        if (simdjson::dom::element l; allocator.at_key("retired").get(l) == simdjson::SUCCESS)
            c.retired = dom_slot_pairs(l, source);
        if (has_order) {
            simdjson::dom::object storages;
            if (order.get(storages) != simdjson::SUCCESS) fail(source, "\"dense_order\" is not an object");
            for (const auto storage : storages)
                c.order.emplace_back(std::string(storage.key),
                                     dom_ids(storage.value, source, "a dense_order id"));
        }
        restore_contents(*w, c, source);
        return w;
    });
}

}  // namespace

std::unique_ptr<world::world> from_snapshot(const json& doc, const std::string& source) {
    check_snapshot_header(doc, source);
    return rebuild_world(source, [&] {
        check_journal_seq(doc, source);
        auto w = world_from_head(doc, source);
        contents<const json*> c;
        const auto& entities = doc.at("entities");
        c.live.reserve(entities.size());
        for (const auto& e : entities) {
            const auto id = whole<entity_id>(e.at("id"), source, "an entity id");
            c.live.push_back(id);
            if (!c.by_id.emplace(id, &e.at("components")).second)
                fail(source, "entity " + std::to_string(id) + " appears twice");
        }
        const auto& alloc = doc.at("allocator");
        c.slots = whole<std::size_t>(alloc.at("slots"), source, "allocator.slots");
        c.free = slot_pairs(alloc.value("free", json::array()), source);
        c.retired = slot_pairs(alloc.value("retired", json::array()), source);
        const json order = doc.value("dense_order", json::object());  // kept: items() refers to it
        for (const auto& [name, ids] : order.items()) {
            auto& listed = c.order.emplace_back(name, std::vector<entity_id>{}).second;
            for (const auto& idj : ids) listed.push_back(whole<entity_id>(idj, source, "a dense_order id"));
        }
        restore_contents(*w, c, source);
        return w;
    });
}

std::unique_ptr<world::world> world_from_import(std::string text, const std::string& name) {
    const std::string source = "the import";
    if (check_snapshot_seal(text).status == snapshot_seal::state::mismatch)
        fail(source, "the snapshot fails its checksum (changed or damaged on the way)");
    if (protocol::exceeds_depth(text, protocol::max_document_depth))
        fail(source, "the data nests deeper than " + std::to_string(protocol::max_document_depth) +
                         " levels, deeper than any snapshot ecsd writes");
    // simdjson reads the text in place, from the padding this adds (no second copy of the text).
    const std::size_t size = text.size();
    text.resize(size + simdjson::SIMDJSON_PADDING);
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(reinterpret_cast<const std::uint8_t*>(text.data()), size, false).get(root) !=
        simdjson::SUCCESS) {
        // What simdjson refuses, nlohmann may still read (its rules for \u escapes differ): the
        // tree's way, as a file is read, and its verdict stands.
        text.resize(size);
        json doc = read_document(text, source, "the data");
        if (auto wj = doc.find("world"); wj != doc.end() && wj->is_object()) (*wj)["name"] = name;
        return from_snapshot(doc, source);
    }
    return from_dom(root, name, source);
}

}  // namespace ecsd::persist
