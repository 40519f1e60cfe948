#include "ecs/query.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <unordered_set>
#include <vector>

#include "ecs/error.hpp"
#include "ecs/registry.hpp"

namespace ecsd::ecs {

namespace {
bool name_char(char c, bool first) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalpha(u) || c == '_' || (!first && (std::isdigit(u) || c == '.' || c == ':' || c == '-'));
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

[[noreturn]] void fail(std::size_t pos, const std::string& what) {
    throw ecs_error(reason::invalid_params, "query: " + what + " at character " + std::to_string(pos + 1));
}

std::size_t blanks(std::string_view s) {
    std::size_t n = 0;
    while (n < s.size() && std::isspace(static_cast<unsigned char>(s[n]))) ++n;
    return n;
}

/// @brief A component name; `pos` is where `s` starts in the query text, so an error points at the
/// character that is wrong.
std::string parse_name(std::string_view s, std::size_t pos) {
    pos += blanks(s);
    s = trim(s);
    if (s.empty()) fail(pos, "expected a component name");
    for (std::size_t i = 0; i < s.size(); ++i)
        if (!name_char(s[i], i == 0))
            fail(pos + i, "unexpected '" + std::string(1, s[i]) + "' in '" + std::string(s) + "'");
    return std::string(s);
}

/// @brief `fn(Name)` -> Name, or empty when the term is not that call.
bool parse_call(std::string_view term, std::string_view fn, std::size_t pos, std::string& out) {
    if (term.substr(0, fn.size()) != fn) return false;
    auto rest = trim(term.substr(fn.size()));
    if (rest.empty() || rest.front() != '(') return false;
    if (rest.back() != ')') fail(pos, "missing ')' after " + std::string(fn));
    out = parse_name(rest.substr(1, rest.size() - 2), pos);
    return true;
}
double parse_number(std::string_view s, std::size_t pos, const char* what) {
    s = trim(s);
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
        fail(pos, std::string("near: ") + what + " must be a number, got '" + std::string(s) + "'");
    return v;
}

/// @brief `near(x, y, r)` or `near(ENTITY, r)`.
near_term parse_near(std::string_view args, std::size_t pos) {
    std::vector<std::string_view> parts;
    std::size_t s = 0;
    while (s <= args.size()) {
        std::size_t comma = args.find(',', s);
        if (comma == std::string_view::npos) comma = args.size();
        parts.push_back(trim(args.substr(s, comma - s)));
        s = comma + 1;
    }
    near_term n;
    if (parts.size() == 3) {
        n.x = parse_number(parts[0], pos, "x");
        n.y = parse_number(parts[1], pos, "y");
        n.r = parse_number(parts[2], pos, "r");
    } else if (parts.size() == 2) {
        // ENTITY: an id (digits), a Name ("hero"), or a quoted Name ("\"big boss\"", a JSON string).
        const std::string_view ref = parts[0];
        const bool numeric = !ref.empty() && (std::isdigit(static_cast<unsigned char>(ref.front())) != 0 ||
                                              ref.front() == '-' || ref.front() == '+' || ref.front() == '.');
        if (ref.empty()) fail(pos, "near: expected an entity id or Name before ', r'");
        if (numeric) {
            std::uint64_t id = 0;
            const auto [end, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), id);
            if (ec != std::errc() || end != ref.data() + ref.size())
                fail(pos, "near: expected an entity id (digits) or a Name, got '" + std::string(ref) + "'");
            n.entity = id;
        } else if (ref.front() == '"') {
            const auto quoted = nlohmann::json::parse(ref, nullptr, /*allow_exceptions=*/false);
            if (!quoted.is_string() || quoted.get_ref<const std::string&>().empty())
                fail(pos, "near: a quoted Name must be a JSON string, got " + std::string(ref));
            n.entity_name = quoted.get<std::string>();
        } else {
            n.entity_name = std::string(ref);
        }
        n.r = parse_number(parts[1], pos, "r");
    } else {
        fail(pos, "near takes (x, y, r) or (ENTITY, r)");
    }
    if (n.r < 0) fail(pos, "near: r must be >= 0");
    return n;
}

/// @brief The end of the term starting at `start`: the next comma outside parentheses.
std::size_t term_end(std::string_view text, std::size_t start) {
    int depth = 0;
    bool quoted = false;  // a comma inside "..." (a filter's text literal) ends nothing
    for (std::size_t i = start; i < text.size(); ++i) {
        if (quoted) {
            if (text[i] == '\\')
                ++i;
            else if (text[i] == '"')
                quoted = false;
            continue;
        }
        if (text[i] == '"') quoted = true;
        if (text[i] == '(' || text[i] == '[') ++depth;  // `Contacts.entities == [1, 2]` is one term
        if ((text[i] == ')' || text[i] == ']') && depth > 0) --depth;
        if (text[i] == ',' && depth == 0) return i;
    }
    return text.size();
}
/// @brief Where the comparison operator of a value filter starts (never at 0: `!Name` is no filter),
/// or npos when the term has none.
std::size_t operator_at(std::string_view term) {
    for (std::size_t i = 1; i < term.size(); ++i) {
        const char c = term[i];
        if (c == '"') return std::string_view::npos;  // an operator comes before any literal
        if (c == '=' || c == '<' || c == '>' || (c == '!' && i + 1 < term.size() && term[i + 1] == '='))
            return i;
    }
    return std::string_view::npos;
}

/// @brief `Component.field` at `pos` (its first character's place in the query text) into `comp`
/// and `field`; false when `text` has no such shape.
bool split_field(std::string_view text, std::size_t pos, std::string& comp, std::string& field) {
    const auto dot = text.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == text.size()) return false;
    comp = parse_name(text.substr(0, dot), pos);
    field = std::string(text.substr(dot + 1));
    for (std::size_t i = 0; i < field.size(); ++i)
        if (!name_char(field[i], i == 0) || field[i] == '.')
            fail(pos + dot + 1 + i, "bad field name '" + field + "'");
    return true;
}

