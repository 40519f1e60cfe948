// The JSON face of a world: what the protocol's entity, component, query and
// prefab methods do. Every method validates all of its input before it
// changes anything, so a refused request leaves the world as it was.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include "world/position_grid.hpp"
#include "world/scratch.hpp"
#include "world/world.hpp"

namespace ecsd::world {

using ecs::ecs_error;
using ecs::reason;

namespace {
constexpr std::size_t max_prefabs = 1024;

std::vector<std::string> string_list(const json& j, const char* what) {
    if (!j.is_array())
        throw ecs_error(reason::invalid_params, std::string(what) + " must be an array of names");
    std::vector<std::string> out;
    for (const auto& item : j) {
        if (!item.is_string())
            throw ecs_error(reason::invalid_params, std::string(what) + " must be an array of names");
        out.push_back(item.get<std::string>());
    }
    return out;
}

ecs::near_term near_from_json(const json& v) {
    const auto number = [&](const char* k) {
        const auto it = v.find(k);
        if (it == v.end() || !it->is_number() || !std::isfinite(it->get<double>()))
            throw ecs_error(reason::invalid_params, std::string("query.near.") + k + " must be a number");
        return it->get<double>();
    };
    if (!v.is_object())
        throw ecs_error(reason::invalid_params, "query.near must be {x, y, r} or {entity, r}");
    ecs::near_term n;
    if (v.contains("entity")) {
        const auto& ref = v["entity"];
        const bool named = ref.is_string() && !ref.get_ref<const std::string&>().empty();
        if (!(ref.is_number_unsigned() || named) || v.size() != 2)
            throw ecs_error(reason::invalid_params,
                            "query.near must be {x, y, r} or {entity, r} (entity an id or a Name)");
        if (named)
            n.entity_name = ref.get<std::string>();
        else
            n.entity = ref.get<std::uint64_t>();
    } else {
        if (v.size() != 3)
            throw ecs_error(reason::invalid_params, "query.near must be {x, y, r} or {entity, r}");
        n.x = number("x");
        n.y = number("y");
    }
    n.r = number("r");
    if (n.r < 0) throw ecs_error(reason::invalid_params, "query.near.r must be >= 0");
    return n;
}

/// @brief {"where": [{"field": "Health.hp", "op": "<", "value": 50}]}, the object form of value filters;
/// {"field": "Health.hp", "op": "<", "other": "Health.max"} compares two fields of one entity.
std::vector<ecs::value_filter> filters_from_json(const json& list) {
    if (!list.is_array())
        throw ecs_error(reason::invalid_params, "query.where must be an array of {field, op, value}");
    std::vector<ecs::value_filter> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& item = list[i];
        const std::string where = "query.where[" + std::to_string(i) + "]";
        const bool other = item.is_object() && item.contains("other");
        if (!item.is_object() || item.size() != 3 || !item.contains("field") || !item.contains("op") ||
            !(item.contains("value") || (other && item["other"].is_string())) || !item["field"].is_string() ||
            !item["op"].is_string())
            throw ecs_error(reason::invalid_params,
                            where +
                                " must be {\"field\": \"Component.field\", \"op\": \"<\", \"value\": 50} "
                                "or {\"field\": \"Health.hp\", \"op\": \"<\", \"other\": \"Health.max\"}");
        const auto split = [&](const std::string& path, const char* key) {
            const auto dot = path.rfind('.');
            if (dot == std::string::npos || dot == 0 || dot + 1 == path.size())
                throw ecs_error(reason::invalid_params,
                                where + "." + key + " must be Component.field, e.g. Health.hp");
            return std::pair{path.substr(0, dot), path.substr(dot + 1)};
        };
        auto [component, field] = split(item["field"].get<std::string>(), "field");
        ecs::value_filter f;
        f.component = std::move(component);
        f.field = std::move(field);
        f.op = item["op"].get<std::string>();
        f.value = other ? json(nullptr) : item["value"];
        if (other)
            std::tie(f.other_component, f.other_field) = split(item["other"].get<std::string>(), "other");
        if (const auto problem = ecs::filter_problem(f))
            throw ecs_error(reason::invalid_params, where + ": " + *problem);
        out.push_back(std::move(f));
    }
    return out;
}

ecs::query_terms terms_from_json(const json& q) {
    if (q.is_string()) return ecs::parse_query(q.get<std::string>());
    if (!q.is_object())
        throw ecs_error(reason::invalid_params,
                        "query must be a string or an object {all, any, none, optional, added, changed, "
                        "removed, died, near, where}");
    ecs::query_terms t;
    for (const auto& [key, value] : q.items()) {
        if (key == "all")
            t.all = string_list(value, "query.all");
        else if (key == "any")
            t.any.push_back(string_list(value, "query.any"));
        else if (key == "none")
            t.none = string_list(value, "query.none");
        else if (key == "optional")
            t.optional = string_list(value, "query.optional");
        else if (key == "added")
            t.added = string_list(value, "query.added");
        else if (key == "changed")
            t.changed = string_list(value, "query.changed");
        else if (key == "removed")
            t.removed = string_list(value, "query.removed");
        else if (key == "died") {
            if (!value.is_boolean())
                throw ecs_error(reason::invalid_params, "query.died must be true or false");
            t.died = value.get<bool>();
        } else if (key == "near") {
            t.near = near_from_json(value);
        } else if (key == "where") {
            t.where = filters_from_json(value);
        } else {
            throw ecs_error(reason::invalid_params, "query has no key '" + key + "'");
        }
    }
    if (!t.any.empty() && t.any[0].empty()) t.any.clear();
    return t;
}
}  // namespace

