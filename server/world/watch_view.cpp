#include "world/watch_view.hpp"

#include <algorithm>
#include <functional>

#include "ecs/json_text.hpp"

namespace ecsd::world {
namespace {

std::uint64_t hash_text(std::string_view s) noexcept {
    return std::hash<std::string_view>{}(s);
}

void append_quoted(std::string& out, std::string_view name) {
    std::string text;
    ecs::json_text w(text);
    w.string(name);
    out += text;
}

}  // namespace

watch_entry watch_diff::expand(const watch_ref& r) const {
    watch_entry e{r.entity, r.what, r.died, {}, {}};
    if (r.what == watch_entry::kind::left) return e;
    const auto j = json::parse(std::string_view(body).substr(r.begin, r.end - r.begin));
    for (const auto& [name, value] : j.at("components").items())
        e.components.emplace_back(name, value.dump());
    if (const auto it = j.find("removed"); it != j.end())
        for (const auto& n : *it) e.removed.push_back(n.get<std::string>());
    return e;
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
        append_quoted(out, name);
        out += ':';
        out += value;
    }
    out += '}';
    if (!e.removed.empty()) {
        out += R"(,"removed":[)";
        for (std::size_t i = 0; i < e.removed.size(); ++i) {
            if (i > 0) out += ',';
            append_quoted(out, e.removed[i]);
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
            rows.emplace_back(reg.storage(c).name(), c);
        }
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        fields_ = std::move(rows);
    }
    make_key(query.dump());
}

