#include "persist/snapshot_binary.hpp"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>

#include "ecs/json_text.hpp"
#include "persist/atomic_file.hpp"
#include "persist/journal.hpp"

namespace ecsd::persist {

// Integers are written as they lie in memory, and so are component values (doubles, uint32s):
// the format is little-endian, and so must the machine be that writes or reads it.
static_assert(std::endian::native == std::endian::little,
              "binary snapshots are little-endian: a big-endian build needs byte swapping here");

namespace {

/// @brief magic, version, flags, journal_seq, stored body bytes, body bytes.
constexpr std::size_t header_bytes = 8 + 4 + 4 + 8 + 8 + 8;
constexpr std::size_t trailer_bytes = 4;  // the CRC-32
constexpr std::uint32_t flag_zstd = 1;
constexpr int zstd_level = 1;  // the fastest: a save is about speed; level 3 saved little more here

/// @brief How a storage's values follow its slots in the body.
enum class encoding : std::uint8_t {
    tag = 0,   ///< no values: membership only
    raw = 1,   ///< value_size bytes each, as they lie in memory
    json = 2,  ///< each a u32 length and JSON text
};

/// @brief How a storage's slot list is laid out: each slot, or runs of consecutive slots. The
/// writer picks the smaller; a world spawned in one go is a single run.
enum class layout : std::uint8_t { each = 0, runs = 1 };

enum slot_state : std::uint8_t { live = 0, queued = 1, retired = 2 };

class byte_writer {
  public:
    explicit byte_writer(std::string& out) : out_(out) {}
    void bytes(const void* p, std::size_t n) {
        if (n > 0) out_.append(static_cast<const char*>(p), n);  // p may be null when n is 0
    }
    void u8(std::uint8_t v) { out_ += static_cast<char>(v); }
    void u32(std::uint32_t v) { bytes(&v, sizeof v); }
    void u64(std::uint64_t v) { bytes(&v, sizeof v); }
    void text(std::string_view t) {
        u32(static_cast<std::uint32_t>(t.size()));
        bytes(t.data(), t.size());
    }

  private:
    std::string& out_;
};

/// @brief Reads the body; every read is bounds-checked and a short one names what it wanted.
class byte_reader {
  public:
    byte_reader(std::string_view data, const std::string& source) : data_(data), source_(source) {}