std::vector<std::pair<ecs::component_id, const json*>> world::resolve_components(
    const json& components) const {
    if (!components.is_object())
        throw ecs_error(reason::invalid_params, "components must be an object {\"Name\": value}");
    std::vector<std::pair<ecs::component_id, const json*>> out;
    for (const auto& [name, value] : components.items()) {
        const auto c = reg_.component_by_name(name);
        // Contacts name other entities and are rewritten every tick by collision detection: a
        // client's list could only name the dead or be overwritten, so clients cannot write it.
        if (c == reg_.id_of<Contacts>() && !ecs::internal::restoring())
            throw ecs_error(reason::invalid_value,
                            "Contacts is written by collision detection each tick, not by clients");
        reg_.storage(c).validate(value);
        out.emplace_back(c, &value);
    }
    return out;
}

void world::check_capacity(std::size_t more) const {
    if (reg_.size() + more > settings_.max_entities)
        throw ecs_error(reason::limit_reached, "world '" + settings_.name + "' is limited to " +
                                                   std::to_string(settings_.max_entities) + " entities");
}

entity_id world::find_named(std::string_view name) const {
    const auto& names = reg_.storage<Name>();
    for (std::size_t i = 0; i < names.size(); ++i) {
        const auto slot = names.slots()[i];
        if (names.get(slot).name == name) return reg_.entities().id_of(slot);
    }
    return 0;
}

entity_id world::entity_ref(const json& ref) const {
    if (!ref.is_string()) return ref.get<entity_id>();
    const auto& name = ref.get_ref<const std::string&>();
    // A Name is never all digits, so "1" can name no entity: it is an id sent as a string.
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const auto shown = name.substr(0, 24);
        throw ecs_error(reason::invalid_params, "\"" + shown +
                                                    "\" is a string: an entity id is a JSON number (" +
                                                    shown + "), and a Name is never all digits");
    }
    const entity_id e = find_named(name);
    if (e == 0) throw ecs_error(reason::no_such_entity, "no entity is named '" + name.substr(0, 64) + "'");
    return e;
}