/// @brief A term with a comparison: `Health.hp < 50`, `Health.hp < Health.max`, `Contacts.entities
/// != []`. `pos` is where `term` starts in the query text: every error points into the term.
value_filter parse_filter(std::string_view term, std::size_t op_at, std::size_t pos) {
    value_filter f;
    const std::string_view left = trim(term.substr(0, op_at));
    const bool two = op_at + 1 < term.size() && term[op_at + 1] == '=';
    f.op = std::string(term.substr(op_at, two ? 2 : 1));
    if (f.op == "=") fail(pos + op_at, "use == to compare");
    if (!split_field(left, pos, f.component, f.field))
        fail(pos, "a filter compares Component.field, e.g. Health.hp < 50 or Health.hp < Health.max");
    const std::string_view after = term.substr(op_at + f.op.size());
    const std::size_t right_at = pos + op_at + f.op.size() + blanks(after);
    const std::string_view right = trim(after);
    if (right.empty()) fail(right_at, "expected a value or Component.field after " + f.op);
    f.value = nlohmann::json::parse(right, nullptr, /*allow_exceptions=*/false);
    if (f.value.is_discarded()) {
        // Not a JSON literal: another field of the same entity, when it has that shape.
        const bool shaped = name_char(right.front(), true) && right.find('.') != std::string_view::npos;
        if (!shaped || !split_field(right, right_at, f.other_component, f.other_field))
            fail(right_at,
                 "expected a number, a \"string\", true, false, null, [] or Component.field after " + f.op +
                     ", got '" + std::string(right.substr(0, 32)) + "'");
        f.value = nullptr;
    }
    if (const auto problem = filter_problem(f)) fail(right_at, *problem);
    return f;
}
}  // namespace

std::optional<std::string> filter_problem(const value_filter& f) {
    static constexpr std::string_view ops[] = {"==", "!=", "<", "<=", ">", ">="};
    if (std::find(std::begin(ops), std::end(ops), f.op) == std::end(ops))
        return "unknown operator '" + f.op + "' (== != < <= > >=)";
    if (f.with_field()) return std::nullopt;  // two fields: any operator; kinds are compared per entity
    if (f.value.is_discarded()) return "a filter compares with a number, a \"string\", true, false or null";
    const bool equality = f.op == "==" || f.op == "!=";
    if ((f.value.is_object() || f.value.is_array()) && !equality)
        return f.op + " compares numbers or text; a list or an object only with == or !=";
    if (!equality && !f.value.is_number() && !f.value.is_string())
        return f.op + " compares numbers or text, not " + f.value.dump();
    return std::nullopt;
}

bool filter_passes(const value_filter& f, const nlohmann::json& field_value) {
    return filter_passes(f, field_value, f.value);
}

