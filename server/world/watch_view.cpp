#include "world/watch_view.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>

#include "ecs/json_text.hpp"
#include "world/scratch.hpp"

namespace ecsd::world {
namespace {

// A value's text, hashed to tell whether it changed since the last diff: a few words each (a
// Position is about 40 bytes), so eight bytes at a time and inline, not std::hash's out-of-line
// murmur. Only compared within this process.
std::uint64_t hash_text(std::string_view s) noexcept {
    constexpr std::uint64_t k = 0x9E3779B97F4A7C15ULL;
    std::uint64_t h = s.size() * k;
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t word;
        std::memcpy(&word, s.data() + i, 8);
        h = (h ^ word) * k;
        h ^= h >> 29;
    }
    if (i < s.size()) {
        std::uint64_t word = 0;
        std::memcpy(&word, s.data() + i, s.size() - i);
        h = (h ^ word) * k;
        h ^= h >> 29;
    }
    return h * k ^ (h >> 32);
}

std::string json_quoted(std::string_view name) {
    std::string text;
    ecs::json_text w(text);
    w.string(name);
    w.flush();
    return text;
}

}  // namespace

void watch_diff::expand(const watch_ref& r, watch_entry& out) const {
    out.entity = r.entity;
    out.what = r.what;
    out.died = r.died;
    out.components.clear();
    out.removed.clear();
    const std::string_view text(body);
    for (std::uint32_t i = r.parts; i < r.parts + r.count; ++i) {
        const auto& p = parts[i];
        const auto name = text.substr(p.name, p.name_end - p.name);
        if (p.value_end == 0)
            out.removed.push_back(name);
        else
            out.components.emplace_back(name, text.substr(p.name_end + 1, p.value_end - p.name_end - 1));
    }
}

void write_entry(const watch_entry& e, std::string& out) {
    out += R"({"entity":)";
    out += std::to_string(e.entity);
    if (e.what == watch_entry::kind::left) {
        out += e.died ? R"(,"reason":"died"})" : R"(,"reason":"unmatched"})";
        return;
    }
    out += R"(,"components":{)";
    bool first = true;
    for (const auto& [name, value] : e.components) {
        if (!first) out += ',';
        first = false;
        out += name;
        out += ':';
        out += value;
    }
    out += '}';
    if (!e.removed.empty()) {
        out += R"(,"removed":[)";
        for (std::size_t i = 0; i < e.removed.size(); ++i) {
            if (i > 0) out += ',';
            out += e.removed[i];
        }
        out += ']';
    }
    out += '}';
}

watch_view::watch_view(const world& w, const json& query,
                       const std::optional<std::vector<std::string>>& fields, std::uint64_t every)
    : terms_(w.parse_terms(query)), resolved_(w.registry().resolve(terms_)), every_(every == 0 ? 1 : every) {
    const auto& reg = w.registry();
    std::vector<std::string> names;
    if (fields) {
        names = *fields;
    } else if (!terms_.match_all) {
        names = terms_.all;
        for (const auto& g : terms_.any) names.insert(names.end(), g.begin(), g.end());
        names.insert(names.end(), terms_.optional.begin(), terms_.optional.end());
        names.insert(names.end(), terms_.added.begin(), terms_.added.end());
        names.insert(names.end(), terms_.changed.begin(), terms_.changed.end());
    }
    if (fields || !names.empty()) {
        std::vector<row> rows;
        for (const auto& n : names) {
            const auto c = reg.component_by_name(n);
            rows.emplace_back(json_quoted(reg.storage(c).name()), c);
        }
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        fields_ = std::move(rows);
    }
    make_key(query.dump());
}

void watch_view::encode(const ecs::registry& reg, entity_id e, ecs::component_id c, std::string& out) const {
    if (presence_only_) {  // which components, not their values: every value reads the same
        out += "true";
        return;
    }
    ecs::json_text w(out);
    reg.storage(c).write_value(ecs::index_of(e), w);
}

void watch_view::make_key(const std::string& what) {
    key_ = what;
    key_ += '|';
    if (fields_) {
        for (const auto& [name, c] : *fields_) {
            key_ += name;
            key_ += ',';
        }
    } else {
        key_ += '*';
    }
    key_ += '|';
    key_ += std::to_string(every_);
    if (presence_only_) key_ += "|names";
}

watch_view::watch_view(const world& w, entity_id only, const std::optional<std::vector<std::string>>& fields,
                       bool presence_only)
    : watch_view(w, json("*"), fields, 1) {
    presence_only_ = presence_only;
    terms_.only = only;
    make_key("entity:" + std::to_string(only));
}