void world::check_name(const json& components, entity_id self, batch_names* batch) const {
    if (!components.is_object()) return;
    const auto it = components.find("Name");
    if (it == components.end() || !it->is_object()) return;
    const auto n = it->find("name");
    if (n == it->end() || !n->is_string()) return;  // validation reports it
    const auto& name = n->get_ref<const std::string&>();
    entity_id owner = 0;
    if (batch) {
        if (!batch->walked) {
            const auto& names = reg_.storage<Name>();
            batch->owners.reserve(names.size());
            for (std::size_t i = 0; i < names.size(); ++i) {
                const auto slot = names.slots()[i];
                batch->owners.emplace(names.get(slot).name, reg_.entities().id_of(slot));
            }
            batch->walked = true;
        }
        if (const auto at = batch->owners.find(name); at != batch->owners.end()) owner = at->second;
    } else {
        owner = find_named(name);
    }
    const bool in_batch = batch && batch->given.contains(name);
    if ((owner != 0 && owner != self) || in_batch)
        throw ecs_error(
            reason::invalid_value,
            "Name '" + name + "' is taken" +
                (owner != 0 && owner != self ? " by entity " + std::to_string(owner) : " in this request") +
                ": names are unique in a world");
    if (batch) batch->given.insert(name);
}

entity_id world::spawn(const json& components) {
    const auto resolved = resolve_components(components);
    check_name(components, 0);
    check_capacity(1);
    return create_resolved(resolved);
}

entity_id world::create_resolved(const std::vector<std::pair<ecs::component_id, const json*>>& resolved) {
    const entity_id e = reg_.create();
    for (const auto& [c, value] : resolved) reg_.emplace_json(e, c, *value);
    add_required(e);
    return e;
}

void world::add_required(entity_id e) {
    // A RigidBody is a body that moves: it needs a Velocity for gravity to act on. A Frozen entity
    // stays without one (the freeze spell took it away).
    if (reg_.has<RigidBody>(e) && !reg_.has<Velocity>(e) && !reg_.has<Frozen>(e)) reg_.emplace<Velocity>(e);
}

std::vector<entity_id> world::spawn_many(const json& list) {
    if (!list.is_array())
        throw ecs_error(reason::invalid_params, "entities must be an array of component objects");
    std::vector<std::vector<std::pair<ecs::component_id, const json*>>> all;
    all.reserve(list.size());
    batch_names names;
    for (const auto& item : list) {
        const json& comps = item.is_object() && item.contains("components") ? item["components"] : item;
        all.push_back(resolve_components(comps));
        check_name(comps, 0, &names);
    }
    check_capacity(list.size());
    std::vector<entity_id> ids;
    ids.reserve(all.size());
    for (const auto& resolved : all) ids.push_back(create_resolved(resolved));
    return ids;
}

void world::despawn(entity_id e) {
    reg_.destroy(e);
}

std::size_t world::despawn_many(std::span<const entity_id> ids) {
    const std::size_t before = reg_.size();
    reg_.destroy(ids);
    return before - reg_.size();
}

namespace {
/// @brief A component to write: its name (the key) and id.
using component_row = std::pair<std::string_view, ecs::component_id>;

/// @brief json::dump() order: keys sorted; a name asked twice appears once.
void sort_rows(std::vector<component_row>& rows) {
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
}

/// @brief An entity's components in name order, in `inline_rows` when they fit (most entities), or
/// in `spill`: sorted by the registry's name ranks. A vector grown per entity and sorted by name
/// was three allocations and a dozen string compares on every world.get_components.
template <std::size_t N>
std::span<const component_row> rows_of(const ecs::registry& reg, entity_id e,
                                       std::array<component_row, N>& inline_rows,
                                       std::vector<component_row>& spill) {
    std::size_t n = 0;
    reg.entities().for_each_component(ecs::index_of(e), [&](ecs::component_id) { ++n; });
    component_row* rows = inline_rows.data();
    if (n > N) {
        spill.resize(n);
        rows = spill.data();
    }
    std::size_t at = 0;
    reg.entities().for_each_component(ecs::index_of(e), [&](ecs::component_id c) {
        rows[at++] = {reg.storage(c).name(), c};
    });
    std::sort(rows, rows + n, [&](const component_row& a, const component_row& b) {
        return reg.name_rank(a.second) < reg.name_rank(b.second);
    });
    return {rows, n};
}

/// @brief rows_of for a walk over many entities: consecutive entities with the same components
/// (most of a query's matches) share one sorted list instead of each building and sorting its own.
class rows_cache {
  public:
    const std::vector<component_row>& of(const ecs::registry& reg, entity_id e) {
        ids_.clear();
        reg.entities().for_each_component(ecs::index_of(e), [&](ecs::component_id c) { ids_.push_back(c); });
        if (!filled_ || !same_ids()) {
            rows_.clear();
            for (const auto c : ids_) rows_.emplace_back(reg.storage(c).name(), c);
            sort_rows(rows_);
            last_.swap(ids_);
            filled_ = true;
        }
        return rows_;
    }

