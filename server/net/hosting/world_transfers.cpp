#include "hosting/world_transfers.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "hosting/hosted_world.hpp"

namespace ecsd::net {

world_transfers::world_transfers()
    : lane_work_(asio::make_work_guard(lane_io_)),
      lane_(std::make_shared<hosted_world>(lane_io_, "(lane)", nullptr)),
      lane_thread_([this] { lane_io_.run(); }) {}

world_transfers::~world_transfers() {
    lane_work_.reset();
    lane_io_.stop();
    lane_thread_.join();
}

void world_transfers::expire(clock::time_point now) {
    std::erase_if(exports_, [now](const auto& kv) { return now - kv.second.touched > export_idle_limit; });
    std::erase_if(imports_, [now](const auto& kv) { return now - kv.second.touched > idle_limit; });
}

std::size_t world_transfers::export_bytes_locked() const {
    std::set<const std::string*> seen;
    std::size_t held = 0;
    for (const auto& [id, k] : exports_) {
        if (seen.insert(k.e.text.get()).second) held += k.e.text->size();
    }
    return held;
}

std::size_t world_transfers::export_bytes() {
    std::lock_guard lock(mutex_);
    return export_bytes_locked();
}

std::shared_ptr<const std::string> world_transfers::shared_text(const std::string& world,
                                                                const export_state& state) {
    const auto now = clock::now();
    std::lock_guard lock(mutex_);
    expire(now);
    for (const auto& [id, k] : exports_) {
        if (k.e.world == world && k.state.world == state.world && k.state.tick == state.tick &&
            k.state.version == state.version)
            return k.e.text;
    }
    return nullptr;
}

std::string world_transfers::add_export(export_text e, const export_state& state, std::size_t max_bytes) {
    const auto now = clock::now();
    std::lock_guard lock(mutex_);
    expire(now);
    const auto fits = [&] {
        std::set<const std::string*> seen;
        std::size_t held = 0;
        std::size_t largest = e.text->size();
        for (const auto& [id, k] : exports_) {
            if (!seen.insert(k.e.text.get()).second) continue;
            held += k.e.text->size();
            largest = std::max(largest, k.e.text->size());
        }
        const bool shared = seen.contains(e.text.get());
        return held + (shared ? 0 : e.text->size()) <= std::max(2 * largest, max_bytes);
    };
    if (!fits()) {
        // Room goes to exports being read: the ones nobody read from lately go first.
        std::erase_if(exports_, [now](const auto& kv) { return now - kv.second.touched > export_abandoned; });
        if (!fits()) {
            throw std::length_error("exports hold " + std::to_string(export_bytes_locked()) +
                                    " bytes of snapshots already (at most twice the largest, or " +
                                    std::to_string(max_bytes) +
                                    ", --max-export-bytes): read those to the end, or wait a few seconds, "
                                    "and try again");
        }
    }
    if (exports_.size() >= max_transfers) {
        const auto oldest = std::ranges::min_element(
            exports_, [](const auto& a, const auto& b) { return a.second.touched < b.second.touched; });
        exports_.erase(oldest);
    }
    // Appended, not "x" + to_string(): GCC 12 at -O3 warns (-Wrestrict) of the operator+ form.
    std::string id = "x";
    id += std::to_string(++next_id_);
    exports_.emplace(id, kept_export{std::move(e), state, now});
    return id;
}

std::optional<world_transfers::export_text> world_transfers::find_export(std::string_view id) {
    const auto now = clock::now();
    std::lock_guard lock(mutex_);
    expire(now);
    const auto it = exports_.find(id);
    if (it == exports_.end()) return std::nullopt;
    it->second.touched = now;
    return it->second.e;
}

void world_transfers::end_export(std::string_view id) {
    std::lock_guard lock(mutex_);
    if (const auto it = exports_.find(id); it != exports_.end()) exports_.erase(it);
}

std::optional<std::size_t> world_transfers::append_import(const std::string& world, std::size_t offset,
                                                          std::string_view data, std::size_t* expected,
                                                          std::size_t max_bytes) {
    const auto now = clock::now();
    std::lock_guard lock(mutex_);
    expire(now);
    auto it = imports_.find(world);
    if (offset == 0) {
        if (it == imports_.end() && imports_.size() >= max_transfers)
            throw std::length_error("at most " + std::to_string(max_transfers) + " imports at once");
        it = imports_.insert_or_assign(world, gathering{{}, now}).first;
    }
    const std::size_t at = it == imports_.end() ? 0 : it->second.text.size();
    if (it == imports_.end() || offset != at) {
        if (expected != nullptr) *expected = at;
        return std::nullopt;
    }
    // The bound is for all imports together: sixteen of them may not hold sixteen times it.
    std::size_t held = 0;
    for (const auto& kv : imports_) held += kv.second.text.size();
    if (held + data.size() > max_bytes) {
        imports_.erase(it);
        throw std::length_error("imports hold at most " + std::to_string(max_bytes) +
                                " bytes of text in all (--max-import-bytes)");
    }
    it->second.text.append(data);
    it->second.touched = now;
    return it->second.text.size();
}

std::string world_transfers::take_import(const std::string& world) {
    std::lock_guard lock(mutex_);
    const auto it = imports_.find(world);
    if (it == imports_.end()) return {};
    std::string text = std::move(it->second.text);
    imports_.erase(it);
    return text;
}

void world_transfers::drop_import(const std::string& world) {
    std::lock_guard lock(mutex_);
    imports_.erase(world);
}

}  // namespace ecsd::net
