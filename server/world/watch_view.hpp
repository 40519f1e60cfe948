#pragma once
// What world.watch follows: a query, the fields it carries, and the state its subscribers were
// last told about. diff() compares the world with that state and says what entered, changed and
// left, as JSON text written once for every subscriber of the view. Values stamped as written
// since the last diff (and every value of an untracked storage) are encoded and compared by
// hash; the rest are skipped without being read. No networking here: the server's watch hub
// owns views and hands the text to connections.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ecs/query.hpp"
#include "world/world.hpp"

namespace ecsd::world {

/// @brief One entity's part of a diff, as views of JSON text (a diff's body, or text its reader owns).
struct watch_entry {
    enum class kind : std::uint8_t { entered, changed, left };
    entity_id entity = 0;
    kind what = kind::changed;
    bool died = false;  ///< left: destroyed (else it no longer matches)
    /// entered: every field the entity has; changed: those whose value changed. {name, value}, both
    /// as JSON text: the name quoted, as it appears in the notification.
    std::vector<std::pair<std::string_view, std::string_view>> components;
    std::vector<std::string_view> removed;  ///< changed: fields the entity no longer has (quoted)
};

/// @brief One component of an entity's part of a diff: its quoted name is body[name, name_end),
/// its value body[name_end + 1, value_end) (after the colon). A removed field has value_end 0.
struct watch_part {
    std::uint32_t name = 0;
    std::uint32_t name_end = 0;
    std::uint32_t value_end = 0;
};

/// @brief Where one entity's part of a diff lies in the diff's text.
struct watch_ref {
    entity_id entity = 0;
    watch_entry::kind what = watch_entry::kind::changed;
    bool died = false;
    /// entered, in a diff folded from several: the client may hold the entity already (it left
    /// and came back meanwhile), so a later leave must still be sent.
    bool replaces = false;
    std::uint32_t begin = 0;  ///< its JSON object is body[begin, end)
    std::uint32_t end = 0;
    std::uint32_t parts = 0;  ///< its components are watch_diff::parts[parts, parts + count)
    std::uint32_t count = 0;
};

/// @brief What changed in a view since its previous diff, shared by all its subscribers and
/// never copied: subscribers that fall behind keep the diffs they were not sent, and merge them
/// when they catch up (reading the parts, not parsing the text).
struct watch_diff {
    std::uint64_t tick = 0;
    std::uint64_t merged = 1;  ///< diffs it stands for (more than 1: folded for a slow subscriber)
    /// `"tick":T,"entered":[...],"changed":[...],"left":[...]`: the notification's params
    /// without the subscription (each subscriber adds its own).
    std::string body;
    std::vector<watch_ref> refs;    ///< entered, then changed, then left, each in id order
    std::vector<watch_part> parts;  ///< the refs' components, in ref order
    /// @brief One entity's part, as views of the body (valid while the diff lives).
    void expand(const watch_ref& r, watch_entry& out) const;
    [[nodiscard]] std::size_t bytes() const noexcept {
        return sizeof(*this) + body.capacity() + refs.capacity() * sizeof(watch_ref) +
               parts.capacity() * sizeof(watch_part);
    }
};

/// @brief Writes one entry as the notification lists carry it.
void write_entry(const watch_entry& e, std::string& out);

/// @brief A watched query with its fields and the state last published.
class watch_view {
  public:
    /// @brief Parses and resolves; throws ecs_error (invalid_params, no_such_component) on bad input.
    /// Without fields, the view carries the components the query names (every component for `*`
    /// or a query that names none).
    watch_view(const world& w, const json& query, const std::optional<std::vector<std::string>>& fields,
               std::uint64_t every);
    /// @brief One entity's components (BRP's +watch methods): their values, or with
    /// `presence_only` just which ones it has (every value is written as "").
    watch_view(const world& w, entity_id only, const std::optional<std::vector<std::string>>& fields,
               bool presence_only);

    /// @brief Same query, fields and pace: views with equal keys may share their subscribers.
    [[nodiscard]] const std::string& key() const noexcept { return key_; }
    [[nodiscard]] std::uint64_t every() const noexcept { return every_; }
    /// @brief The radius of its near() term, when it has one.
    [[nodiscard]] std::optional<double> near_radius() const noexcept {
        return terms_.near ? std::optional<double>(terms_.near->r) : std::nullopt;
    }

    /// @brief Makes the current state the base and writes it as `[{"entity":E,"components":{...}}]`.
    void rebase(const world& w, std::string& out);
    /// @brief Changes since the base (which becomes the current state); null when nothing changed.
    [[nodiscard]] std::shared_ptr<const watch_diff> diff(const world& w);
    /// @brief Entities in the base.
    [[nodiscard]] std::size_t size() const noexcept { return base_.size(); }

  private:
    struct field_hash {
        ecs::component_id c;
        std::uint64_t hash;
    };
    /// The state last published: each entity's field hashes, the entities in slot order. A diff
    /// walks its matches in slot order too, so the two are merged like sorted lists: the old state
    /// is read front to back, and whatever the merge passes over has left (a thousand near() views
    /// of a hundred entities each, each diffed every few ticks with its state long out of cache: a
    /// hash table cost a miss per probe, a clearing and a scan of its empty slots per diff).
    struct base_list {
        struct entry {
            entity_id e = 0;          // in ascending ecs::index_of(e)
            std::uint32_t first = 0;  // its hashes are fields[first, the next entry's first)
        };
        std::vector<entry> entries;
        std::vector<field_hash> fields;
        void clear() noexcept {
            entries.clear();
            fields.clear();
        }
        [[nodiscard]] std::size_t size() const noexcept { return entries.size(); }
        /// @brief Entry i's hashes.
        [[nodiscard]] std::pair<const field_hash*, const field_hash*> hashes(std::size_t i) const noexcept {
            const auto end = i + 1 < entries.size() ? entries[i + 1].first : fields.size();
            return {fields.data() + entries[i].first, fields.data() + end};
        }
    };
    using row = std::pair<std::string, ecs::component_id>;

    void refresh_rows(const ecs::registry& reg);
    void rows_for(const world& w, entity_id e, std::vector<const row*>& out) const;
    /// Appends e's value of c as JSON text ("true" in a view of names only).
    void encode(const ecs::registry& reg, entity_id e, ecs::component_id c, std::string& out) const;
    static void open_entry(std::string& out, entity_id e);
    void make_key(const std::string& what);

    ecs::query_terms terms_;
    ecs::query resolved_;
    std::optional<std::vector<row>> fields_;  // empty optional: every component of each entity
    std::uint64_t every_ = 1;
    bool presence_only_ = false;
    std::string key_;
    base_list base_;
    base_list next_;             // the list a diff fills (its buffers kept between diffs)
    std::uint32_t floor_ = 0;    // registry epoch at the last diff: older stamps are already published
    std::vector<row> all_rows_;  // name/id of every component type, for views without fields
};

}  // namespace ecsd::world