  private:
    /// A few ids compared in a loop: operator== called memcmp for them, 3% of a query page.
    [[nodiscard]] bool same_ids() const noexcept {
        if (ids_.size() != last_.size()) return false;
        for (std::size_t i = 0; i < ids_.size(); ++i)
            if (ids_[i] != last_[i]) return false;
        return true;
    }

    std::vector<ecs::component_id> ids_;
    std::vector<ecs::component_id> last_;
    std::vector<component_row> rows_;
    bool filled_ = false;
};

/// @brief Writes {"Name": value, ...} for the rows (skipping those the entity lacks when asked to).
void write_object(const ecs::registry& reg, entity_id e, std::span<const component_row> rows,
                  bool only_present, ecs::json_text& w) {
    w.raw("{");
    bool first = true;
    for (const auto& [name, c] : rows) {  // sorted by name, written by the pool's key piece
        if (only_present && !reg.has(e, c)) continue;
        if (!first) w.raw(",");
        first = false;
        const auto& storage = reg.storage(c);
        w.piece(storage.key_piece());
        storage.write_value(ecs::index_of(e), w);
    }
    w.raw("}");
}
}  // namespace

void world::write_components(entity_id e, const std::optional<std::vector<std::string>>& names,
                             ecs::json_text& w) const {
    reg_.check(e);
    if (!names) {
        std::array<component_row, 16> inline_rows;
        std::vector<component_row> spill;
        write_object(reg_, e, rows_of(reg_, e, inline_rows, spill), false, w);
        return;
    }
    // Resolve and check everything before writing: an error leaves nothing half-written.
    std::vector<component_row> rows;
    for (const auto& n : *names) {
        const auto c = reg_.component_by_name(n);
        if (!reg_.has(e, c))
            throw ecs_error(reason::no_such_component, "entity " + std::to_string(e) + " has no " + n);
        rows.emplace_back(reg_.storage(c).name(), c);
    }
    sort_rows(rows);
    write_object(reg_, e, rows, false, w);
}

json world::get_components(entity_id e, const std::optional<std::vector<std::string>>& names) const {
    std::string text;
    ecs::json_text w(text);
    write_components(e, names, w);
    w.flush();
    return json::parse(text);
}

void world::insert_components(entity_id e, const json& components) {
    reg_.check(e);
    const auto resolved = resolve_components(components);
    check_name(components, e);
    for (const auto& [c, value] : resolved) reg_.insert_json(e, c, *value);
    add_required(e);
}

void world::mutate_component(entity_id e, const std::string& component, const std::string& path,
                             const json& value) {
    reg_.check(e);
    const auto c = reg_.component_by_name(component);
    if (c == reg_.id_of<Contacts>())
        throw ecs_error(reason::invalid_value,
                        "Contacts is written by collision detection each tick, not by clients");
    std::string field = path;
    if (!field.empty() && field.front() == '/') field.erase(0, 1);  // accept a JSON pointer to a field
    if (field.empty() || field.find('/') != std::string::npos)
        throw ecs_error(reason::invalid_params, "path must name one field of " + component + ", e.g. \"x\"");
    if (c == reg_.id_of<Name>() && field == "name") check_name({{"Name", {{"name", value}}}}, e);
    reg_.set_field_json(e, c, field, value);
}