void watch_view::refresh_rows(const ecs::registry& reg) {
    // A view without fields carries every component: its row list follows new component types.
    if (fields_ || all_rows_.size() == reg.component_count()) return;
    all_rows_.clear();
    for (ecs::component_id c = 0; c < reg.component_count(); ++c)
        all_rows_.emplace_back(json_quoted(reg.storage(c).name()), c);
    std::sort(all_rows_.begin(), all_rows_.end());
}

void watch_view::rows_for(const world& w, entity_id e, std::vector<const row*>& out) const {
    const auto& reg = w.registry();
    out.clear();
    const auto& rows = fields_ ? *fields_ : all_rows_;
    for (const auto& r : rows)
        if (reg.has(e, r.second)) out.push_back(&r);
}

namespace {

// A view's matches in slot order, the order its state is kept in.
void sort_by_slot(std::vector<entity_id>& ids) {
    const auto by_slot = [](entity_id a, entity_id b) { return ecs::index_of(a) < ecs::index_of(b); };
    if (!std::is_sorted(ids.begin(), ids.end(), by_slot)) std::sort(ids.begin(), ids.end(), by_slot);
}

}  // namespace

void watch_view::rebase(const world& w, std::string& out) {
    const auto& reg = w.registry();
    refresh_rows(reg);
    base_.clear();
    std::vector<entity_id> found;
    w.for_each_match(terms_, resolved_, [&](entity_id e) {
        if (reg.alive(e))
            found.push_back(e);  // `died` and `removed` name dead entities: a watch shows the living
    });
    sort_by_slot(found);
    std::vector<const row*> rows;
    std::string scratch;
    out += '[';
    bool first = true;
    for (const auto e : found) {
        base_.entries.push_back({e, static_cast<std::uint32_t>(base_.fields.size())});
        rows_for(w, e, rows);
        if (!first) out += ',';
        first = false;
        open_entry(out, e);
        bool first_field = true;
        for (const auto* r : rows) {
            scratch.clear();
            encode(reg, e, r->second, scratch);
            base_.fields.push_back({r->second, hash_text(scratch)});
            if (!first_field) out += ',';
            first_field = false;
            out += r->first;
            out += ':';
            out += scratch;
        }
        out += "}}";
    }
    out += ']';
    floor_ = reg.epoch();
}

void watch_view::open_entry(std::string& out, entity_id e) {
    out += R"({"entity":)";
    out += std::to_string(e);
    out += R"(,"components":{)";
}

namespace {

// One of a diff's lists (entered or changed) while it is written: its text, and its entries' and
// components' positions in that text (shifted when the lists are joined into the body).
struct diff_list {
    std::string text;
    std::vector<watch_ref> refs;
    std::vector<watch_part> parts;
    std::uint32_t name_at = 0;  // the component being written: its name's place in the text
    std::uint32_t name_end_at = 0;

    void clear() {
        empty_scratch(text);
        empty_scratch(refs);
        empty_scratch(parts);
    }

    void open(entity_id e) {
        if (!text.empty()) text += ',';
        refs.push_back({e, watch_entry::kind::changed, false, false, static_cast<std::uint32_t>(text.size()),
                        0, static_cast<std::uint32_t>(parts.size()), 0});
        // One append: `{"entity":E,"components":{`.
        constexpr std::string_view head = R"({"entity":)";
        constexpr std::string_view tail = R"(,"components":{)";
        char piece[head.size() + 24 + tail.size()];
        std::memcpy(piece, head.data(), head.size());
        char* at = ecs::write_decimal(piece + head.size(), e);
        std::memcpy(at, tail.data(), tail.size());
        text.append(piece, static_cast<std::size_t>(at + tail.size() - piece));
    }
    // A component's name and colon; its value is then written onto the text, and component_end()
    // keeps it, or the text is cut back to the returned mark (the value did not change).
    std::size_t component_begin(std::string_view quoted_name) {
        const auto mark = text.size();
        if (text.back() != '{') text += ',';
        name_at = static_cast<std::uint32_t>(text.size());
        text += quoted_name;
        name_end_at = static_cast<std::uint32_t>(text.size());
        text += ':';
        return mark;
    }
    void component_end() { parts.push_back({name_at, name_end_at, static_cast<std::uint32_t>(text.size())}); }
    [[nodiscard]] std::string_view value_since_name() const noexcept {
        return std::string_view(text).substr(name_end_at + 1);
    }
    void removed(std::string_view quoted_name, bool first) {
        text += first ? R"(,"removed":[)" : ",";
        const auto name = static_cast<std::uint32_t>(text.size());
        text += quoted_name;
        parts.push_back({name, static_cast<std::uint32_t>(text.size()), 0});
    }
    // Ends the open entry; `keep` false takes it back out (nothing of it changed).
    void close(watch_entry::kind what, bool keep, std::size_t mark) {
        auto& r = refs.back();
        if (!keep) {
            text.resize(mark);
            parts.resize(r.parts);
            refs.pop_back();
            return;
        }
        r.what = what;
        r.end = static_cast<std::uint32_t>(text.size());
        r.count = static_cast<std::uint32_t>(parts.size()) - r.parts;
    }
    // Appends the list's text to `body` and its refs and parts to the diff's, shifted.
    void join(watch_diff& d) const {
        const auto by = static_cast<std::uint32_t>(d.body.size());
        const auto first_part = static_cast<std::uint32_t>(d.parts.size());
        d.body += text;
        for (auto r : refs) {
            r.begin += by;
            r.end += by;
            r.parts += first_part;
            d.refs.push_back(r);
        }
        for (auto p : parts) {
            p.name += by;
            p.name_end += by;
            if (p.value_end != 0) p.value_end += by;
            d.parts.push_back(p);
        }
    }
};

}  // namespace

