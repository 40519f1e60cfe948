#pragma once
// Storages: one sparse set per component type, plus the per-tick change
// records (the touched and the removed). Three kinds share one interface, so
// the registry, queries and serialization treat them alike:
//   typed_pool<T>  a C++ struct, packed in a dense array beside the slots
//   tag_pool       no data at all: membership is the value (a tag such as Player)
//   dynamic_pool   a run-time component: validated JSON objects

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ecs/component_traits.hpp"
#include "ecs/dynamic_schema.hpp"
#include "ecs/sparse_set.hpp"

namespace ecsd::ecs {

enum class storage_kind { typed, tag, dynamic };

/// @brief The type-erased face of a component storage.
class pool : public sparse_set {
  public:
    pool(component_id id, std::string name, storage_kind kind)
        : id_(id), name_(std::move(name)), key_(json_piece::key(name_)), kind_(kind) {}

    [[nodiscard]] component_id id() const noexcept { return id_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    /// @brief `"Name":`, the key before this component's value in an object of components.
    [[nodiscard]] const json_piece& key_piece() const noexcept { return key_; }
    [[nodiscard]] storage_kind kind() const noexcept { return kind_; }

    /// @brief Throws invalid_value when `value` is not a valid value of this type.
    virtual void validate(const json& value) const = 0;
    /// @brief Adds the slot with a value parsed from JSON (null means defaults).
    virtual void emplace_json(std::uint32_t slot, const json& value) = 0;
    /// @brief Replaces the value of a slot already present.
    virtual void assign_json(std::uint32_t slot, const json& value) = 0;
    /// @brief Writes one field of a slot already present.
    virtual void set_field_json(std::uint32_t slot, std::string_view field, const json& value) = 0;
    [[nodiscard]] virtual json value_json(std::uint32_t slot) const = 0;
    /// @brief Writes the value as JSON text: the same text as value_json(slot).dump().
    virtual void write_value(std::uint32_t slot, json_text& w) const = 0;
    virtual void hash_value(std::uint32_t slot, state_hasher& h) const = 0;
    /// @brief The field list with types and defaults.
    [[nodiscard]] virtual json schema_fields() const = 0;

    // --- raw values (binary snapshots) ------------------------------------
    /// @brief Bytes per value when values can be saved as they lie in memory (a trivially
    /// copyable struct without padding); 0 when they cannot (tags, strings, run-time components).
    [[nodiscard]] virtual std::size_t raw_size() const noexcept { return 0; }
    /// @brief The dense values, raw_size() bytes each, in dense order (raw_size() > 0 only).
    [[nodiscard]] virtual const std::byte* raw_data() const noexcept { return nullptr; }
    /// @brief Adds the slot with a value copied from raw_size() bytes (raw_size() > 0 only).
    virtual void emplace_raw(std::uint32_t slot, const std::byte* value);

    /// @brief The start of the packed value array, or null (tags, or no values yet).
    [[nodiscard]] virtual const void* value_array() const noexcept { return nullptr; }

    // --- change tracking -------------------------------------------------
    // A write stamp is the low byte of the epoch (the tick count) the value was last written in: one
    // byte a value, not four. Its age is (epoch - stamp) mod 256, true while the value is younger
    // than stamp_horizon ticks. So that the age never wraps, every stamp is looked at least every 64
    // ticks and, when older than the horizon, pinned to an age of exactly stamp_horizon: age_stamps()
    // looks at one block in 64 each tick (by position, so a block comes round every 64 ticks), and a
    // stamp that moves to another position is looked at as it moves. A pinned stamp is at most 191
    // ticks old when it is looked at again. A question about writes since a floor older than the
    // horizon answers "maybe" (true): watches then compare values instead.
    /// @brief Ticks back that a stamp tells apart exactly.
    static constexpr std::uint32_t stamp_horizon = 128;
    using stamp = std::uint8_t;
    /// @brief True when the value at a dense position was written at an epoch >= floor, or when
    /// floor lies past the horizon (data pools with tracking only).
    [[nodiscard]] bool written_since(std::uint32_t pos, std::uint32_t floor) const noexcept {
        const std::uint32_t span = *epoch_ - floor;
        if (span >= stamp_horizon) return true;
        if (pos >= stamps_.size()) return false;
        return static_cast<stamp>(static_cast<stamp>(*epoch_) - stamps_[pos]) <= span;
    }
    /// @brief Where the write stamp of a dense position lies (null without one), to prefetch it
    /// ahead of written_since().
    [[nodiscard]] const void* stamp_address(std::uint32_t pos) const noexcept {
        return pos < stamps_.size() ? stamps_.data() + pos : nullptr;
    }
    /// @brief Marks the value at a dense position as written this tick.
    void mark_written(std::uint32_t pos) noexcept {
        if (pos < stamps_.size()) stamps_[pos] = static_cast<stamp>(*epoch_);
    }
    [[nodiscard]] stamp* stamps() noexcept { return stamps_.data(); }
    [[nodiscard]] const stamp* stamps() const noexcept { return stamps_.data(); }
    /// @brief Write stamps held (0 when the pool does not track writes).
    [[nodiscard]] std::size_t stamp_count() const noexcept { return stamps_.size(); }
    [[nodiscard]] bool tracks_writes() const noexcept { return tracking_; }
    void bind_epoch(const std::uint32_t* epoch) noexcept { epoch_ = epoch; }
    void track_writes(bool on) {
        tracking_ = on && kind_ != storage_kind::tag;
        stamps_.assign(tracking_ ? size() : 0, old_stamp());
    }
    /// @brief Positions per block of age_stamps(), and the ticks a round of blocks takes.
    static constexpr std::size_t stamp_block = 4096;
    static constexpr std::uint32_t stamp_rounds = 64;
    /// @brief Pins the stamps older than the horizon in this tick's blocks (registry::end_tick).
    void age_stamps() noexcept {
        const std::size_t n = stamps_.size();
        const auto now = static_cast<stamp>(*epoch_);
        const auto pinned = old_stamp();
        for (std::size_t start = (*epoch_ % stamp_rounds) * stamp_block; start < n;
             start += stamp_rounds * stamp_block) {
            const std::size_t end = std::min(n, start + stamp_block);
            for (std::size_t i = start; i < end; ++i) stamps_[i] = aged(stamps_[i], now, pinned);
        }
    }
    /// @brief Everything it holds: the set, the write stamps and the change records.
    [[nodiscard]] std::size_t memory_bytes() const noexcept override {
        std::size_t records = 0;
        for (const auto& l : added) records += l.capacity();
        for (const auto& l : removed) records += l.capacity();
        return sparse_set::memory_bytes() + stamps_.capacity() * sizeof(stamp) + records * sizeof(entity_id);
    }
    void release_unused() noexcept override {
        sparse_set::release_unused();
        ecs::release_unused(stamps_);
    }
    void reset_stamps() { std::fill(stamps_.begin(), stamps_.end(), old_stamp()); }
    void compact() override {
        compact_values([](std::uint32_t, std::uint32_t) {});
    }

    /// @brief Entities that gained / lost this component: [0] last tick, [1] this tick.
    id_list added[2];
    id_list removed[2];

    /// @brief Owning group of this pool, or -1.
    int owner_group = -1;
    /// @brief Owning group this pool is nested in (group.hpp), or -1.
    int nested_group = -1;

  protected:
    /// @brief compact() for a pool with values: move(from, to) moves them, stamps move here.
    template <typename Move>
    std::uint32_t compact_values(Move&& move) {
        const bool stamped = tracking_;
        const auto now = static_cast<stamp>(epoch_ == nullptr ? 0 : *epoch_);
        const auto pinned = old_stamp();
        const std::uint32_t n = compact_with([&](std::uint32_t from, std::uint32_t to) {
            move(from, to);
            if (stamped) stamps_[to] = aged(stamps_[from], now, pinned);
        });
        if (stamped) stamps_.resize(n);
        return n;
    }
    void push_stamp() {
        if (tracking_) stamps_.push_back(static_cast<stamp>(*epoch_));
    }
    /// @brief A stamp that reads as written stamp_horizon ticks ago: not within any exact span.
    [[nodiscard]] stamp old_stamp() const noexcept {
        return epoch_ == nullptr ? 0 : static_cast<stamp>(*epoch_ - stamp_horizon);
    }
    /// @brief The stamp, or old_stamp() when it is past the horizon (a stamp looked at, see above).
    static stamp aged(stamp s, stamp now, stamp pinned) noexcept {
        return static_cast<stamp>(now - s) >= stamp_horizon ? pinned : s;
    }
    [[nodiscard]] stamp aged(stamp s) const noexcept {
        return aged(s, static_cast<stamp>(*epoch_), old_stamp());
    }
    void on_swap_and_pop(std::uint32_t pos) override { drop_stamp(pos); }
    void drop_stamp(std::uint32_t pos) noexcept {
        if (tracking_) {
            stamps_[pos] = aged(stamps_.back());
            stamps_.pop_back();
        }
    }
    void on_swap(std::uint32_t a, std::uint32_t b) override {
        if (!tracking_) return;
        const stamp at_a = stamps_[a];
        stamps_[a] = aged(stamps_[b]);
        stamps_[b] = aged(at_a);
    }
    void on_reserve(std::size_t n) override {
        if (tracking_) stamps_.reserve(n);
    }
    void on_clear() override { stamps_.clear(); }

  private:
    component_id id_;
    std::string name_;
    json_piece key_;
    storage_kind kind_;
    bool tracking_ = false;
    const std::uint32_t* epoch_ = nullptr;
    std::vector<stamp, huge_page_allocator<stamp>> stamps_;
};

/// @brief A pool with a packed array of values moved in step with the slots.
template <typename V, typename Alloc>
class packed_pool : public pool {
  public:
    using pool::pool;