void world::remove_components(entity_id e, const std::vector<std::string>& names) {
    reg_.check(e);
    std::vector<ecs::component_id> ids;
    for (const auto& n : names) {
        const auto c = reg_.component_by_name(n);
        if (!reg_.has(e, c))
            throw ecs_error(reason::no_such_component, "entity " + std::to_string(e) + " has no " + n);
        ids.push_back(c);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (auto c : ids) reg_.remove(e, c);
}

void world::write_query(const json& q, const std::optional<std::vector<std::string>>& fields,
                        std::size_t limit, std::size_t offset, ecs::json_text& w) const {
    // Everything that can fail happens before the first byte is written.
    const auto terms = parse_terms(q);
    const auto resolved = reg_.resolve(terms);
    std::vector<component_row> field_rows;
    if (fields) {
        for (const auto& f : *fields) {
            const auto c = reg_.component_by_name(f);
            field_rows.emplace_back(reg_.storage(c).name(), c);
        }
        sort_rows(field_rows);
    }
    w.raw(R"({"entities":[)");
    std::size_t total = 0;
    std::size_t written = 0;
    rows_cache rows;
    for_each_match(terms, resolved, [&](entity_id e) {
        if (total++ < offset || written >= limit) return;
        if (written++ > 0) w.raw(",");
        if (reg_.alive(e)) {
            w.raw(R"({"components":)");
            if (fields) {
                write_object(reg_, e, field_rows, true, w);
            } else {
                write_object(reg_, e, rows.of(reg_, e), false, w);
            }
        } else {
            w.raw(R"({"alive":false)");
        }
        w.raw(R"(,"entity":)");
        w.unsigned_integer(e);
        w.raw("}");
    });
    w.raw(R"(],"total":)");
    w.unsigned_integer(total);
    w.raw("}");
}

ecs::query_terms world::parse_terms(const json& q) const {
    auto terms = terms_from_json(q);
    // near(hero, r): the Name is resolved now, as `get hero` does (no_such_entity when nobody has it);
    // a watch keeps following that entity.
    if (terms.near && terms.near->entity_name) {
        terms.near->entity = static_cast<std::uint64_t>(entity_ref(json(*terms.near->entity_name)));
        terms.near->entity_name.reset();
    }
    // near() reads Position: only entities that have one can be near anything.
    if (terms.near && std::find(terms.all.begin(), terms.all.end(), "Position") == terms.all.end())
        terms.all.emplace_back("Position");
    // A value filter reads its component: only entities that have it can pass; its field must exist.
    const auto check_field = [&](const std::string& component, const std::string& field) {
        if (std::find(terms.all.begin(), terms.all.end(), component) == terms.all.end())
            terms.all.push_back(component);
        const auto fields = reg_.storage(reg_.component_by_name(component)).schema_fields();
        const bool known = std::any_of(fields.begin(), fields.end(),
                                       [&](const json& d) { return d.value("name", "") == field; });
        if (!known)
            throw ecs_error(reason::invalid_params, "query: " + component + " has no field '" + field + "'");
    };
    for (const auto& f : terms.where) {
        check_field(f.component, f.field);
        if (f.with_field()) check_field(f.other_component, f.other_field);
    }
    return terms;
}

void world::for_each_match(const ecs::query_terms& terms, const ecs::query& resolved,
                           const std::function<void(entity_id)>& f) const {
    if (terms.only) {
        const auto e = static_cast<entity_id>(*terms.only);
        if (reg_.alive(e) && reg_.matches(ecs::index_of(e), resolved)) f(e);
        return;
    }
    if (!terms.where.empty()) {
        // Value filters wrap the walk: ids of the filtered components are resolved once per call.
        struct check {
            const ecs::pool* pool;
            const ecs::pool* other;  // a field-to-field filter's other component, else null
            const ecs::value_filter* filter;
        };
        std::vector<check> checks;
        for (const auto& w : terms.where)
            checks.push_back(
                {&reg_.storage(reg_.component_by_name(w.component)),
                 w.with_field() ? &reg_.storage(reg_.component_by_name(w.other_component)) : nullptr, &w});
        ecs::query_terms rest = terms;
        rest.where.clear();
        for_each_match(rest, resolved, [&](entity_id e) {
            if (!reg_.alive(e)) return;  // a dead entity (died, removed) has no value to compare
            const auto slot = ecs::index_of(e);
            for (const auto& c : checks) {
                const json value = c.pool->value_json(slot);
                const auto it = value.find(c.filter->field);
                if (it == value.end()) return;
                if (c.other == nullptr) {
                    if (!ecs::filter_passes(*c.filter, *it)) return;
                    continue;
                }
                const json other = c.other->value_json(slot);
                const auto there = other.find(c.filter->other_field);
                if (there == other.end() || !ecs::filter_passes(*c.filter, *it, *there)) return;
            }
            f(e);
        });
        return;
    }
    if (!terms.near) {
        reg_.for_each_match(resolved, f);
        return;
    }
    const auto& n = *terms.near;
    double cx = n.x;
    double cy = n.y;
    if (n.entity) {
        const auto centre = static_cast<entity_id>(*n.entity);
        if (!reg_.alive(centre) || !reg_.has<Position>(centre)) return;  // nothing is near a missing entity
        const auto& p = reg_.storage<Position>().get(ecs::index_of(centre));
        cx = p.x;
        cy = p.y;
    }
    // Change filters (added, changed, removed, died) are the registry walk's: they keep it.
    const bool plain_match =
        resolved.added.empty() && resolved.changed.empty() && resolved.removed.empty() && !resolved.died;
    if (near_grid_ != nullptr && plain_match) {
        // The grid yields cell order; callers get the walk's order, by slot (a watch's entries, a page).
        // Those in range first, then their signatures asked of the cache all at once, then the
        // query's test: scattered slots, whose misses then overlap instead of queueing.
        // The thread's scratch (world/scratch.hpp), taken out while in use, so that a walk begun
        // inside f has one of its own.
        thread_local std::vector<std::uint32_t> scratch;
        auto found = std::exchange(scratch, {});  // kept empty
        near_grid_->for_each_near(cx, cy, n.r, [&](std::uint32_t slot) { found.push_back(slot); });
        const auto& table = reg_.entities();
        for (const auto slot : found)
            if (const void* a = table.word_address(slot)) __builtin_prefetch(a);
        std::erase_if(found, [&](std::uint32_t slot) { return !reg_.matches(slot, resolved); });
        std::sort(found.begin(), found.end());
        for (const auto slot : found) f(table.id_of(slot));
        empty_scratch(found);
        scratch = std::move(found);
        return;
    }
    const double r2 = n.r * n.r;
    const auto& positions = reg_.storage<Position>();
    reg_.for_each_match(resolved, [&](entity_id e) {
        if (!reg_.alive(e)) return;
        const auto& p = positions.get(ecs::index_of(e));
        const double dx = p.x - cx;
        const double dy = p.y - cy;
        if (dx * dx + dy * dy <= r2) f(e);
    });
}

world::near_index::near_index(const world& w, double cell, position_grid* reuse) : w_(w) {
    if (w.near_grid_ != nullptr) return;  // an outer one is in use
    if (reuse == nullptr) {
        own_ = std::make_unique<position_grid>();
        reuse = own_.get();
    }
    reuse->rebuild(w.registry(), cell);
    w.near_grid_ = reuse;
    installed_ = true;
}

world::near_index::~near_index() {
    if (installed_) w_.near_grid_ = nullptr;
}

json world::query(const json& q, const std::optional<std::vector<std::string>>& fields, std::size_t limit,
                  std::size_t offset) const {
    std::string text;
    ecs::json_text w(text);
    write_query(q, fields, limit, offset, w);
    w.flush();
    return json::parse(text);
}

json world::list_components(std::optional<entity_id> e) const {
    if (e) {
        json names = json::array();
        for (auto c : reg_.components_of(*e)) names.push_back(reg_.storage(c).name());
        return names;
    }
    json out = json::array();
    for (ecs::component_id c = 0; c < reg_.component_count(); ++c) {
        const auto& p = reg_.storage(c);
        const char* kind = p.kind() == ecs::storage_kind::tag     ? "tag"
                           : p.kind() == ecs::storage_kind::typed ? "builtin"
                                                                  : "runtime";
        if (p.kind() == ecs::storage_kind::tag &&
            std::any_of(runtime_defs_.begin(), runtime_defs_.end(),
                        [&](const auto& d) { return d.first == p.name(); }))
            kind = "runtime_tag";
        out.push_back(
            {{"name", p.name()}, {"kind", kind}, {"fields", p.schema_fields()}, {"count", p.size()}});
    }
    return out;
}

json world::describe(entity_id e) const {
    reg_.check(e);
    json systems = json::array();
    for (const auto& s : systems_) {
        const auto terms = ecs::parse_query(s.signature);
        if (terms.match_all || reg_.matches(ecs::index_of(e), reg_.resolve(terms))) systems.push_back(s.name);
    }
    const auto changes = reg_.changes_of(e);
    const auto names = [&](const std::vector<ecs::component_id>& ids) {
        json out = json::array();
        for (auto c : ids) out.push_back(reg_.storage(c).name());
        return out;
    };
    return {{"entity", e},
            {"components", get_components(e, std::nullopt)},
            {"systems", std::move(systems)},
            {"changes",
             {{"added", names(changes.added)},
              {"changed", names(changes.changed)},
              {"removed", names(changes.removed)}}}};
}

void world::register_component(const std::string& name, const json& fields) {
    for (char ch : name)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
            throw ecs_error(reason::invalid_value, "component names use letters, digits and _ only");
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())))
        throw ecs_error(reason::invalid_value, "component names start with a letter or _");
    reg_.register_dynamic(name, fields);
    runtime_defs_.emplace_back(name, fields.is_null() ? json::object() : fields);
}

