#include "hosting/world_transfers.hpp"

#include <algorithm>
#include <stdexcept>

namespace ecsd::net {

void world_transfers::expire(clock::time_point now) {
    std::erase_if(exports_, [now](const auto& kv) { return now - kv.second.touched > idle_limit; });
    std::erase_if(imports_, [now](const auto& kv) { return now - kv.second.touched > idle_limit; });
}

std::string world_transfers::add_export(export_text e) {
    const auto now = clock::now();
    std::lock_guard lock(mutex_);
    expire(now);
    if (exports_.size() >= max_transfers) {
        const auto oldest = std::ranges::min_element(
            exports_, [](const auto& a, const auto& b) { return a.second.touched < b.second.touched; });
        exports_.erase(oldest);
    }
    // Appended, not "x" + to_string(): GCC 12 at -O3 warns (-Wrestrict) of the operator+ form.
    std::string id = "x";
    id += std::to_string(++next_id_);
    exports_.emplace(id, kept_export{std::move(e), now});
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
                                                          std::string_view data, std::size_t* expected) {
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
    if (held + data.size() > max_import_bytes) {
        imports_.erase(it);
        throw std::length_error("imports hold at most " + std::to_string(max_import_bytes) + " bytes in all");
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
