// Fuzz target for the snapshot loader, as ecsd reads a snapshot file at start-up (world_log.cpp):
// the checksum seal is checked, the text parsed, the header checked and the world rebuilt; anything
// wrong is a persist_error, nothing else. A world that loads saves again, and what it saves loads
// to the same world (same text, same state hash, the same state one tick later).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "persist/journal.hpp"
#include "persist/snapshot.hpp"

namespace {

using nlohmann::json;
namespace persist = ecsd::persist;

void check(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool quiet = [] {
        spdlog::set_level(spdlog::level::off);
        return true;
    }();
    (void)quiet;
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    const auto seal = persist::check_snapshot_seal(text);
    if (seal.status != persist::snapshot_seal::state::missing) {
        check(seal.offset < text.size());
        check(seal.computed == persist::crc32(text.substr(0, seal.offset)));
        check((seal.status == persist::snapshot_seal::state::good) == (seal.stored == seal.computed));
    }
    const json doc = json::parse(text, nullptr, false);
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
    w->step(1);
    again->step(1);
    check(again->state_hash() == w->state_hash());
    return 0;
}