    const char* take(std::uint64_t n, const char* what) {
        if (n > data_.size() - pos_)
            fail(source_, "binary snapshot body ends at byte " + std::to_string(data_.size()) + ", inside " +
                              what + " (at body byte " + std::to_string(pos_) + ", " + std::to_string(n) +
                              " bytes wanted)");
        const char* p = data_.data() + pos_;
        pos_ += n;
        return p;
    }
    std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(*take(1, what)); }
    std::uint32_t u32(const char* what) {
        std::uint32_t v = 0;
        std::memcpy(&v, take(sizeof v, what), sizeof v);
        return v;
    }
    std::uint64_t u64(const char* what) {
        std::uint64_t v = 0;
        std::memcpy(&v, take(sizeof v, what), sizeof v);
        return v;
    }
    std::string_view text(const char* what) {
        const auto n = u32(what);
        return {take(n, what), n};
    }
    /// @brief A list write_slots wrote: `n` slots, each below `limit`.
    std::vector<std::uint32_t> slots(std::uint64_t n, std::uint64_t limit, const char* what) {
        std::vector<std::uint32_t> out;
        const auto form = static_cast<layout>(u8(what));
        if (form == layout::each) {
            const char* from = take(n * 4, what);
            out.resize(n);
            if (n > 0) std::memcpy(out.data(), from, n * 4);  // an empty vector's data() may be null
        } else if (form == layout::runs) {
            const auto runs = u32(what);
            out.reserve(n);
            for (std::uint32_t r = 0; r < runs; ++r) {
                const std::uint64_t first = u32(what);
                const std::uint64_t length = u32(what);
                if (length > n - out.size() || first + length > limit)
                    fail(source_, std::string(what) + ": a run of " + std::to_string(length) + " from slot " +
                                      std::to_string(first) + " goes past the count or the slots");
                for (std::uint64_t k = 0; k < length; ++k)
                    out.push_back(static_cast<std::uint32_t>(first + k));
            }
        } else {
            fail(source_,
                 std::string(what) + " has an unknown layout " + std::to_string(static_cast<int>(form)));
        }
        if (out.size() != n)
            fail(source_, std::string(what) + ": runs hold " + std::to_string(out.size()) + " slots, not " +
                              std::to_string(n));
        for (auto slot : out)
            if (slot >= limit)
                fail(source_, std::string(what) + " names slot " + std::to_string(slot) + " of only " +
                                  std::to_string(limit));
        return out;
    }
    /// @brief The allocator's `n` generations and states.
    void slot_records(std::uint32_t n, std::vector<std::uint32_t>& gens, std::string& states) {
        const char* from_gens = take(std::uint64_t{n} * 4, "the generations");
        const char* from_states = take(n, "the slot states");
        gens.resize(n);
        if (n > 0)
            std::memcpy(gens.data(), from_gens, std::uint64_t{n} * 4);  // data() may be null when empty
        states.assign(from_states, n);
    }
    [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
    [[nodiscard]] bool done() const noexcept { return pos_ == data_.size(); }

  private:
    std::string_view data_;
    const std::string& source_;
    std::size_t pos_ = 0;
};

template <typename T>
T read_at(std::string_view bytes, std::size_t offset) {
    T v{};
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return v;
}

/// @brief Writes slots (a storage's dense order): u8 layout, then u32 × n, or a u32 run count and
/// (u32 first slot, u32 length) per run of consecutive ascending slots.
void write_slots(byte_writer& out, const std::uint32_t* slots, std::size_t n) {
    std::size_t runs = 0;
    for (std::size_t i = 0; i < n; ++i) runs += (i == 0 || slots[i] != slots[i - 1] + 1) ? 1 : 0;
    if (runs * 2 >= n) {
        out.u8(static_cast<std::uint8_t>(layout::each));
        out.bytes(slots, n * sizeof(std::uint32_t));
        return;
    }
    out.u8(static_cast<std::uint8_t>(layout::runs));
    out.u32(static_cast<std::uint32_t>(runs));
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        while (j < n && slots[j] == slots[j - 1] + 1) ++j;
        out.u32(slots[i]);
        out.u32(static_cast<std::uint32_t>(j - i));
        i = j;
    }
}

/// @brief The body: head, allocator, then each storage's slots and values in dense order.
/// @brief Appends the body to `file` (after the header, so the largest save is never copied whole).
void append_body(std::string& file, const world::world& w, std::uint64_t journal_seq) {
    const auto& reg = w.registry();
    const auto& table = reg.entities();
    std::size_t estimate = 1024 + table.slot_count() * 5;
    for (ecs::component_id c = 0; c < reg.component_count(); ++c) {
        const auto& p = reg.storage(c);
        estimate += 64 + p.size() * (4 + (p.raw_size() ? p.raw_size() : 32));
    }
    file.reserve(file.size() + estimate + trailer_bytes);
    byte_writer out(file);

    out.text(snapshot_head(w, journal_seq).dump());

    const auto slots = static_cast<std::uint32_t>(table.slot_count());
    const auto queue = table.free_queue();
    std::string states(slots, static_cast<char>(retired));
    std::vector<std::uint32_t> gens(slots);
    for (std::uint32_t slot = 0; slot < slots; ++slot) {
        gens[slot] = table.generation(slot);
        if (table.slot_alive(slot)) states[slot] = static_cast<char>(live);
    }
    for (auto slot : queue) states[slot] = static_cast<char>(queued);
    // Written whole, 5 bytes a slot: a count of slots the file cannot back is found before
    // anything is allocated for it (runs, as the storages use, would let a tiny file claim 4G slots).
    out.u32(slots);
    out.bytes(gens.data(), gens.size() * sizeof(std::uint32_t));
    out.bytes(states.data(), states.size());
    out.u32(static_cast<std::uint32_t>(queue.size()));
    out.bytes(queue.data(), queue.size() * sizeof(std::uint32_t));

    std::uint32_t storages = 0;
    for (ecs::component_id c = 0; c < reg.component_count(); ++c) storages += reg.storage(c).empty() ? 0 : 1;
    out.u32(storages);
    std::string value;
    for (ecs::component_id c = 0; c < reg.component_count(); ++c) {
        const auto& p = reg.storage(c);
        if (p.empty()) continue;
        const auto how = p.kind() == ecs::storage_kind::tag ? encoding::tag
                         : p.raw_size() > 0                 ? encoding::raw
                                                            : encoding::json;
        out.text(p.name());
        out.u8(static_cast<std::uint8_t>(how));
        out.u32(static_cast<std::uint32_t>(p.raw_size()));
        out.u64(p.size());
        write_slots(out, p.slots(), p.size());
        if (how == encoding::raw) {
            out.bytes(p.raw_data(), p.size() * p.raw_size());
        } else if (how == encoding::json) {
            for (std::size_t i = 0; i < p.size(); ++i) {
                value.clear();
                ecs::json_text writer(value);
                p.write_value(p.slot_at(i), writer);
                writer.flush();
                out.text(value);
            }
        }
    }
}

std::string compress(std::string_view body) {
    std::string out(ZSTD_compressBound(body.size()), '\0');
    const auto n = ZSTD_compress(out.data(), out.size(), body.data(), body.size(), zstd_level);
    if (ZSTD_isError(n) != 0U) throw storage_error(EIO, std::string("zstd: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return out;
}

/// @brief The zstd body, which must decompress to exactly `raw` bytes. Streamed into a buffer that
/// grows with what comes out, so a header claiming more than the frame holds costs nothing.
std::string inflate(std::string_view in, std::uint64_t raw, const std::string& source) {
    const std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (!ctx) fail(source, "zstd: cannot make a decompression context");
    std::string out;
    ZSTD_inBuffer src{in.data(), in.size(), 0};
    std::uint64_t produced = 0;
    std::size_t left = 1;  // zstd's hint: 0 once the frame is complete
    for (;;) {
        if (produced == out.size()) {
            if (out.size() == raw) break;
            out.resize(std::min<std::uint64_t>(raw, std::max<std::uint64_t>(out.size() * 2, 1U << 16)));
        }
        ZSTD_outBuffer dst{out.data() + produced, out.size() - produced, 0};
        const auto before = src.pos;
        left = ZSTD_decompressStream(ctx.get(), &dst, &src);
        if (ZSTD_isError(left) != 0U)
            fail(source, std::string("the zstd body does not decompress: ") + ZSTD_getErrorName(left));
        produced += dst.pos;
        if (left == 0) break;
        if (dst.pos == 0 && src.pos == before) break;  // no progress: the frame is cut short
    }
    if (left != 0 || produced != raw || src.pos != src.size)
        fail(source, "the zstd body does not hold the " + std::to_string(raw) + " bytes the header says");
    return out;
}

}  // namespace

std::optional<snapshot_format> parse_snapshot_format(std::string_view text) {
    if (text == "binary") return snapshot_format::binary;
    if (text == "zstd") return snapshot_format::zstd;
    if (text == "json") return snapshot_format::json_text;
    return std::nullopt;
}

std::string_view format_name(snapshot_format f) {
    switch (f) {
        case snapshot_format::binary:
            return "binary";
        case snapshot_format::zstd:
            return "zstd";
        case snapshot_format::json_text:
            return "json";
    }
    return "binary";
}

std::string binary_snapshot(const world::world& w, std::uint64_t journal_seq, bool compressed) {
    std::string file;
    byte_writer out(file);
    out.bytes(binary_snapshot_magic.data(), binary_snapshot_magic.size());
    out.u32(binary_snapshot_version);
    out.u32(compressed ? flag_zstd : 0);
    out.u64(journal_seq);
    out.u64(0);  // the stored and the raw body length, filled in below
    out.u64(0);
    append_body(file, w, journal_seq);
    const std::uint64_t raw = file.size() - header_bytes;
    if (compressed) {
        const std::string packed = compress(std::string_view(file).substr(header_bytes));
        file.resize(header_bytes);
        out.bytes(packed.data(), packed.size());
    }
    const std::uint64_t stored = file.size() - header_bytes;
    std::memcpy(file.data() + 24, &stored, sizeof stored);
    std::memcpy(file.data() + 32, &raw, sizeof raw);
    out.u32(crc32(file));
    return file;
}

bool is_binary_snapshot(std::string_view bytes) noexcept {
    return bytes.starts_with(binary_snapshot_magic);
}

void check_binary_header(std::string_view bytes, const std::string& source) {
    if (!is_binary_snapshot(bytes)) fail(source, "not an ecsd binary snapshot (no ECSDSNAP at byte 0)");
    if (bytes.size() < 12) return;  // too short to say: damage, which from_binary_snapshot reports
    const auto version = read_at<std::uint32_t>(bytes, 8);
    if (version > binary_snapshot_version)
        fail(source, "binary snapshot version " + std::to_string(version) +
                         " is newer than this server understands (" +
                         std::to_string(binary_snapshot_version) + "); upgrade ecsd");
    if (version < 1) fail(source, "binary snapshot version 0 is not valid");
}

snapshot_seal check_binary_seal(std::string_view bytes) {
    snapshot_seal out;
    if (bytes.size() < trailer_bytes) return out;
    out.offset = bytes.size() - trailer_bytes;
    out.stored = read_at<std::uint32_t>(bytes, out.offset);
    out.computed = crc32(bytes.substr(0, out.offset));
    out.status = out.stored == out.computed ? snapshot_seal::state::good : snapshot_seal::state::mismatch;
    return out;
}

std::uint64_t binary_snapshot_journal_seq(std::string_view bytes) {
    return bytes.size() >= header_bytes ? read_at<std::uint64_t>(bytes, 16) : 0;
}

std::unique_ptr<world::world> from_binary_snapshot(std::string_view bytes, const std::string& source) {
    check_binary_header(bytes, source);
    if (bytes.size() < header_bytes + trailer_bytes)
        fail(source, "binary snapshot of " + std::to_string(bytes.size()) + " bytes is shorter than its " +
                         std::to_string(header_bytes + trailer_bytes) + "-byte header and checksum");
    if (binary_snapshot_journal_seq(bytes) >= max_counter)
        fail(source,
             "journal_seq " + std::to_string(binary_snapshot_journal_seq(bytes)) + " is past 2^53 - 1");
    const auto flags = read_at<std::uint32_t>(bytes, 12);
    if ((flags & ~flag_zstd) != 0)
        fail(source, "binary snapshot has flags " + std::to_string(flags) + " this server does not know");
    const auto stored = read_at<std::uint64_t>(bytes, 24);
    const auto raw = read_at<std::uint64_t>(bytes, 32);
    if (stored != bytes.size() - header_bytes - trailer_bytes)
        fail(source,
             "binary snapshot says its body has " + std::to_string(stored) + " bytes, but the file holds " +
                 std::to_string(bytes.size() - header_bytes - trailer_bytes) + " (cut short or grown)");
    std::string_view body = bytes.substr(header_bytes, stored);
    std::string unpacked;
    if ((flags & flag_zstd) != 0) {
        unpacked = inflate(body, raw, source);
        body = unpacked;
    } else if (raw != stored) {
        fail(source, "binary snapshot body sizes disagree (" + std::to_string(stored) + " stored, " +
                         std::to_string(raw) + " raw) without compression");
    }

    return rebuild_world(source, [&] {
        byte_reader in(body, source);
        const json head = read_document(in.text("the head"), source, "the head");
        check_snapshot_header(head, source);
        auto w = world_from_head(head, source);
        auto& reg = w->registry();

        const auto slots = in.u32("the allocator");
        std::vector<std::uint32_t> gens;
        std::string states;
        in.slot_records(slots, gens, states);
        const auto queue_size = in.u32("the free queue");
        const char* queue = in.take(std::uint64_t{queue_size} * 4, "the free queue");
        const auto gen = [&](std::uint32_t slot) { return gens[slot]; };
        std::vector<ecs::entity_id> alive;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> free;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> gone;
        std::size_t queued_slots = 0;
        for (std::uint32_t slot = 0; slot < slots; ++slot) {
            switch (static_cast<std::uint8_t>(states[slot])) {
                case live:
                    alive.push_back(ecs::make_entity(slot, gen(slot)));
                    break;
                case queued:
                    ++queued_slots;
                    break;
                case retired:
                    gone.emplace_back(slot, gen(slot));
                    break;
                default:
                    fail(source, "slot " + std::to_string(slot) + " has an unknown state " +
                                     std::to_string(static_cast<int>(states[slot])));
            }
        }
        if (queued_slots != queue_size)
            fail(source, std::to_string(queued_slots) + " slots are marked free but the free queue lists " +
                             std::to_string(queue_size));
        free.reserve(queue_size);
        for (std::uint32_t i = 0; i < queue_size; ++i) {
            const auto slot = read_at<std::uint32_t>({queue, queue_size * 4ULL}, i * 4ULL);
            if (slot >= slots || states[slot] != queued)
                fail(source, "the free queue lists slot " + std::to_string(slot) + ", which is not free");
            free.emplace_back(slot, gen(slot));
        }
        reg.restore_entities(slots, alive, free, gone);

        const auto& table = reg.entities();
        const auto storages = in.u32("the storage count");
        for (std::uint32_t s = 0; s < storages; ++s) {
            const std::string name(in.text("a storage name"));
            const auto c = reg.component_by_name(name);
            auto& p = reg.storage(c);
            const auto how = static_cast<encoding>(in.u8("a storage"));
            const auto size = in.u32("a storage");
            const auto count = in.u64("a storage");
            if (count > slots)
                fail(source, name + " holds " + std::to_string(count) + " values but there are only " +
                                 std::to_string(slots) + " slots");
            const auto dense = in.slots(count, slots, "a storage's slots");
            const auto slot_at = [&](std::uint64_t i) { return dense[i]; };
            const auto id_at = [&](std::uint64_t i) {
                const auto slot = slot_at(i);
                if (!table.slot_alive(slot))
                    fail(source,
                         name + " lists slot " + std::to_string(slot) + ", which holds no live entity");
                return table.id_of(slot);
            };
            if ((how == encoding::tag) != (p.kind() == ecs::storage_kind::tag))
                fail(source,
                     name + (how == encoding::tag ? " was saved as a tag, but it holds values here"
                                                  : " holds values in the snapshot, but it is a tag here"));
            p.reserve(count);
            switch (how) {
                case encoding::tag:
                    for (std::uint64_t i = 0; i < count; ++i) reg.restore_component(c, id_at(i), json());
                    break;
                case encoding::raw: {
                    if (size == 0 || size != p.raw_size())
                        fail(source, name + " values were saved as " + std::to_string(size) +
                                         " bytes each, but this server stores " +
                                         std::to_string(p.raw_size()));
                    const char* values = in.take(count * size, "a storage's values");
                    for (std::uint64_t i = 0; i < count; ++i)
                        reg.restore_raw(c, slot_at(i), reinterpret_cast<const std::byte*>(values + i * size));
                    break;
                }
                case encoding::json:
                    for (std::uint64_t i = 0; i < count; ++i)
                        reg.restore_component(c, id_at(i),
                                              read_document(in.text("a value"), source, "a value"));
                    break;
                default:
                    fail(source,
                         name + " has an unknown value encoding " + std::to_string(static_cast<int>(how)));
            }
        }
        if (!in.done())
            fail(source, "binary snapshot body has " + std::to_string(body.size() - in.pos()) +
                             " bytes after its last storage");
        reg.finish_restore();
        return w;
    });
}

}  // namespace ecsd::persist