    [[nodiscard]] std::size_t memory_bytes() const noexcept override {
        return pool::memory_bytes() + data_.capacity() * sizeof(V);
    }
    [[nodiscard]] const void* value_array() const noexcept override { return data_.data(); }
    void release_unused() noexcept override {
        pool::release_unused();
        if constexpr (std::is_same_v<Alloc, huge_page_allocator<V>>) ecs::release_unused(data_);
    }

  protected:
    /// @brief Appends the slot and its value, stamped as written now.
    V& push(std::uint32_t slot, V value) {
        push_slot(slot);
        push_stamp();
        return data_.emplace_back(std::move(value));
    }

    std::vector<V, Alloc> data_;

    /// @brief The data half of a swap-and-pop at `pos` (erase_slot() did the slots).
    void drop_at(std::uint32_t pos) {
        if (pos + 1 != data_.size()) data_[pos] = std::move(data_.back());
        data_.pop_back();
        this->drop_stamp(pos);
    }

    void compact() override {
        const std::uint32_t n = this->compact_values(
            [this](std::uint32_t from, std::uint32_t to) { data_[to] = std::move(data_[from]); });
        data_.erase(data_.begin() + n, data_.end());
    }

  private:
    void on_swap_and_pop(std::uint32_t pos) override { drop_at(pos); }
    void on_swap(std::uint32_t a, std::uint32_t b) override {
        std::swap(data_[a], data_[b]);
        pool::on_swap(a, b);
    }
    void on_reserve(std::size_t n) override {
        data_.reserve(n);
        pool::on_reserve(n);
    }
    void on_clear() override {
        data_.clear();
        pool::on_clear();
    }
};

namespace internal {
/// @brief The bytes of T's fields together: sizeof(T) when T has no padding.
template <typename T>
constexpr std::size_t field_bytes() {
    return std::apply(
        [](const auto&... d) {
            return (std::size_t{0} + ... + sizeof(typename std::decay_t<decltype(d)>::value_type));
        },
        component_traits<T>::fields);
}
/// @brief T's values can be saved and loaded as bytes: every byte is a field's.
template <typename T>
constexpr bool raw_copyable() {
    if constexpr (is_tag_v<T> || !std::is_trivially_copyable_v<T>)
        return false;
    else
        return field_bytes<T>() == sizeof(T);
}
}  // namespace internal

inline void pool::emplace_raw(std::uint32_t, const std::byte*) {
    throw ecs_error(reason::invalid_value, name() + " values are not stored as raw bytes");
}

/// @brief Storage of a C++ struct component in a packed array.
template <typename T>
class typed_pool final : public packed_pool<T, huge_page_allocator<T>> {
    using base = packed_pool<T, huge_page_allocator<T>>;
    using base::data_;

