// Snapshot benchmark (issue 7): save and load time and file size for a world of N entities
// (default 1,000,000) with Position and Velocity. Run from a Release build:
//   build/release/bin/persist_bench [--entities N] [--dir DIR] [--json]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "persist/atomic_file.hpp"
#include "persist/snapshot.hpp"

using namespace ecsd;
using nlohmann::json;

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
    std::size_t n = 1'000'000;
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "ecsd_persist_bench";
    bool as_json = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--entities") == 0 && i + 1 < argc)
            n = std::stoul(argv[++i]);
        else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (std::strcmp(argv[i], "--json") == 0)
            as_json = true;
        else {
            std::fprintf(stderr, "usage: persist_bench [--entities N] [--dir DIR] [--json]\n");
            return 2;
        }
    }
    spdlog::set_level(spdlog::level::err);
    std::filesystem::create_directories(dir);
    const auto path = dir / "bench.snapshot.json";

    world::world_settings s;
    s.name = "bench";
    s.paused = true;
    world::world w(s);
    auto& reg = w.registry();
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = reg.create();
        reg.emplace<world::Position>(
            e, {static_cast<double>(i % 1000) * 0.5, static_cast<double>(i / 1000) * 0.25});
        reg.emplace<world::Velocity>(e, {1.5, -0.25});
    }
    const auto hash_before = w.state_hash();

    auto t0 = std::chrono::steady_clock::now();
    const std::string text = persist::snapshot_text(w, 0);
    const double serialize_ms = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    persist::write_file_atomically(path, text);
    const double write_ms = ms_since(t0);

    t0 = std::chrono::steady_clock::now();
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const json doc = json::parse(buffer.str());
    const double parse_ms = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    auto loaded = persist::from_snapshot(doc, path.string());
    const double rebuild_ms = ms_since(t0);
    const bool same = loaded->state_hash() == hash_before;

    const json out = {{"entities", n},
                      {"file_bytes", text.size()},
                      {"save_ms", serialize_ms + write_ms},
                      {"save_serialize_ms", serialize_ms},
                      {"save_write_fsync_ms", write_ms},
                      {"load_ms", parse_ms + rebuild_ms},
                      {"load_read_parse_ms", parse_ms},
                      {"load_rebuild_ms", rebuild_ms},
                      {"hash_equal", same}};
    std::filesystem::remove(path);
    if (as_json) {
        std::puts(out.dump().c_str());
    } else {
        std::printf("%zu entities: snapshot %.1f MB\n", n, static_cast<double>(text.size()) / 1e6);
        std::printf("save %.0f ms (serialize %.0f, write+fsync %.0f)\n", serialize_ms + write_ms,
                    serialize_ms, write_ms);
        std::printf("load %.0f ms (read+parse %.0f, rebuild %.0f)\n", parse_ms + rebuild_ms, parse_ms,
                    rebuild_ms);
        std::printf("state hash equal after load: %s\n", same ? "yes" : "NO");
    }
    return same ? 0 : 1;
}