void watch_view::encode(const ecs::registry& reg, entity_id e, ecs::component_id c, std::string& out) const {
    out.clear();
    if (presence_only_) {  // which components, not their values: every value reads the same
        out = "true";
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
        all_rows_.emplace_back(reg.storage(c).name(), c);
    std::sort(all_rows_.begin(), all_rows_.end());
}

void watch_view::rows_for(const world& w, entity_id e, std::vector<const row*>& out) const {
    const auto& reg = w.registry();
    out.clear();
    const auto& rows = fields_ ? *fields_ : all_rows_;
    for (const auto& r : rows)
        if (reg.has(e, r.second)) out.push_back(&r);
}

void watch_view::rebase(const world& w, std::string& out) {
    const auto& reg = w.registry();
    refresh_rows(reg);
    base_.clear();
    ++round_;
    std::vector<const row*> rows;
    std::string scratch;
    out += '[';
    bool first = true;
    w.for_each_match(terms_, resolved_, [&](entity_id e) {
        if (!reg.alive(e)) return;  // `died` and `removed` name dead entities: a watch shows the living
        auto& st = base_[e];
        st.round = round_;
        rows_for(w, e, rows);
        watch_entry en{e, watch_entry::kind::entered, false, {}, {}};
        for (const auto* r : rows) {
            encode(reg, e, r->second, scratch);
            st.fields.push_back({r->second, hash_text(scratch)});
            en.components.emplace_back(r->first, scratch);
        }
        if (!first) out += ',';
        first = false;
        write_entry(en, out);
    });
    out += ']';
    floor_ = reg.epoch();
}

void watch_view::open_entry(std::string& out, entity_id e) {
    out += R"({"entity":)";
    out += std::to_string(e);
    out += R"(,"components":{)";
}

std::shared_ptr<const watch_diff> watch_view::diff(const world& w) {
    // One pass writes the text every subscriber gets; each entity's part is remembered as a byte
    // range, not as strings of its own (a 100k-entity diff would otherwise allocate twice per entity).
    const auto& reg = w.registry();
    refresh_rows(reg);
    ++round_;
    std::string entered;
    std::string changed;
    std::vector<watch_ref> entered_refs;
    std::vector<watch_ref> changed_refs;
    std::vector<const row*> rows;
    std::vector<field_hash> next;
    std::string scratch;
    const auto add_component = [](std::string& out, bool& first, const row& r, const std::string& value) {
        if (!first) out += ',';
        first = false;
        append_quoted(out, r.first);
        out += ':';
        out += value;
    };
    w.for_each_match(terms_, resolved_, [&](entity_id e) {
        if (!reg.alive(e)) return;
        auto [it, fresh] = base_.try_emplace(e);
        auto& st = it->second;
        st.round = round_;
        rows_for(w, e, rows);
        if (fresh) {
            if (!entered.empty()) entered += ',';
            const auto begin = entered.size();
            open_entry(entered, e);
            bool first = true;
            for (const auto* r : rows) {
                encode(reg, e, r->second, scratch);
                st.fields.push_back({r->second, hash_text(scratch)});
                add_component(entered, first, *r, scratch);
            }
            entered += "}}";
            entered_refs.push_back({e, watch_entry::kind::entered, false, static_cast<std::uint32_t>(begin),
                                    static_cast<std::uint32_t>(entered.size())});
            return;
        }
        const auto mark = changed.size();
        if (!changed.empty()) changed += ',';
        const auto begin = changed.size();
        open_entry(changed, e);
        bool first = true;
        next.clear();
        const auto slot = ecs::index_of(e);
        for (const auto* r : rows) {
            const auto c = r->second;
            const auto old = std::find_if(st.fields.begin(), st.fields.end(),
                                          [&](const field_hash& f) { return f.c == c; });
            const ecs::pool& p = reg.storage(c);
            // Not written since the last diff: the subscribers already have this value.
            if (old != st.fields.end() && p.tracks_writes() && p.stamp_at(p.index(slot)) < floor_) {
                next.push_back(*old);
                continue;
            }
            encode(reg, e, c, scratch);
            const auto h = hash_text(scratch);
            if (old == st.fields.end() || old->hash != h) add_component(changed, first, *r, scratch);
            next.push_back({c, h});
        }
        changed += '}';
        bool removed = false;
        for (const auto& f : st.fields) {
            if (std::any_of(next.begin(), next.end(), [&](const field_hash& n) { return n.c == f.c; }))
                continue;
            changed += removed ? "," : R"(,"removed":[)";
            removed = true;
            append_quoted(changed, reg.storage(f.c).name());
        }
        if (removed) changed += ']';
        changed += '}';
        st.fields.swap(next);
        if (first && !removed) {
            changed.resize(mark);  // nothing of it changed
            return;
        }
        changed_refs.push_back({e, watch_entry::kind::changed, false, static_cast<std::uint32_t>(begin),
                                static_cast<std::uint32_t>(changed.size())});
    });
    std::vector<watch_ref> gone;
    for (auto it = base_.begin(); it != base_.end();) {
        if (it->second.round != round_) {
            gone.push_back({it->first, watch_entry::kind::left, !reg.alive(it->first), 0, 0});
            it = base_.erase(it);
        } else {
            ++it;
        }
    }
    floor_ = reg.epoch();
    if (entered_refs.empty() && changed_refs.empty() && gone.empty()) return nullptr;
    std::sort(gone.begin(), gone.end(),
              [](const watch_ref& a, const watch_ref& b) { return a.entity < b.entity; });

    auto d = std::make_shared<watch_diff>();
    d->tick = w.tick();
    std::string& out = d->body;
    out.reserve(entered.size() + changed.size() + gone.size() * 40 + 64);
    out += R"("tick":)";
    out += std::to_string(d->tick);
    out += R"(,"entered":[)";
    const auto shift = [&](std::vector<watch_ref>& refs, std::size_t by) {
        for (auto& r : refs) {
            r.begin += static_cast<std::uint32_t>(by);
            r.end += static_cast<std::uint32_t>(by);
            d->refs.push_back(r);
        }
    };
    d->refs.reserve(entered_refs.size() + changed_refs.size() + gone.size());
    shift(entered_refs, out.size());
    out += entered;
    out += R"(],"changed":[)";
    shift(changed_refs, out.size());
    out += changed;
    out += R"(],"left":[)";
    for (std::size_t i = 0; i < gone.size(); ++i) {
        if (i > 0) out += ',';
        auto& g = gone[i];
        g.begin = static_cast<std::uint32_t>(out.size());
        write_entry(watch_entry{g.entity, g.what, g.died, {}, {}}, out);
        g.end = static_cast<std::uint32_t>(out.size());
        d->refs.push_back(g);
    }
    out += ']';
    return d;
}

}  // namespace ecsd::world
