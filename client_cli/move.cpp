#include "move.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include "errors.hpp"
#include "session.hpp"

namespace ecsd::cli {

std::pair<std::string, std::uint16_t> parse_host_port(std::string_view text) {
    const auto bad = [&] {
        return usage_error("--to: expected HOST:PORT (e.g. 10.0.0.7:7777 or [::1]:7777), got '" +
                           std::string(text) + "'");
    };
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) throw bad();
    std::string_view host = text.substr(0, colon);
    if (host.front() == '[') {
        if (host.size() < 3 || host.back() != ']') throw bad();
        host = host.substr(1, host.size() - 2);
    }
    const auto port_text = text.substr(colon + 1);
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
        throw bad();
    return {std::string(host), static_cast<std::uint16_t>(port)};
}

namespace {

/// @brief The chunk size each world.export call asks for (the server's largest).
constexpr std::size_t chunk_bytes = std::size_t{512} * 1024;
/// @brief The chunk size of world.import calls: with JSON escaping, well inside a request line.
constexpr std::size_t import_chunk_bytes = std::size_t{256} * 1024;

}  // namespace

json run_export(session& s, const verb_input& input) {
    const std::string name = input.one("NAME").value_or(s.world.value_or("default"));
    const std::string file = input.one("FILE").value_or("-");
    std::string text;
    json chunk = s.client.call("world.export", json{{"world", name}, {"max_bytes", chunk_bytes}});
    const std::string id = chunk.at("export").get<std::string>();
    for (;;) {
        text += chunk.at("data").get_ref<const std::string&>();
        if (chunk.at("done").get<bool>()) break;
        chunk = s.client.call(
            "world.export",
            json{{"world", name}, {"export", id}, {"offset", text.size()}, {"max_bytes", chunk_bytes}});
    }
    if (file == "-") {
        *s.out << text;
        return json(json::value_t::discarded);
    }
    // Written beside the target and renamed over it: a failed export never leaves half a file.
    const std::string temp = file + ".part";
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out) {
            std::remove(temp.c_str());
            throw usage_error("export: cannot write " + file);
        }
    }
    if (std::rename(temp.c_str(), file.c_str()) != 0) {
        std::remove(temp.c_str());
        throw usage_error("export: cannot write " + file);
    }
    return json{{"world", name}, {"file", file}, {"tick", chunk.at("tick")}, {"bytes", text.size()}};
}

json run_import(session& s, const verb_input& input) {
    const std::string name = input.one("NAME").value_or("");
    const std::string file = input.one("FILE").value_or("-");
    std::string text;
    if (file == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
        std::ifstream in(file, std::ios::binary);
        if (!in) throw usage_error("import: cannot open " + file);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::string source = file == "-" ? std::string("standard input") : file;
    if (text.empty()) throw usage_error("import: " + source + " is empty");
    if (text.starts_with("ECSDSNAP"))  // persist/snapshot_binary.hpp's magic
        throw usage_error(
            "import: " + source +
            " is a binary snapshot (as --data-dir holds); import reads the JSON form that "
            "`ecsctl export` writes. To serve a binary snapshot, put it in an ecsd's --data-dir "
            "before it starts");
    std::size_t offset = 0;
    for (;;) {
        auto end = std::min(text.size(), offset + import_chunk_bytes);
        // Each chunk is a JSON string: never end one inside a UTF-8 character.
        while (end > offset && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U)
            --end;
        const bool last = end == text.size();
        json params{{"world", name}, {"data", text.substr(offset, end - offset)}, {"offset", offset}};
        if (last) {
            params["final"] = true;
            if (input.flag("--paused")) params["paused"] = true;
        }
        json answer = s.client.call("world.import", params);
        if (last) return answer;
        offset = end;
    }
}

json run_move(session& s, const verb_input& input) {
    const std::string name = input.one("NAME").value_or("");
    const std::string to_text = input.one("--to").value_or("");
    if (to_text.empty()) throw usage_error("world move: --to HOST:PORT is required");
    const auto [host, port] = parse_host_port(to_text);
    connection_options target_options = s.client.options();
    target_options.host = host;
    target_options.port = port;
    if (auto t = input.one("--to-token")) target_options.token = *t;
    rpc_client target(target_options);
    const std::string from = s.client.peer();
    if (host == s.client.options().host && port == s.client.options().port)
        throw usage_error("world move: --to names the server the world is on (" + from + ")");
    const auto t0 = std::chrono::steady_clock::now();

    // Both ends answer before anything changes: a target that cannot be reached or already has
    // the name stops the move here, with the source untouched.
    const json info = s.client.call("world.info", json{{"world", name}});
    const bool was_paused = info.value("paused", false);
    const json there = target.call("world.list");
    for (const auto& w : there.value("worlds", json::array()))
        if (w == name)
            throw server_error(json{{"code", -32002},
                                    {"message", target.peer() + " already has a world '" + name + "'"},
                                    {"data", {{"reason", "world_exists"}, {"world", name}}}});

    bool sealed = false;
    bool imported = false;
    try {
        // 1. The copy: one snapshot, sealed with the source in the same step.
        json chunk =
            s.client.call("world.export", json{{"world", name}, {"seal", true}, {"max_bytes", chunk_bytes}});
        sealed = true;
        const std::string export_id = chunk.at("export").get<std::string>();
        const auto tick = chunk.at("tick").get<std::uint64_t>();
        const auto total = chunk.at("bytes").get<std::size_t>();
        std::size_t offset = 0;
        json done;
        for (;;) {
            const auto& data = chunk.at("data").get_ref<const std::string&>();
            const bool last = chunk.at("done").get<bool>();
            json params{{"world", name}, {"data", data}, {"offset", offset}};
            if (last) {
                params["final"] = true;
                params["paused"] = true;  // compared at the export's tick, resumed after
            }
            done = target.call("world.import", params);
            imported = imported || last;
            offset += data.size();
            if (last) break;
            chunk = s.client.call(
                "world.export",
                json{{"world", name}, {"export", export_id}, {"offset", offset}, {"max_bytes", chunk_bytes}});
        }
        // 2. The check: the same state at the same tick on both.
        const json source_hash = s.client.call("world.hash", json{{"world", name}});
        const json target_hash = target.call("world.hash", json{{"world", name}});
        if (source_hash != target_hash) {
            throw server_error(json{{"code", -32603},
                                    {"message", "the copy's hash " + target_hash.dump() +
                                                    " differs from the source's " + source_hash.dump()},
                                    {"data", {{"reason", "internal"}}}});
        }
        // 3. The switch: the copy ticks, the source goes (its watchers are told where).
        if (!was_paused) (void)target.call("world.resume", json{{"world", name}});
        bool keep = input.flag("--keep-source");
        if (!keep) (void)s.client.call("world.destroy", json{{"world", name}, {"moved_to", to_text}});
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        return json{{"world", name},
                    {"from", from},
                    {"to", target.peer()},
                    {"tick", tick},
                    {"entities", done.value("entities", 0)},
                    {"hash", target_hash.value("hash", "")},
                    {"bytes", total},
                    {"ms", static_cast<double>(static_cast<long long>(ms * 10)) / 10},
                    {"source", keep ? "sealed" : "destroyed"}};
    } catch (...) {
        // Undo what was begun, best effort: the source takes writes again, the partial copy goes.
        if (imported) {
            try {
                (void)target.call("world.destroy", json{{"world", name}});
            } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the first error is reported
            }
        }
        if (sealed) {
            try {
                (void)s.client.call("world.unseal", json{{"world", name}});
            } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the first error is reported
            }
        }
        throw;
    }
}

}  // namespace ecsd::cli