std::shared_ptr<const watch_diff> watch_view::diff(const world& w) {
    // One pass writes the text every subscriber gets; each entity's part is remembered as byte
    // ranges, not as strings of its own (a 100k-entity diff would otherwise allocate per entity).
    const auto& reg = w.registry();
    refresh_rows(reg);
    next_.clear();
    next_.entries.reserve(base_.size() + base_.size() / 4);
    // The thread's scratch (world/scratch.hpp).
    thread_local diff_list entered;
    thread_local diff_list changed;
    thread_local std::vector<const row*> rows;
    thread_local std::vector<entity_id> found;
    entered.clear();
    changed.clear();
    empty_scratch(found);
    std::vector<watch_ref> gone;
    const auto leave = [&](const base_list::entry& old) {
        gone.push_back({old.e, watch_entry::kind::left, !reg.alive(old.e), false, 0, 0, 0, 0});
    };
    auto& hashes = next_.fields;
    std::size_t at = 0;  // the merge's place in the old state: what lies before it was matched or has left
    const auto one = [&](entity_id e) {
        if (!reg.alive(e)) return;
        const auto slot = ecs::index_of(e);
        while (at < base_.size() && ecs::index_of(base_.entries[at].e) < slot) leave(base_.entries[at++]);
        std::pair<const field_hash*, const field_hash*> old_hashes{nullptr, nullptr};
        if (at < base_.size() && ecs::index_of(base_.entries[at].e) == slot) {
            if (base_.entries[at].e == e)
                old_hashes = base_.hashes(at);
            else
                leave(base_.entries[at]);  // the slot's last entity died: this is another
            ++at;
        }
        const auto first_hash = static_cast<std::uint32_t>(hashes.size());
        next_.entries.push_back({e, first_hash});
        rows_for(w, e, rows);
        if (old_hashes.first == nullptr) {
            const auto mark = entered.text.size();
            entered.open(e);
            for (const auto* r : rows) {
                (void)entered.component_begin(r->first);
                encode(reg, e, r->second, entered.text);
                hashes.push_back({r->second, hash_text(entered.value_since_name())});
                entered.component_end();
            }
            entered.text += "}}";
            entered.close(watch_entry::kind::entered, true, mark);
            return;
        }
        const auto [old_begin, old_end] = old_hashes;
        const auto mark = changed.text.size();
        changed.open(e);
        bool any = false;
        for (const auto* r : rows) {
            const auto c = r->second;
            const auto old = std::find_if(old_begin, old_end, [&](const field_hash& f) { return f.c == c; });
            const ecs::pool& p = reg.storage(c);
            // Not written since the last diff: the subscribers already have this value.
            if (old != old_end && p.tracks_writes() && !p.written_since(p.index(slot), floor_)) {
                hashes.push_back(*old);
                continue;
            }
            const auto back_to = changed.component_begin(r->first);
            encode(reg, e, c, changed.text);
            const auto h = hash_text(changed.value_since_name());
            if (old == old_end || old->hash != h) {
                changed.component_end();
                any = true;
            } else {
                changed.text.resize(back_to);  // the same value: the subscribers have it
            }
            hashes.push_back({c, h});
        }
        changed.text += '}';
        bool removed = false;
        const auto now_begin = hashes.begin() + first_hash;
        for (auto f = old_begin; f != old_end; ++f) {
            if (std::any_of(now_begin, hashes.end(), [&](const field_hash& n) { return n.c == f->c; }))
                continue;
            changed.removed(json_quoted(reg.storage(f->c).name()), !removed);
            removed = true;
        }
        if (removed) changed.text += ']';
        changed.text += '}';
        changed.close(watch_entry::kind::changed, any || removed, mark);
    };
    // The matches first, in slot order (the old state's), then each in turn with the cache asked
    // ahead for what it will read: a near() view's entities lie scattered over the pools, and
    // waiting on their misses one after another was most of a diff's time (tick_bench
    // near_views_100k). Two steps ahead: the slot's words first, then what they point at (a
    // required component's stamp and value).
    // The old state is read front to back, but only every few ticks: asked of the cache whole
    // now, it arrives while the matches are found (a near() view's is a few kilobytes).
    const auto ask_ahead = [](const auto& v) {
        const auto* bytes = reinterpret_cast<const char*>(v.data());
        const std::size_t size = v.size() * sizeof(v[0]);
        if (size <= std::size_t{64} * 1024)
            for (std::size_t off = 0; off < size; off += 64) __builtin_prefetch(bytes + off);
    };
    ask_ahead(base_.entries);
    ask_ahead(base_.fields);
    w.for_each_match(terms_, resolved_, [&](entity_id e) { found.push_back(e); });
    sort_by_slot(found);
    struct hot_pool {
        const ecs::pool* pool;
        const std::byte* values;
        std::size_t stride;
    };
    std::array<hot_pool, 4> hot{};
    std::size_t hots = 0;
    for (const auto c : resolved_.all_ids) {
        if (hots == hot.size()) break;
        const auto& p = reg.storage(c);
        hot[hots++] = {&p, static_cast<const std::byte*>(p.value_array()), p.raw_size()};
    }
    const auto& table = reg.entities();
    // Written out in the loop, not in helpers: GCC drops a call whose only effect is a prefetch.
    const auto n = found.size();
    constexpr std::size_t words_ahead = 8;
    constexpr std::size_t values_ahead = 4;
    for (std::size_t i = 0; i < n + words_ahead; ++i) {
        if (i < n) {  // the slot's words: its signature, its entries in the required pools
            const auto slot = ecs::index_of(found[i]);
            if (const void* a = table.word_address(slot)) __builtin_prefetch(a);
            for (std::size_t h = 0; h < hots; ++h)
                if (const void* a = hot[h].pool->entry_address(slot)) __builtin_prefetch(a);
        }
        if (i >= words_ahead - values_ahead && i - (words_ahead - values_ahead) < n) {
            // what those point at, asked for four entities later: stamps and values
            const auto slot = ecs::index_of(found[i - (words_ahead - values_ahead)]);
            for (std::size_t h = 0; h < hots; ++h) {
                const auto& [pool, values, stride] = hot[h];
                if (!pool->contains(slot)) continue;
                const auto index = pool->index(slot);
                if (const void* a = pool->stamp_address(index)) __builtin_prefetch(a);
                if (values != nullptr && stride > 0) __builtin_prefetch(values + index * stride);
            }
        }
        if (i >= words_ahead) one(found[i - words_ahead]);
    }
    while (at < base_.size()) leave(base_.entries[at++]);
    std::swap(base_, next_);
    floor_ = reg.epoch();
    if (entered.refs.empty() && changed.refs.empty() && gone.empty()) return nullptr;
    std::sort(gone.begin(), gone.end(),
              [](const watch_ref& a, const watch_ref& b) { return a.entity < b.entity; });

    auto d = std::make_shared<watch_diff>();
    d->tick = w.tick();
    std::string& out = d->body;
    out.reserve(entered.text.size() + changed.text.size() + gone.size() * 40 + 64);
    d->refs.reserve(entered.refs.size() + changed.refs.size() + gone.size());
    d->parts.reserve(entered.parts.size() + changed.parts.size());
    out += R"("tick":)";
    out += std::to_string(d->tick);
    out += R"(,"entered":[)";
    entered.join(*d);
    out += R"(],"changed":[)";
    changed.join(*d);
    out += R"(],"left":[)";
    for (std::size_t i = 0; i < gone.size(); ++i) {
        if (i > 0) out += ',';
        auto& g = gone[i];
        g.begin = static_cast<std::uint32_t>(out.size());
        write_entry(watch_entry{g.entity, g.what, g.died, {}, {}}, out);
        g.end = static_cast<std::uint32_t>(out.size());
        g.parts = static_cast<std::uint32_t>(d->parts.size());
        d->refs.push_back(g);
    }
    out += ']';
    return d;
}

}  // namespace ecsd::world
