// Fuzz target for world.import's text, as the handler reads it (persist::world_from_import): a
// client's JSON text that no request-line check has seen, checksum, nesting depth, header, values
// and counters. Anything wrong is a persist_error, nothing else (no crash, no other exception);
// a world that imports exports a text that imports to the same world under the same name.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "persist/snapshot.hpp"

namespace {

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
    std::unique_ptr<ecsd::world::world> w;
    try {
        w = persist::world_from_import(std::string(text), "imported");
    } catch (const persist::persist_error&) {
        return 0;
    }
    check(w->settings().name == "imported");
    check(w->tick() < persist::max_counter);
    const std::string exported = persist::seal_snapshot(persist::snapshot_text(*w, 0));
    const auto again = persist::world_from_import(exported, "imported");
    check(again->state_hash() == w->state_hash());
    check(persist::snapshot_text(*again, 0) == persist::snapshot_text(*w, 0));
    return 0;
}