bool filter_passes(const value_filter& f, const nlohmann::json& field_value, const nlohmann::json& other) {
    if (f.op == "==") return field_value == other;
    if (f.op == "!=") return field_value != other;
    const bool numbers = field_value.is_number() && other.is_number();
    const bool texts = field_value.is_string() && other.is_string();
    if (!numbers && !texts) return false;  // values of other kinds never order against each other
    if (f.op == "<") return field_value < other;
    if (f.op == "<=") return field_value <= other;
    if (f.op == ">") return field_value > other;
    return field_value >= other;
}

query_terms parse_query(std::string_view text) {
    query_terms q;
    if (trim(text).empty()) fail(0, "empty query (use * for every entity)");
    if (text.size() > 4096) fail(4096, "query text longer than 4096 characters");
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = term_end(text, start);
        const std::string_view raw = text.substr(start, comma - start);
        const std::string_view term = trim(raw);
        const std::size_t at = start + blanks(raw);  // where the term's text begins
        std::string name;
        if (term.empty()) {
            fail(start, "empty term");
        } else if (term.substr(0, 4) == "near" && trim(term.substr(4)).starts_with('(')) {
            const auto rest = trim(term.substr(4));
            if (rest.back() != ')') fail(start, "missing ')' after near");
            if (q.near) fail(start, "only one near() per query");
            q.near = parse_near(rest.substr(1, rest.size() - 2), at);
        } else if (const auto op = operator_at(term); op != std::string_view::npos) {
            auto f = parse_filter(term, op, at);
            if (std::find(q.all.begin(), q.all.end(), f.component) == q.all.end())
                q.all.push_back(f.component);
            if (f.with_field() && std::find(q.all.begin(), q.all.end(), f.other_component) == q.all.end())
                q.all.push_back(f.other_component);
            q.where.push_back(std::move(f));
        } else if (term == "*") {
            q.match_all = true;
        } else if (term == "died") {
            q.died = true;
        } else if (parse_call(term, "added", start, name)) {
            q.added.push_back(name);
        } else if (parse_call(term, "changed", start, name)) {
            q.changed.push_back(name);
        } else if (parse_call(term, "removed", start, name)) {
            q.removed.push_back(name);
        } else if (term.front() == '!') {
            q.none.push_back(parse_name(term.substr(1), at + 1));
        } else if (term.front() == '?') {
            q.optional.push_back(parse_name(term.substr(1), at + 1));
        } else if (term.find('|') != std::string_view::npos) {
            std::vector<std::string> group;
            std::size_t s = 0;
            while (s <= term.size()) {
                std::size_t bar = term.find('|', s);
                if (bar == std::string_view::npos) bar = term.size();
                group.push_back(parse_name(term.substr(s, bar - s), at + s));
                s = bar + 1;
            }
            q.any.push_back(std::move(group));
        } else {
            q.all.push_back(parse_name(term, at));
        }
        start = comma + 1;
    }
    return q;
}

// --- matching: a resolved query against a registry ------------------------------------------
// Three concerns, one function each: entities that may be gone (died / removed), the change
// filters of live entities (added / changed), and the walk that picks which slots to test.

