#include "world_log.hpp"

#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "hosted_world.hpp"
#include "method_table.hpp"
#include "persist/atomic_file.hpp"
#include "persist/snapshot.hpp"
#include "services.hpp"
#include "world/world.hpp"

namespace ecsd::net {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
constexpr std::string_view snapshot_suffix = ".snapshot.json";
}

fs::path world_log::snapshot_path(const fs::path& dir, const std::string& world) {
    std::string name = world;  // appended, not operator+: gcc 12 -O3 warns falsely (-Wrestrict) on that
    name += snapshot_suffix;
    return dir / name;
}
fs::path world_log::journal_path(const fs::path& dir, const std::string& world) { return dir / (world + ".journal"); }

world_log::world_log(const fs::path& dir, const std::string& world, persist::fsync_policy policy, std::uint64_t seq)
    : dir_(dir), world_(world), journal_(journal_path(dir, world), policy), seq_(seq) {}

void world_log::record_request(std::uint64_t tick, const std::string& method, const json& params) {
    journal_.append({{"seq", ++seq_}, {"tick", tick}, {"method", method}, {"params", params}});
}

void world_log::record_tick(std::uint64_t tick) {
    journal_.append({{"seq", ++seq_}, {"tick", tick}});
}

save_report world_log::save(const world::World& w) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string text = persist::snapshot_text(w, seq_);
    const auto path = snapshot_path(dir_, world_);
    persist::write_file_atomically(path, text);
    journal_.truncate();  // a crash before this line: replay skips records with seq <= the snapshot's
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("world '{}': saved tick {} to {} ({} bytes, {:.1f} ms)", world_, w.tick(), path.string(), text.size(), ms);
    return {path.string(), text.size(), w.tick(), ms};
}

void world_log::remove_files() {
    std::error_code ignored;
    fs::remove(snapshot_path(dir_, world_), ignored);
    fs::remove(journal_path(dir_, world_), ignored);
}

void attach_log(hosted_world& hosted, const server_services& services, std::uint64_t seq, bool save_now) {
    const auto& cfg = services.config;
    if (cfg.data_dir.empty()) return;
    auto log = std::make_unique<world_log>(cfg.data_dir, hosted.name(), persist::parse_fsync_policy(cfg.appendfsync), seq);
    if (save_now) log->save(hosted.world());
    hosted.set_log(std::move(log), cfg.autosave);
}

std::vector<std::string> saved_world_names(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const auto file = entry.path().filename().string();
        if (file.size() > snapshot_suffix.size() && file.ends_with(snapshot_suffix) && file.front() != '.')
            names.push_back(file.substr(0, file.size() - snapshot_suffix.size()));
    }
    std::sort(names.begin(), names.end());
    return names;
}

loaded_world load_world(const fs::path& dir, const std::string& name, asio::io_context& io, server_services& services) {
    const auto snap_path = world_log::snapshot_path(dir, name);
    std::ifstream in(snap_path, std::ios::binary);
    if (!in) throw persist::persist_error(snap_path.string() + ": cannot open");
    std::stringstream buffer;
    buffer << in.rdbuf();
    json doc = json::parse(buffer.str(), nullptr, false);
    if (doc.is_discarded()) throw persist::persist_error(snap_path.string() + ": not valid JSON");
    loaded_world out;
    std::shared_ptr<world::World> loaded = persist::from_snapshot(doc, snap_path.string());
    out.seq = persist::snapshot_journal_seq(doc);

    const auto journal_file = world_log::journal_path(dir, name);
    const auto journal = persist::read_journal(journal_file);
    if (journal.torn_tail) {
        spdlog::warn("{}: dropped a torn last record at byte offset {} (crash mid-write)", journal_file.string(),
                     journal.valid_bytes);
        persist::truncate_journal(journal_file, journal.valid_bytes);
        out.torn_tail = true;
    }
    // Replay through the same handlers and the same deterministic tick loop.
    out.hosted = std::make_shared<hosted_world>(io, name, loaded);
    for (const auto& rec : journal.records) {
        const auto seq = rec.at("seq").get<std::uint64_t>();
        if (seq <= out.seq) continue;  // already in the snapshot (a crash between save and truncate)
        const auto tick = rec.at("tick").get<std::uint64_t>();
        auto& w = *loaded;
        if (tick < w.tick())
            throw persist::persist_error(journal_file.string() + ": record " + std::to_string(seq) + " is for tick " +
                                         std::to_string(tick) + " but the world is already at " + std::to_string(w.tick()));
        while (w.tick() < tick) w.run_tick();
        if (rec.contains("method")) {
            const auto method = rec.at("method").get<std::string>();
            const auto* entry = services.methods.find(method);
            if (!entry) throw persist::persist_error(journal_file.string() + ": unknown method " + method + " in record " + std::to_string(seq));
            const json params = rec.value("params", json::object());
            method_context ctx{params, services, out.hosted.get(), nullptr, {}};
            try {
                (void)entry->handler(ctx);
            } catch (const std::exception& e) {
                throw persist::persist_error(journal_file.string() + ": record " + std::to_string(seq) + " (" + method +
                                             ") no longer applies: " + e.what());
            }
        }
        out.seq = seq;
        ++out.replayed;
    }
    return out;
}

}  // namespace ecsd::net
