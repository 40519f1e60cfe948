#include "verbs.hpp"

#include <algorithm>

#include "args.hpp"
#include "errors.hpp"
#include "lua_verbs.hpp"
#include "move.hpp"

namespace ecsd::cli {

std::optional<std::string> verb_input::one(std::string_view name) const {
    const auto it = values.find(name);
    if (it == values.end() || it->second.empty()) {
        return std::nullopt;
    }
    return it->second.front();
}

std::span<const std::string> verb_input::all(std::string_view name) const {
    const auto it = values.find(name);
    if (it == values.end()) {
        return {};
    }
    return it->second;
}

request verb::build(const verb_input& in) const {
    request r;
    r.params = params ? params(in) : json::object();
    r.method = method_for ? method_for(in) : std::string();
    if (r.method.empty()) {
        r.method = std::string(method);
    }
    return r;
}

namespace {

// Shorthands for the table below.
const positional_spec id_arg{
    "ID", "entity id, as printed by spawn (e.g. 4294967296), or its Name (e.g. hero)", arity::one};
const option_spec limit_opt{"--limit", "return at most N rows", false, "N"};
const option_spec offset_opt{"--offset", "skip the first N rows", false, "N"};

/// @brief The query language, for `query --help` and `watch --help` (server/ecs/query.hpp parses the
///        text form, the world the object form).
constexpr std::string_view query_language =
    "QUERY text form: terms separated by commas\n"
    "  Position               has the component          !Frozen          lacks it\n"
    "  Health|Shield          has at least one of them   ?Health          optional: shown where present,\n"
    "                                                                     filters nothing\n"
    "  Health.hp < 50         value filter: == != < <= > >= against a JSON literal, e.g.\n"
    "                         AI.kind == \"boss\", Position.y <= 0, Appearance.name == \"tree\"\n"
    "  Health.hp < Health.max two fields of one entity; Contacts.entities != [] (== != take lists)\n"
    "  added(Position)        added in the last tick; also changed(NAME), removed(NAME)\n"
    "  died                   entities destroyed in the last tick\n"
    "  near(x, y, r)          Position within r of a point; near(ID, r) or near(NAME, r)\n"
    "                         within r of an entity, e.g. near(hero, 5)\n"
    "  *                      every entity\n"
    "QUERY object form, every key optional:\n"
    "  all, none, optional    lists of names          any      a list: at least one of them\n"
    "  added, changed, removed  lists of names        died     true\n"
    "  near   {\"x\":0,\"y\":0,\"r\":5} or {\"entity\":ID or \"NAME\",\"r\":5}\n"
    "  where  [{\"field\":\"Health.hp\",\"op\":\"<\",\"value\":50}]\n";

json entity_of(const verb_input& in, std::string_view name = "ID") {
    return parse_entity_ref(in.one(name).value_or(""));
}

/// @brief Copies --limit/--offset into params when given.
void paging(const verb_input& in, json& params) {
    if (auto v = in.one("--limit")) {
        params["limit"] = parse_count(*v, "--limit");
    }
    if (auto v = in.one("--offset")) {
        params["offset"] = parse_count(*v, "--offset");
    }
}

/// @brief `query` and `watch`: {query (text, or JSON when it starts with '{'), fields}.
json query_params(const verb_input& in) {
    const std::string text = in.one("QUERY").value_or("");
    json params = json::object();
    params["query"] = text.starts_with('{') ? parse_json(text, "QUERY") : json(text);
    if (!in.all("--fields").empty()) {
        params["fields"] = split_list(in.all("--fields"));
    }
    return params;
}

/// @brief `enable-system`, `disable-system`, `run-system`: {system}.
json system_param(const verb_input& in) {
    return {{"system", in.one("SYSTEM").value_or("")}};
}

/// @brief `methods`: the OpenRPC document reduced to one {name, summary} row per method.
json method_rows(const json& doc) {
    auto rows = json::array();
    if (!doc.is_object() || !doc.contains("methods") || !doc["methods"].is_array()) {
        return doc;
    }
    for (const auto& m : doc["methods"]) {
        if (!m.is_object()) {
            continue;
        }
        json row = {{"name", m.value("name", "")}};
        std::string summary = m.value("summary", "");
        if (summary.empty()) {
            summary = m.value("description", "");
        }
        row["summary"] = summary;
        rows.push_back(std::move(row));
    }
    return rows;
}

/// @brief `components` as a table: each type's field list shortened to `x:number=0, y:number=0`.
json short_fields(const json& result) {
    json copy = result;
    auto shorten = [](json& rows) {
        if (!rows.is_array()) {
            return;
        }
        for (auto& row : rows) {
            if (!row.is_object() || !row.contains("fields") || !row["fields"].is_array()) {
                continue;
            }
            std::string text;
            for (const auto& f : row["fields"]) {
                if (!f.is_object()) {
                    continue;
                }
                if (!text.empty()) {
                    text += ", ";
                }
                text += f.value("name", "?") + ":" + f.value("type", "?");
                if (f.contains("default")) {
                    text += "=" + f["default"].dump();
                }
            }
            row["fields"] = text;
        }
    };
    if (copy.is_array()) {
        shorten(copy);
    }
    if (copy.is_object()) {
        for (auto& [key, value] : copy.items()) {
            shorten(value);
        }
    }
    return copy;
}

/// @brief Names as `a, b, c`; `none_text` when there are none.
std::string joined(const json& names, std::string_view none_text) {
    std::string text;
    if (names.is_array()) {
        for (const auto& name : names) {
            text += (text.empty() ? "" : ", ") + (name.is_string() ? name.get<std::string>() : name.dump());
        }
    }
    return text.empty() ? std::string(none_text) : text;
}

/// @brief `describe` as a table: its components as COMPONENT/VALUE rows, then `entity: ID`,
///        `systems: a, b` and one line per kind of change that happened (`changed this tick: Position`),
///        or `changed this tick: nothing`.
json description_view(const json& result) {
    if (!result.is_object()) {
        return result;
    }
    json view = json::object();
    view["components"] = result.value("components", json::object());
    view["entity"] = result.value("entity", json());
    view["systems"] = joined(result.value("systems", json::array()), "none");
    const json changes = result.value("changes", json::object());
    bool changed = false;
    for (const std::string kind : {"added", "changed", "removed"}) {
        const json names = changes.is_object() ? changes.value(kind, json::array()) : json::array();
        if (names.is_array() && !names.empty()) {
            view[kind + " this tick"] = joined(names, "");
            changed = true;
        }
    }
    if (!changed) {
        view["changed this tick"] = "nothing";
    }
    return view;
}

std::vector<verb> make_verbs() {
    std::vector<verb> v;
    // --- server -----------------------------------------------------------------------------------------
    v.push_back({.name = "ping",
                 .method = "server.ping",
                 .summary = "check that the server answers (exit 0 only then)",
                 .examples = {"ecsctl ping", "ecsctl --port 7778 ping || echo down"}});
    v.push_back({.name = "info",
                 .method = "server.info",
                 .summary = "server version, uptime, connections, bytes, per-method stats, worlds and limits",
                 .examples = {"ecsctl info", "ecsctl info --json | jq .version"},
                 .table_text = render_info});
    v.push_back({.name = "methods",
                 .method = "rpc.discover",
                 .summary = "list the server's methods (from its OpenRPC document)",
                 .examples = {"ecsctl methods", "ecsctl call rpc.discover   # the whole document"},
                 .shape = method_rows});
    v.push_back(
        {.name = "call",
         .method = "",
         .summary = "call any method with raw JSON params",
         .args = {{"METHOD", "JSON-RPC method name, e.g. world.info", arity::one, word_kind::name},
                  {"PARAMS", "params as one JSON object or array (default: none)", arity::optional}},
         .examples = {"ecsctl call server.ping",
                      R"(ecsctl call world.query '{"query":"Position","limit":5}')",
                      R"(ecsctl call world.spawn_entities '{"entities":[{"Position":{}},{"Position":{}}]}')"},
         .params = [](const verb_input& in) -> json {
             auto p = in.one("PARAMS");
             if (!p) {
                 return nullptr;  // sent without params
             }
             json params = parse_json(*p, "PARAMS");
             if (!params.is_object() && !params.is_array()) {
                 throw usage_error("PARAMS must be a JSON object or array");
             }
             return params;
         },
         .method_for = [](const verb_input& in) { return in.one("METHOD").value_or(""); },
         .completes = "methods"});
    // --- worlds -----------------------------------------------------------------------------------------
    v.push_back({.name = "worlds",
                 .method = "world.list",
                 .summary = "list the worlds",
                 .examples = {"ecsctl worlds"}});
    v.push_back(
        {.name = "world create",
         .method = "world.create",
         .summary = "create a world",
         .args = {{"NAME", "name of the new world", arity::one}},
         .options = {{"--tick-hz", "ticks per second", false, "HZ"},
                     {"--gravity", "gravity as JSON, e.g. '{\"x\":0,\"y\":-9.81}'", false, "JSON"},
                     {"--bounds",
                      "edges as JSON, e.g. '{\"bottom\":0,\"left\":-50,\"right\":50}' (a ground and walls)",
                      false, "JSON"},
                     {"--paused", "create it paused", true, ""},
                     {"--threads", "threads its tick uses (default: the server's --sim-threads)", false,
                      "N"}},
         .examples = {"ecsctl world create arena", "ecsctl world create lab --tick-hz 30 --paused",
                      "ecsctl world create big --threads 2",
                      "ecsctl world create box --bounds '{\"bottom\":0,\"left\":-20,\"right\":20}'"},
         .params = [](const verb_input& in) {
             json params = {{"world", in.one("NAME").value_or("")}};
             if (auto hz = in.one("--tick-hz")) {
                 params["tick_hz"] = parse_json(*hz, "--tick-hz");
             }
             if (auto g = in.one("--gravity")) {
                 params["gravity"] = parse_json(*g, "--gravity");
             }
             if (auto b = in.one("--bounds")) {
                 params["bounds"] = parse_json(*b, "--bounds");
             }
             if (in.flag("--paused")) {
                 params["paused"] = true;
             }
             if (auto t = in.one("--threads")) {
                 params["threads"] = parse_json(*t, "--threads");
             }
             return params;
         }});
    v.push_back({.name = "world destroy",
                 .method = "world.destroy",
                 .summary = "destroy a world and everything in it",
                 .args = {{"NAME", "world to destroy", arity::one, word_kind::name}},
                 .examples = {"ecsctl world destroy arena"},
                 .params =
                     [](const verb_input& in) {
                         return json{{"world", in.one("NAME").value_or("")}};
                     },
                 .completes = "worlds"});
    v.push_back(
        {.name = "world move",
         .method = "world.export",
         .summary = "move a world to another ecsd: copy, compare hashes, switch over",
         .args = {{"NAME", "world to move", arity::one, word_kind::name}},
         .options = {{"--to", "the server to move it to", false, "HOST:PORT"},
                     {"--to-token", "the target's token (default: the same as --token)", false, "TOKEN"},
                     {"--keep-source", "leave the source world sealed instead of destroying it", true, ""}},
         // 7790: a second ecsd on this machine, as in docs/ecsctl.md (7778 is the HTTP port: no target).
         .examples = {"ecsctl world move arena --to 127.0.0.1:7790",
                      "ecsctl --port 7777 world move zone-3 --to 127.0.0.1:7790 --keep-source"},
         .details = "The source is sealed while the snapshot is taken: it stops ticking and refuses\n"
                    "every write with world_sealed (so none is lost: send it to the new server).\n"
                    "The copy is imported paused, its world.hash compared with the source's at the\n"
                    "same tick, then it resumes (unless the source was paused) and the source world\n"
                    "is destroyed; its watchers get a last notification with \"reason\":\"world_moved\"\n"
                    "and \"moved_to\". If anything fails before the switch, the copy is removed and\n"
                    "the source unsealed: it ticks and takes writes again.\n",
         .completes = "worlds",
         .drive = run_move});
    v.push_back({.name = "export",
                 .method = "world.export",
                 .summary = "write a world's snapshot (JSON, checksummed) to FILE or standard output",
                 .args = {{"NAME", "world (default: --world, else the server's default)", arity::optional,
                           word_kind::name},
                          {"FILE", "file to write (default -: standard output)", arity::optional}},
                 .examples = {"ecsctl export arena arena.json", "ecsctl export > default.json"},
                 .details = "Reads every chunk of one world.export: the snapshot of one tick, however long\n"
                            "the reading takes. The file is the JSON form of what --data-dir holds (as\n"
                            "NAME.snapshot, binary, by default) and what `import` reads. A FILE is written\n"
                            "whole or not at all.\n",
                 .completes = "worlds",
                 .drive = run_export});
    v.push_back({.name = "import",
                 .method = "world.import",
                 .summary = "create world NAME from a snapshot in FILE or standard input",
                 .args = {{"NAME", "name of the new world", arity::one},
                          {"FILE", "snapshot to read (default -: standard input)", arity::optional}},
                 .options = {{"--paused", "create it paused, whatever the snapshot says", true, ""}},
                 .examples = {"ecsctl import arena2 arena.json", "ecsctl import copy < default.json"},
                 .details = "Sends the text with world.import in chunks. The world gets the snapshot's ids,\n"
                            "tick and state; a text that fails its checksum creates nothing.\n",
                 .drive = run_import});
    v.push_back({.name = "world info",
                 .method = "world.info",
                 .summary = "tick, tick rate, paused, entity count, overruns of a world",
                 .args = {{"NAME", "world (default: --world, else the server's default)", arity::optional,
                           word_kind::name}},
                 .examples = {"ecsctl world info", "ecsctl world info arena"},
                 .params =
                     [](const verb_input& in) {
                         json params = json::object();
                         if (auto w = in.one("NAME")) {
                             params["world"] = *w;
                         }
                         return params;
                     },
                 .completes = "worlds"});
    v.push_back({.name = "pause",
                 .method = "world.pause",
                 .summary = "stop the world's ticking (step still works)",
                 .examples = {"ecsctl pause", "ecsctl --world arena pause"}});
    v.push_back({.name = "resume",
                 .method = "world.resume",
                 .summary = "resume ticking at the world's rate",
                 .examples = {"ecsctl resume"}});
    v.push_back({.name = "step",
                 .method = "world.step",
                 .summary = "advance the world by TICKS ticks now; prints the new tick",
                 .args = {{"TICKS", "number of ticks (default 1)", arity::optional}},
                 .examples = {"ecsctl step", "ecsctl step 60"},
                 .params = [](const verb_input& in) {
                     return json{{"ticks", parse_count(in.one("TICKS").value_or("1"), "TICKS")}};
                 }});
    v.push_back(
        {.name = "slowlog",
         .method = "server.slowlog",
         .summary =
             "the slowest recent requests (handler time of at least ecsd's --slowlog-us), newest first",
         .options = {{"--count", "how many (default 10)", false, "N"},
                     {"--reset", "empty the log after showing it", true, ""}},
         .examples = {"ecsctl slowlog", "ecsctl slowlog --count 50 --reset"},
         .params = [](const verb_input& in) {
             json params = json::object();
             if (auto n = in.one("--count")) params["count"] = parse_count(*n, "--count");
             if (in.flag("--reset")) params["reset"] = true;
             return params;
         }});
    v.push_back({.name = "monitor",
                 .method = "server.monitor",
                 .summary = "print every request the other connections send, as it arrives (as redis-cli "
                            "monitor does); Ctrl-C stops",
                 .options = {{"--count", "stop after N requests (default: until Ctrl-C)", false, "N"}},
                 .examples = {"ecsctl monitor", "ecsctl monitor --count 3 | jq -c '[.connection, .method]'"},
                 .params =
                     [](const verb_input& in) {
                         if (auto count = in.one("--count")) {
                             (void)parse_count(*count, "--count");  // the client's own: checked, never sent
                         }
                         return json::object();
                     },
                 .streams = true});
    v.push_back({.name = "hash",
                 .method = "world.hash",
                 .summary = "hash of the world's state at the current tick",
                 .examples = {"ecsctl hash", "ecsctl step 10 && ecsctl hash"}});
    // --- entities ---------------------------------------------------------------------------------------
    v.push_back(
        {.name = "spawn",
         .method = "world.spawn_entity",
         .summary = "create an entity with components; prints its id",
         .args = {{"COMPONENT", "Name=JSON, or a bare Name for the component's defaults", arity::any,
                   word_kind::name_value}},
         .options = {{"--count", "create N alike entities at once (world.spawn_entities); prints their ids",
                      false, "N"},
                     {"--name", "give it a Name, unique in the world, usable wherever an id is (get hero)",
                      false, "NAME"}},
         .examples = {R"(ecsctl spawn Position='{"x":0,"y":10}' Velocity='{"x":1,"y":0}' )"
                      R"(RigidBody Collider='{"radius":0.5}')",
                      R"(ecsctl spawn Position='{"x":3,"y":0}' Health='{"hp":10}' AI)",
                      "ecsctl spawn --name hero Position Health Player",
                      "ecsctl spawn --count 1000 Position Velocity"},
         .params =
             [](const verb_input& in) {
                 auto components = parse_components(in.all("COMPONENT"));
                 if (auto name = in.one("--name")) {
                     if (in.one("--count"))
                         throw usage_error("--name: names are unique, so it does not go with --count");
                     components["Name"] = {{"name", *name}};
                 }
                 if (auto n = in.one("--count")) {
                     const auto count = parse_count(*n, "--count");
                     if (count == 0 || count > 100000) {
                         throw usage_error("--count: 1 to 100000");
                     }
                     return json{{"entities", json::array_t(static_cast<std::size_t>(count), components)}};
                 }
                 return json{{"components", std::move(components)}};
             },
         // --count: many at once, in one request
         .method_for = [](const verb_input& in) { return in.one("--count") ? "world.spawn_entities" : ""; },
         .completes = "components"});
    v.push_back(
        {.name = "get",
         .method = "world.get_components",
         .summary = "show an entity's components (all, or the named ones)",
         .args = {id_arg, {"COMPONENT", "component names (default: all)", arity::any, word_kind::name}},
         .examples = {"ecsctl get 4294967296", "ecsctl get 4294967296 Position Velocity"},
         .params =
             [](const verb_input& in) {
                 json params = {{"entity", entity_of(in)}};
                 if (!in.all("COMPONENT").empty()) {
                     params["components"] = parse_component_names(in.all("COMPONENT"));
                 }
                 return params;
             },
         .completes = "components"});
    v.push_back(
        {.name = "describe",
         .method = "world.describe_entity",
         .summary =
             "one entity for debugging: its components, the systems that work on it, what changed this tick",
         .args = {id_arg},
         .examples = {"ecsctl describe 4294967296", "ecsctl describe 4294967296 --json | jq .systems"},
         .params =
             [](const verb_input& in) {
                 return json{{"entity", entity_of(in)}};
             },
         .table_view = description_view});
    v.push_back({.name = "insert",
                 .method = "world.insert_components",
                 .summary = "add components to an entity, or replace them",
                 .args = {id_arg,
                          {"COMPONENT", "Name=JSON, or a bare Name for defaults", arity::many,
                           word_kind::name_value}},
                 .examples = {R"(ecsctl insert 4294967296 Velocity='{"x":0,"y":-1}' Frozen)"},
                 .params =
                     [](const verb_input& in) {
                         return json{{"entity", entity_of(in)},
                                     {"components", parse_components(in.all("COMPONENT"))}};
                     },
                 .completes = "components"});
    v.push_back({.name = "mutate",
                 .method = "world.mutate_components",
                 .summary = "change one field of one component",
                 .args = {id_arg,
                          {"COMPONENT", "component name", arity::one, word_kind::name},
                          {"PATH", "field path inside the component, e.g. x", arity::one},
                          {"VALUE", "new value as JSON", arity::one}},
                 .examples = {"ecsctl mutate 4294967296 Position y 25.5"},
                 .params =
                     [](const verb_input& in) {
                         return json{{"entity", entity_of(in)},
                                     {"component", in.one("COMPONENT").value_or("")},
                                     {"path", in.one("PATH").value_or("")},
                                     {"value", parse_json(in.one("VALUE").value_or(""), "VALUE")}};
                     },
                 .completes = "components"});
    v.push_back({.name = "remove",
                 .method = "world.remove_components",
                 .summary = "remove components from an entity",
                 .args = {id_arg, {"COMPONENT", "component names", arity::many, word_kind::name}},
                 .examples = {"ecsctl remove 4294967296 Velocity", "ecsctl remove 4294967296 Frozen Ghost"},
                 .params =
                     [](const verb_input& in) {
                         return json{{"entity", entity_of(in)},
                                     {"components", parse_component_names(in.all("COMPONENT"))}};
                     },
                 .completes = "components"});
    v.push_back(
        {.name = "despawn",
         .method = "world.despawn_entity",
         .summary = "destroy entities (several ids: all or none, in one request)",
         .args = {{"ID", "entity ids, as printed by spawn (e.g. 4294967296), or Names", arity::many}},
         .examples = {"ecsctl despawn 4294967296", "ecsctl despawn 4294967297 4294967298"},
         .params =
             [](const verb_input& in) {
                 const auto ids = in.all("ID");
                 if (ids.size() == 1) return json{{"entity", parse_entity_ref(ids[0])}};
                 json list = json::array();
                 for (const auto& id : ids) list.push_back(parse_entity_ref(id));
                 return json{{"entities", std::move(list)}};
             },
         // several ids: all or none, in one request
         .method_for =
             [](const verb_input& in) { return in.all("ID").size() == 1 ? "" : "world.despawn_entities"; }});
    v.push_back(
        {.name = "query",
         .method = "world.query",
         .summary = "find entities by components",
         .args = {{"QUERY",
                   "text form 'Position, !Frozen, ?Health, Health.hp < 50, near(hero, 5)' or a JSON object "
                   "{all, any, none, optional, added, changed, removed, died, near, where} (see below)",
                   arity::one, word_kind::query}},
         .options = {{"--fields",
                      "components to return, comma-separated (repeatable); their columns come in this order",
                      false, "NAMES", word_kind::name_list},
                     limit_opt,
                     offset_opt},
         .examples =
             {"ecsctl query 'Position, Velocity, !Frozen' --fields Position --limit 20",
              "ecsctl query 'Health, ?Name, Health.hp < 50'",
              R"(ecsctl query 'AI.kind == "boss", near(hero, 10)')", "ecsctl query died",
              R"(ecsctl query '{"all":["Position"],"none":["Frozen"]}')",
              R"(ecsctl query '{"where":[{"field":"Health.hp","op":"<","value":50}],"optional":["Name"]}')"},
         .details = query_language,
         .params =
             [](const verb_input& in) {
                 json params = query_params(in);
                 paging(in, params);
                 return params;
             },
         .completes = "components"});
    v.push_back(
        {.name = "watch",
         .method = "world.watch",
         .summary = "follow a query live: a table updated in place on a terminal, one JSON text per "
                    "notification otherwise; Ctrl-C unsubscribes",
         .args = {{"QUERY", "text form 'Position, Velocity, near(0, 0, 10)' or a JSON object, as for query",
                   arity::one, word_kind::query}},
         .options = {{"--fields", "components to carry, comma-separated (default: those the query names)",
                      false, "NAMES", word_kind::name_list},
                     {"--every", "at most one notification every N ticks (default 1)", false, "N"},
                     {"--count", "stop after N notifications (default: until Ctrl-C)", false, "N"}},
         .examples = {"ecsctl watch 'Position, Velocity'",
                      "ecsctl watch 'Position, !Frozen' --fields Position --every 10",
                      "ecsctl watch Position --count 3 | jq -c .changed",
                      "ecsctl --world arena watch 'Health, AI' --fields Health"},
         .details = query_language,
         .params =
             [](const verb_input& in) {
                 json params = query_params(in);
                 if (auto every = in.one("--every")) {
                     const auto n = parse_count(*every, "--every");
                     if (n == 0) {
                         throw usage_error("--every: must be at least 1");
                     }
                     params["every"] = n;
                 }
                 if (auto count = in.one("--count")) {
                     (void)parse_count(*count, "--count");  // the client's own: checked, never sent
                 }
                 return params;
             },
         .completes = "components",
         .streams = true});
    // --- components -------------------------------------------------------------------------------------
    v.push_back({.name = "components",
                 .method = "world.list_components",
                 .summary = "list component types with their schemas, or the components of entity ID",
                 .args = {{"ID", "entity id (default: all component types)", arity::optional}},
                 .examples = {"ecsctl components", "ecsctl components 4294967296"},
                 .params =
                     [](const verb_input& in) {
                         json params = json::object();
                         if (in.one("ID")) {
                             params["entity"] = entity_of(in);
                         }
                         return params;
                     },
                 .table_view = short_fields});
    v.push_back({.name = "register",
                 .method = "world.register_component",
                 .summary = "register a run-time component type (no fields: a tag)",
                 .args = {{"NAME", "component name: letters, digits and _", arity::one},
                          {"FIELD",
                           "field=DEFAULT (type inferred: number, bool, string, number[]) or "
                           "field='{\"type\":\"integer\",\"default\":10}'; or one JSON object of all fields",
                           arity::any}},
                 .examples = {"ecsctl register Mana points=0 regen=0.5",
                              R"(ecsctl register Team id='{"type":"integer","default":1}' name='"red"')",
                              R"(ecsctl register Vector2 '{"x":0,"y":0}')", "ecsctl register Marker"},
                 .params = [](const verb_input& in) {
                     const auto words = in.all("FIELD");
                     json fields = json::object();
                     if (words.size() == 1 && words.front().starts_with('{')) {
                         fields = parse_json(words.front(), "FIELDS");
                     } else {
                         fields = parse_components(words);
                     }
                     return json{{"name", in.one("NAME").value_or("")}, {"fields", fields}};
                 }});
    // --- systems and spells -----------------------------------------------------------------------------
    v.push_back({.name = "systems",
                 .method = "world.list_systems",
                 .summary = "list systems: phase, order, enabled, members, timing",
                 .examples = {"ecsctl systems"}});
    v.push_back({.name = "system-entities",
                 .method = "world.system_entities",
                 .summary = "entities a system currently works on",
                 .args = {{"SYSTEM", "system name, as listed by systems", arity::one, word_kind::name}},
                 .options = {limit_opt, offset_opt},
                 .examples = {"ecsctl system-entities movement",
                              "ecsctl system-entities collision_detection --limit 10"},
                 .params =
                     [](const verb_input& in) {
                         json params = {{"system", in.one("SYSTEM").value_or("")}};
                         paging(in, params);
                         return params;
                     },
                 .completes = "systems"});
    v.push_back({.name = "enable-system",
                 .method = "world.enable_system",
                 .summary = "enable a system",
                 .args = {{"SYSTEM", "system name", arity::one, word_kind::name}},
                 .examples = {"ecsctl enable-system movement"},
                 .params = system_param,
                 .completes = "systems"});
    v.push_back({.name = "disable-system",
                 .method = "world.disable_system",
                 .summary = "disable a system",
                 .args = {{"SYSTEM", "system name", arity::one, word_kind::name}},
                 .examples = {"ecsctl disable-system movement"},
                 .params = system_param,
                 .completes = "systems"});
    v.push_back({.name = "run-system",
                 .method = "world.run_system",
                 .summary = "run a system once, now",
                 .args = {{"SYSTEM", "system name", arity::one, word_kind::name}},
                 .examples = {"ecsctl run-system cleanup"},
                 .params = system_param,
                 .completes = "systems"});
    v.push_back(
        {.name = "system define",
         .method = "world.define_system",
         .summary = "define a system written in Lua 5.4 from FILE, or hot-reload the one of that name",
         .args = {{"NAME", "system name: letters, digits and _ (not a built-in's)", arity::one}},
         .options = {{"--file", "the Lua source (-: standard input); required", false, "FILE"},
                     {"--query", "the entities its w:each() walks, e.g. Health or 'AI, Position'; required",
                      false, "QUERY", word_kind::query},
                     {"--phase", "input, simulation (default), collision or post", false, "PHASE"},
                     {"--order", "its place within the phase, -1000 to 1000 (default 0)", false, "N"},
                     {"--every", "run on ticks divisible by N (default 1: every tick)", false, "N"}},
         .examples = {"ecsctl system define regen --query Health --file regen.lua",
                      "ecsctl system define chase --query 'AI, Position, Velocity' --phase simulation "
                      "--file chase.lua"},
         .details = "The chunk returns the function that runs once a tick: return function(w) ... end.\n"
                    "Defining NAME again replaces it from the next tick on (hot reload). A syntax error\n"
                    "names the file, line and column (chase.lua:3:5: ...) and changes nothing. The\n"
                    "script API, budgets and sandbox: docs/scripting.md.\n",
         .completes = "components",
         .drive = run_define_system});
    v.push_back({.name = "system rm",
                 .method = "world.remove_system",
                 .summary = "take a Lua system out of the pipeline (built-in systems stay)",
                 .args = {{"NAME", "system name, as listed by systems", arity::one, word_kind::name}},
                 .examples = {"ecsctl system rm regen"},
                 .params =
                     [](const verb_input& in) {
                         return json{{"name", in.one("NAME").value_or("")}};
                     },
                 .completes = "systems"});
    v.push_back({.name = "spells",
                 .method = "world.list_spells",
                 .summary = "list the spells",
                 .examples = {"ecsctl spells"}});
    v.push_back(
        {.name = "cast",
         .method = "world.cast_spell",
         .summary = "cast a spell; prints the tick it takes effect on",
         .args = {{"CASTER", "entity id (or Name) of the caster", arity::one},
                  {"SPELL", "spell name, as listed by spells", arity::one, word_kind::name},
                  {"TARGET", "entity id (or Name) of the target (default: the caster)", arity::optional}},
         .options = {{"--amount", "spell-specific strength, e.g. seconds for ghost, hp for heal", false,
                      "X"}},
         .examples = {"ecsctl cast 4294967296 freeze 4294967297", "ecsctl cast 4294967296 heal --amount 25",
                      "ecsctl cast 4294967296 kill_all_monsters"},
         .details = "A caster casts one spell per tick: a second before the next tick is refused\n"
                    "(limit_reached) and changes nothing; cast it after that tick (e.g. after `step`).\n",
         .params =
             [](const verb_input& in) {
                 json params = {{"caster", entity_of(in, "CASTER")}, {"spell", in.one("SPELL").value_or("")}};
                 if (in.one("TARGET")) {
                     params["target"] = entity_of(in, "TARGET");
                 }
                 if (auto a = in.one("--amount")) {
                     params["amount"] = parse_json(*a, "--amount");
                 }
                 return params;
             },
         .completes = "spells"});
    v.push_back({.name = "spell define",
                 .method = "world.define_spell",
                 .summary = "define (or replace) a spell written in Lua 5.4 from FILE; cast casts it",
                 .args = {{"NAME", "spell name: letters, digits and _ (not a built-in's)", arity::one}},
                 .options = {{"--file", "the Lua source (-: standard input); required", false, "FILE"}},
                 .examples = {"ecsctl spell define fireball --file fireball.lua"},
                 .details = "The chunk returns function(w, caster, target, amount): caster and target are\n"
                            "handles (nil when the entity is gone). A syntax error names the file, line\n"
                            "and column and changes nothing. docs/scripting.md has the API.\n",
                 .drive = run_define_spell});
    v.push_back({.name = "spell rm",
                 .method = "world.remove_spell",
                 .summary = "take a Lua spell out (built-in spells stay)",
                 .args = {{"NAME", "spell name, as listed by spells", arity::one, word_kind::name}},
                 .examples = {"ecsctl spell rm fireball"},
                 .params =
                     [](const verb_input& in) {
                         return json{{"name", in.one("NAME").value_or("")}};
                     },
                 .completes = "spells"});
    // --- actions ----------------------------------------------------------------------------------------
    v.push_back({.name = "actions",
                 .method = "world.list_actions",
                 .summary = "list the actions: name, calls applied and failed, the last failure",
                 .examples = {"ecsctl actions"}});
    v.push_back(
        {.name = "action define",
         .method = "world.define_action",
         .summary = "define (or replace) an action written in Lua 5.4 from FILE; action call calls it",
         .args = {{"NAME", "action name: letters, digits and _", arity::one}},
         .options = {{"--file", "the Lua source (-: standard input); required", false, "FILE"}},
         .examples = {"ecsctl action define move --file move.lua"},
         .details = "The chunk returns function(w, caller, args): caller is the calling identity,\n"
                    "args the call's ARGS. A syntax error names the file, line and column and\n"
                    "changes nothing. docs/scripting.md has the API and the ownership pattern.\n",
         .drive = run_define_action});
    v.push_back({.name = "action call",
                 .method = "world.call_action",
                 .summary = "call an action as the identity of --token; prints what it returns",
                 .args = {{"NAME", "action name, as listed by actions", arity::one, word_kind::name},
                          {"ARGS", "its args, one JSON value (default: none, nil in Lua)", arity::optional}},
                 .examples = {R"(ecsctl action call move '{"entity":4294967296,"dx":1,"dy":0}')",
                              "ecsctl action call whoami"},
                 .details = "It runs between two ticks, atomically: an action that raises answers\n"
                            "action_failed (exit 1) with its message and changes nothing. A player calling\n"
                            "faster than the server's --action-rate gets rate_limited.\n",
                 .params =
                     [](const verb_input& in) {
                         json params = {{"name", in.one("NAME").value_or("")}};
                         if (auto a = in.one("ARGS")) params["args"] = parse_json(*a, "ARGS");
                         return params;
                     },
                 .completes = "actions"});
    v.push_back({.name = "action rm",
                 .method = "world.remove_action",
                 .summary = "take an action out",
                 .args = {{"NAME", "action name, as listed by actions", arity::one, word_kind::name}},
                 .examples = {"ecsctl action rm move"},
                 .params =
                     [](const verb_input& in) {
                         return json{{"name", in.one("NAME").value_or("")}};
                     },
                 .completes = "actions"});
    // --- prefabs ----------------------------------------------------------------------------------------
    v.push_back(
        {.name = "prefab define",
         .method = "world.define_prefab",
         .summary = "define (or redefine) a prefab",
         .args = {{"NAME", "prefab name", arity::one},
                  {"COMPONENT", "Name=JSON, or a bare Name for defaults", arity::many,
                   word_kind::name_value}},
         .examples =
             {R"(ecsctl prefab define tree Position='{"x":0,"y":0}' Collider='{"radius":1}' Appearance='{"name":"tree"}')"},
         .params =
             [](const verb_input& in) {
                 return json{{"name", in.one("NAME").value_or("")},
                             {"components", parse_components(in.all("COMPONENT"))}};
             },
         .completes = "components"});
    v.push_back(
        {.name = "prefab spawn",
         .method = "world.spawn_prefab",
         .summary = "spawn COUNT entities from a prefab; prints their ids",
         .args = {{"NAME", "prefab name", arity::one, word_kind::name, "prefabs"},
                  {"OVERRIDE",
                   "Name=JSON components merged field by field into the prefab's (a new one is added)",
                   arity::any, word_kind::name_value}},
         .options = {{"--count", "how many (default 1)", false, "N"}},
         .examples = {"ecsctl prefab spawn tree",
                      R"(ecsctl prefab spawn tree --count 10 Position='{"x":5,"y":0}')"},
         .params =
             [](const verb_input& in) {
                 json params = {{"name", in.one("NAME").value_or("")}};
                 if (auto n = in.one("--count")) {
                     params["count"] = parse_count(*n, "--count");
                 }
                 if (!in.all("OVERRIDE").empty()) {
                     params["overrides"] = parse_components(in.all("OVERRIDE"));
                 }
                 return params;
             },
         .completes = "components"});
    v.push_back({.name = "prefab list",
                 .method = "world.list_prefabs",
                 .summary = "list the prefabs with their components",
                 .examples = {"ecsctl prefab list"}});
    // --- persistence (needs ecsd --data-dir) ---------------------------------------------------------
    v.push_back(
        {.name = "save",
         .method = "world.save",
         .summary = "write the world's snapshot now (the server needs --data-dir)",
         .options = {{"--format",
                      "binary, zstd (binary, compressed) or json; default: the server's --snapshot-format",
                      false, "FORMAT"}},
         .examples = {"ecsctl save", "ecsctl --world arena save", "ecsctl save --format json"},
         .params = [](const verb_input& in) {
             json params = json::object();
             if (auto f = in.one("--format")) params["format"] = *f;
             return params;
         }});
    v.push_back({.name = "load",
                 .method = "world.load",
                 .summary = "replace the world with its snapshot and journal, as a restart would",
                 .examples = {"ecsctl load", "ecsctl --world arena load"}});
    return v;
}

}  // namespace

const std::vector<verb>& verbs() {
    static const std::vector<verb> table = make_verbs();
    return table;
}

const verb* find_verb(std::string_view name) {
    const auto& table = verbs();
    const auto it = std::find_if(table.begin(), table.end(), [&](const verb& v) { return v.name == name; });
    return it == table.end() ? nullptr : &*it;
}

std::vector<std::string> requested_columns(const request& req) {
    std::vector<std::string> names;
    const auto fields = req.params.find("fields");  // end() unless params is an object holding it
    if (fields != req.params.end() && fields->is_array()) {
        for (const auto& name : *fields) {
            if (name.is_string()) {
                names.push_back(name.get<std::string>());
            }
        }
    }
    return names;
}

void apply_world(request& req, const std::optional<std::string>& world) {
    if (!world || !req.method.starts_with("world.") || req.method == "world.list") {
        return;
    }
    if (req.params.is_null()) {
        req.params = json::object();
    }
    if (req.params.is_object() && !req.params.contains("world")) {
        req.params["world"] = *world;
    }
}

}  // namespace ecsd::cli