  public:
    typed_pool(component_id id) : base(id, component_traits<T>::name, storage_kind::typed) {}
    using pool::index;
    using pool::mark_written;

    [[nodiscard]] T* data() noexcept { return data_.data(); }
    [[nodiscard]] T& get(std::uint32_t slot) noexcept { return data_[index(slot)]; }
    [[nodiscard]] const T& get(std::uint32_t slot) const noexcept { return data_[index(slot)]; }
    [[nodiscard]] T& at(std::uint32_t pos) noexcept { return data_[pos]; }
    [[nodiscard]] const T& at(std::uint32_t pos) const noexcept { return data_[pos]; }

    T& emplace(std::uint32_t slot, T value) { return this->push(slot, std::move(value)); }
    /// @brief erase() without the virtual hook, for callers that know the type.
    void erase_here(std::uint32_t slot) { this->drop_at(this->erase_slot(slot)); }

    void validate(const json& value) const override { (void)typed_from_json<T>(value); }
    void emplace_json(std::uint32_t slot, const json& value) override {
        emplace(slot, typed_from_json<T>(value));
    }
    void assign_json(std::uint32_t slot, const json& value) override {
        const auto pos = index(slot);
        data_[pos] = typed_from_json<T>(value);
        mark_written(pos);
    }
    void set_field_json(std::uint32_t slot, std::string_view f, const json& value) override {
        const auto pos = index(slot);
        T copy = data_[pos];  // write only when the whole field validated
        typed_set_field(copy, f, value);
        data_[pos] = std::move(copy);
        mark_written(pos);
    }
    [[nodiscard]] json value_json(std::uint32_t slot) const override { return typed_to_json(get(slot)); }
    void write_value(std::uint32_t slot, json_text& w) const override { typed_write_text(w, get(slot)); }
    void hash_value(std::uint32_t slot, state_hasher& h) const override { typed_hash(h, get(slot)); }
    [[nodiscard]] json schema_fields() const override { return typed_schema_fields<T>(); }