void world::define_prefab(const std::string& name, const json& components) {
    if (name.empty() || name.size() > 64)
        throw ecs_error(reason::invalid_value, "prefab names are 1 to 64 characters");
    (void)resolve_components(components);
    if (!prefabs_.count(name) && prefabs_.size() >= max_prefabs)
        throw ecs_error(reason::limit_reached,
                        "at most " + std::to_string(max_prefabs) + " prefabs per world");
    prefabs_[name] = components;
}

std::vector<entity_id> world::spawn_prefab(const std::string& name, std::size_t count,
                                           const json& overrides) {
    const auto it = prefabs_.find(name);
    if (it == prefabs_.end()) throw ecs_error(reason::no_such_prefab, "no prefab named '" + name + "'");
    if (count > 100'000)
        throw ecs_error(reason::limit_reached, "spawn_prefab makes at most 100000 entities per call");
    if (!overrides.is_null() && !overrides.is_object())
        throw ecs_error(reason::invalid_params, "overrides must be an object {\"Name\": value}");
    // Overrides merge field by field into the prefab's values (a new component is added whole).
    json components = it->second;
    if (overrides.is_object()) {
        for (const auto& [comp, value] : overrides.items()) {
            if (components.contains(comp) && components[comp].is_object() && value.is_object())
                components[comp].update(value);
            else
                components[comp] = value;
        }
    }
    // What spawn_many would do with `count` copies, without making them: `count` copies of a
    // prefab's json are that many trees of short-lived nodes, which malloc keeps as RSS afterwards.
    const auto resolved = resolve_components(components);
    batch_names names;
    // spawn_many checks each copy's Name against the batch; the second copy is the first refused.
    for (std::size_t i = 0; i < std::min<std::size_t>(count, 2); ++i) check_name(components, 0, &names);
    check_capacity(count);
    std::vector<entity_id> ids;
    ids.reserve(count);
    for (std::size_t i = 0; i < count; ++i) ids.push_back(create_resolved(resolved));
    return ids;
}

}  // namespace ecsd::world