namespace {

using id_set = std::unordered_set<entity_id>;

/// @brief Both generations of a per-tick record (the tick that ended last, and this one).
id_set both(const id_list (&lists)[2]) {
    id_set s(lists[0].begin(), lists[0].end());
    s.insert(lists[1].begin(), lists[1].end());
    return s;
}

/// @brief `died` and `removed(C)`: candidates come from the records, and may be dead.
void each_dead_match(const registry& r, const query& q, const std::function<void(entity_id)>& f) {
    std::vector<entity_id> candidates;
    if (q.died) {
        candidates = r.died();
    } else {
        for (auto c : q.removed)
            for (const auto& list : r.storage(c).removed)
                candidates.insert(candidates.end(), list.begin(), list.end());
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    std::vector<id_set> removed;
    for (auto c : q.removed) removed.push_back(both(r.storage(c).removed));
    for (auto e : candidates) {
        const bool in_every =
            std::all_of(removed.begin(), removed.end(), [e](const id_set& s) { return s.count(e); });
        const bool live = r.alive(e);
        if (!in_every || (q.died && live)) continue;
        if (live ? r.matches(index_of(e), q) : q.all.empty()) f(e);
    }
}

/// @brief `added(C)` and `changed(C)` for a live slot. A pool with write stamps answers
/// `changed` from its stamps; one without counts an addition as the only change it can see. A
/// live entity that lost C has had it changed too (the end of its last contact, for Contacts).
class change_filter {
  public:
    change_filter(const registry& r, const query& q) : r_(r), q_(q) {
        for (auto c : q.added) added_.push_back(both(r.storage(c).added));
        for (auto c : q.changed) {
            if (!r.storage(c).tracks_writes()) added_.push_back(both(r.storage(c).added));
            lost_.push_back(both(r.storage(c).removed));
        }
    }

    [[nodiscard]] bool passes(std::uint32_t slot) const {
        const entity_id e = r_.entities().id_of(slot);
        std::size_t k = 0;
        for (auto c : q_.added)
            if (!r_.storage(c).contains(slot) || !added_[k++].count(e)) return false;
        std::size_t m = 0;
        for (auto c : q_.changed) {
            const pool& p = r_.storage(c);
            const auto& lost = lost_[m++];
            if (!p.contains(slot)) {
                if (!lost.count(e)) return false;
                if (!p.tracks_writes()) ++k;
                continue;
            }
            const bool changed = p.tracks_writes() ? p.written_since(p.index(slot), r_.change_floor())
                                                   : added_[k++].count(e) > 0;
            if (!changed && !lost.count(e)) return false;  // lost and added again: changed
        }
        return true;
    }

  private:
    const registry& r_;
    const query& q_;
    std::vector<id_set> added_;
    std::vector<id_set> lost_;
};

}  // namespace

query registry::resolve(const query_terms& t) const {
    query q;
    for (const auto& n : t.all) {
        const auto c = component_by_name(n);
        q.all.set(c);
        q.all_ids.push_back(c);
    }
    for (const auto& n : t.none) q.none.set(component_by_name(n));
    for (const auto& n : t.optional) (void)component_by_name(n);  // filters nothing, but must exist
    for (const auto& group : t.any) {
        component_mask m;
        for (const auto& n : group) m.set(component_by_name(n));
        q.any.push_back(std::move(m));
    }
    for (const auto& n : t.added) q.added.push_back(component_by_name(n));
    for (const auto& n : t.changed) q.changed.push_back(component_by_name(n));
    for (const auto& n : t.removed) q.removed.push_back(component_by_name(n));
    q.died = t.died;
    return q;
}

bool registry::matches(std::uint32_t slot, const query& q) const noexcept {
    static const component_mask empty;
    if (!entities_.matches(slot, q.all, empty, q.none)) return false;
    for (const auto& g : q.any)
        if (!entities_.matches(slot, empty, g, empty)) return false;
    return true;
}

void registry::for_each_match(const query& q, const std::function<void(entity_id)>& f) const {
    if (q.died || !q.removed.empty()) {
        each_dead_match(*this, q, f);
        return;
    }
    const change_filter changes(*this, q);
    const auto visit = [&](std::uint32_t slot) {
        if (matches(slot, q) && changes.passes(slot)) f(entities_.id_of(slot));
    };
    // Walk the smallest pool the query requires when it is much smaller than the entity table.
    const pool* lead = nullptr;
    for (const auto* ids : {&q.all_ids, &q.added})
        for (auto c : *ids)
            if (!lead || pools_[c]->size() < lead->size()) lead = pools_[c].get();
    if (lead && lead->size() * 8 < entities_.slot_count()) {
        std::vector<std::uint32_t> slots(lead->slots(), lead->slots() + lead->size());
        std::sort(slots.begin(), slots.end());  // ascending ids, as the full walk gives them
        for (auto slot : slots) visit(slot);
        return;
    }
    for (std::uint32_t slot = 0; slot < entities_.slot_count(); ++slot)
        if (entities_.slot_alive(slot)) visit(slot);
}

registry::entity_changes registry::changes_of(entity_id e) const {
    entity_changes out;
    const auto listed = [e](const id_list(&lists)[2]) {
        return std::find(lists[0].begin(), lists[0].end(), e) != lists[0].end() ||
               std::find(lists[1].begin(), lists[1].end(), e) != lists[1].end();
    };
    const bool live = alive(e);
    const auto slot = index_of(e);
    for (component_id c = 0; c < pools_.size(); ++c) {
        const pool& p = *pools_[c];
        if (listed(p.removed)) out.removed.push_back(c);
        if (!live || !p.contains(slot)) continue;
        const bool added = listed(p.added);
        if (added) out.added.push_back(c);
        if (p.tracks_writes() ? p.written_since(p.index(slot), change_floor()) : added)
            out.changed.push_back(c);
    }
    return out;
}

}  // namespace ecsd::ecs