    [[nodiscard]] std::size_t raw_size() const noexcept override {
        return internal::raw_copyable<T>() ? sizeof(T) : 0;
    }
    [[nodiscard]] const std::byte* raw_data() const noexcept override {
        return internal::raw_copyable<T>() ? reinterpret_cast<const std::byte*>(data_.data()) : nullptr;
    }
    void emplace_raw(std::uint32_t slot, const std::byte* value) override {
        if constexpr (internal::raw_copyable<T>()) {
            T v;
            std::memcpy(&v, value, sizeof(T));
            emplace(slot, v);
        } else {
            pool::emplace_raw(slot, value);
        }
    }
};

/// @brief A component without data: only the sparse set, no per-entity bytes.
class tag_pool final : public pool {
  public:
    tag_pool(component_id id, std::string name) : pool(id, std::move(name), storage_kind::tag) {}

    void emplace(std::uint32_t slot) { push_slot(slot); }
    /// @brief erase() without the virtual hook, for callers that know the type.
    void erase_here(std::uint32_t slot) noexcept { drop_stamp(erase_slot(slot)); }

    void validate(const json& value) const override {
        if (!value.is_null() && !(value.is_object() && value.empty()) &&
            !(value.is_boolean() && value.get<bool>()))
            throw ecs_error(reason::invalid_value, name() + " is a tag and holds no fields; send {} or null");
    }
    void emplace_json(std::uint32_t slot, const json& value) override {
        validate(value);
        emplace(slot);
    }
    void assign_json(std::uint32_t, const json& value) override { validate(value); }
    void set_field_json(std::uint32_t, std::string_view f, const json&) override {
        throw ecs_error(reason::invalid_value,
                        name() + " is a tag and has no field '" + std::string(f) + "'");
    }
    [[nodiscard]] json value_json(std::uint32_t) const override { return json::object(); }
    void write_value(std::uint32_t, json_text& w) const override { w.raw("{}"); }
    void hash_value(std::uint32_t, state_hasher&) const override {}
    [[nodiscard]] json schema_fields() const override { return json::array(); }
};

/// @brief Storage of a run-time component: validated JSON objects.
class dynamic_pool final : public packed_pool<json, std::allocator<json>> {
  public:
    dynamic_pool(component_id id, dynamic_schema schema)
        : packed_pool(id, schema.name(), storage_kind::dynamic), schema_(std::move(schema)) {}

    [[nodiscard]] const dynamic_schema& schema() const noexcept { return schema_; }

    void validate(const json& value) const override { (void)schema_.make_value(value); }
    void emplace_json(std::uint32_t slot, const json& value) override {
        push(slot, schema_.make_value(value));
    }
    void assign_json(std::uint32_t slot, const json& value) override {
        const auto pos = index(slot);
        data_[pos] = schema_.make_value(value);
        mark_written(pos);
    }
    void set_field_json(std::uint32_t slot, std::string_view f, const json& value) override {
        const auto pos = index(slot);
        data_[pos] = schema_.with_field(data_[pos], f, value);
        mark_written(pos);
    }
    [[nodiscard]] json value_json(std::uint32_t slot) const override { return data_[index(slot)]; }
    void write_value(std::uint32_t slot, json_text& w) const override { w.value(data_[index(slot)]); }
    void hash_value(std::uint32_t slot, state_hasher& h) const override {
        schema_.hash(h, data_[index(slot)]);
    }
    [[nodiscard]] json schema_fields() const override { return schema_.to_json(); }

  private:
    dynamic_schema schema_;
};

}  // namespace ecsd::ecs
