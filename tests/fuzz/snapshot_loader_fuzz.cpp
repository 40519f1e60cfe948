// Fuzz target for the snapshot loader, as ecsd reads a snapshot file at start-up (world_log.cpp):
// binary or JSON, the checksum is checked, the header checked and the world rebuilt; anything
// wrong is a persist_error, nothing else. A world that loads saves again, and what it saves loads
// to the same world (same text, same state hash, the same state one tick later), in both forms.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "ecsd/protocol/json_parse.hpp"
#include "persist/journal.hpp"
#include "persist/snapshot.hpp"
#include "persist/snapshot_binary.hpp"

namespace {

using nlohmann::json;
namespace persist = ecsd::persist;

void check(bool ok) {
    if (!ok) std::abort();
}

/// @brief The binary form, plain and compressed, loads to the same world as `w`.
void check_binary_round_trip(const ecsd::world::world& w, std::uint64_t seq, const std::string& text) {
    for (const bool compressed : {false, true}) {
        const std::string bytes = persist::binary_snapshot(w, seq, compressed);
        check(persist::check_binary_seal(bytes).status == persist::snapshot_seal::state::good);
        check(persist::binary_snapshot_journal_seq(bytes) == seq);
        const auto back = persist::from_binary_snapshot(bytes, "fuzz (binary)");
        check(persist::snapshot_text(*back, seq) == text);
        check(back->state_hash() == w.state_hash());
    }
}

/// @brief A binary snapshot as ecsd reads one: damage is a persist_error; a world that loads
/// saves to a file that loads to the same world.
int binary_input(std::string_view bytes) {
    const auto seal = persist::check_binary_seal(bytes);
    if (seal.status != persist::snapshot_seal::state::missing)
        check(seal.computed == persist::crc32(bytes.substr(0, seal.offset)));
    std::unique_ptr<ecsd::world::world> w;
    try {
        persist::check_binary_header(bytes, "fuzz");
        w = persist::from_binary_snapshot(bytes, "fuzz");
    } catch (const persist::persist_error&) {
        return 0;
    }
    const auto seq = persist::binary_snapshot_journal_seq(bytes);
    check_binary_round_trip(*w, seq, persist::snapshot_text(*w, seq));
    return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool quiet = [] {
        spdlog::set_level(spdlog::level::off);
        return true;
    }();
    (void)quiet;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (persist::is_binary_snapshot(text)) return binary_input(text);

    const auto seal = persist::check_snapshot_seal(text);
    if (seal.status != persist::snapshot_seal::state::missing) {
        check(seal.offset < text.size());
        check(seal.computed == persist::crc32(text.substr(0, seal.offset)));
        check((seal.status == persist::snapshot_seal::state::good) == (seal.stored == seal.computed));
    }
    const json doc = ecsd::protocol::parse_document(text);  // as world_log.cpp: depth first
    if (doc.is_discarded()) return 0;
    std::unique_ptr<ecsd::world::world> w;
    std::uint64_t seq = 0;
    try {
        persist::check_snapshot_header(doc, "fuzz");
        w = persist::from_snapshot(doc, "fuzz");
        seq = persist::snapshot_journal_seq(doc);
    } catch (const persist::persist_error&) {
        return 0;
    }

    const std::string saved = persist::snapshot_text(*w, seq);
    check(json::parse(saved) == persist::to_snapshot(*w, seq));
    const std::string sealed = persist::seal_snapshot(saved);
    check(persist::check_snapshot_seal(sealed).status == persist::snapshot_seal::state::good);
    const auto again = persist::from_snapshot(json::parse(sealed), "fuzz (saved again)");
    check(persist::snapshot_text(*again, seq) == saved);
    check(again->state_hash() == w->state_hash());
    check_binary_round_trip(*w, seq, saved);
    w->step(1);
    again->step(1);
    check(again->state_hash() == w->state_hash());
    return 0;
}
