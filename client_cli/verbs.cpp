#include "verbs.hpp"

#include <algorithm>

#include "args.hpp"
#include "errors.hpp"

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

namespace {

// Shorthands for the table below.
const positional_spec id_arg{
    "ID", "entity id, as printed by spawn (e.g. 4294967296), or its Name (e.g. hero)", arity::one};
const option_spec limit_opt{"--limit", "return at most N rows", false, "N"};
const option_spec offset_opt{"--offset", "skip the first N rows", false, "N"};

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

request simple(std::string_view method) {
    return {std::string(method), json::object()};
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
    v.push_back({"ping",
                 "server.ping",
                 "check that the server answers (exit 0 only then)",
                 {},
                 {},
                 {"ecsctl ping", "ecsctl --port 7778 ping || echo down"},
                 [](const verb_input&) { return simple("server.ping"); },
                 {},
                 ""});
    v.push_back({"info",
                 "server.info",
                 "server version, uptime, connections, worlds and limits",
                 {},
                 {},
                 {"ecsctl info", "ecsctl info --json | jq .version"},
                 [](const verb_input&) { return simple("server.info"); },
                 {},
                 ""});
    v.push_back({"methods",
                 "rpc.discover",
                 "list the server's methods (from its OpenRPC document)",
                 {},
                 {},
                 {"ecsctl methods", "ecsctl call rpc.discover   # the whole document"},
                 [](const verb_input&) { return simple("rpc.discover"); },
                 method_rows,
                 ""});
    v.push_back({"call",
                 "",
                 "call any method with raw JSON params",
                 {{"METHOD", "JSON-RPC method name, e.g. world.info", arity::one, word_kind::name},
                  {"PARAMS", "params as one JSON object or array (default: none)", arity::optional}},
                 {},
                 {"ecsctl call server.ping", R"(ecsctl call world.query '{"query":"Position","limit":5}')",
                  R"(ecsctl call world.spawn_entities '{"entities":[{"Position":{}},{"Position":{}}]}')"},
                 [](const verb_input& in) {
                     request r{in.one("METHOD").value_or(""), nullptr};
                     if (auto p = in.one("PARAMS")) {
                         r.params = parse_json(*p, "PARAMS");
                         if (!r.params.is_object() && !r.params.is_array()) {
                             throw usage_error("PARAMS must be a JSON object or array");
                         }
                     }
                     return r;
                 },
                 {},
                 "methods"});
    // --- worlds -----------------------------------------------------------------------------------------
    v.push_back({"worlds",
                 "world.list",
                 "list the worlds",
                 {},
                 {},
                 {"ecsctl worlds"},
                 [](const verb_input&) { return simple("world.list"); },
                 {},
                 ""});
    v.push_back(
        {"world create",
         "world.create",
         "create a world",
         {{"NAME", "name of the new world", arity::one}},
         {{"--tick-hz", "ticks per second", false, "HZ"},
          {"--gravity", "gravity as JSON, e.g. '{\"x\":0,\"y\":-9.81}'", false, "JSON"},
          {"--bounds", "edges as JSON, e.g. '{\"bottom\":0,\"left\":-50,\"right\":50}' (a ground and walls)",
           false, "JSON"},
          {"--paused", "create it paused", true, ""}},
         {"ecsctl world create arena", "ecsctl world create lab --tick-hz 30 --paused",
          "ecsctl world create box --bounds '{\"bottom\":0,\"left\":-20,\"right\":20}'"},
         [](const verb_input& in) {
             request r{"world.create", {{"world", in.one("NAME").value_or("")}}};
             if (auto hz = in.one("--tick-hz")) {
                 r.params["tick_hz"] = parse_json(*hz, "--tick-hz");
             }
             if (auto g = in.one("--gravity")) {
                 r.params["gravity"] = parse_json(*g, "--gravity");
             }
             if (auto b = in.one("--bounds")) {
                 r.params["bounds"] = parse_json(*b, "--bounds");
             }
             if (in.flag("--paused")) {
                 r.params["paused"] = true;
             }
             return r;
         },
         {},
         ""});
    v.push_back({"world destroy",
                 "world.destroy",
                 "destroy a world and everything in it",
                 {{"NAME", "world to destroy", arity::one, word_kind::name}},
                 {},
                 {"ecsctl world destroy arena"},
                 [](const verb_input& in) {
                     return request{"world.destroy", {{"world", in.one("NAME").value_or("")}}};
                 },
                 {},
                 "worlds"});
    v.push_back(
        {"world info",
         "world.info",
         "tick, tick rate, paused, entity count, overruns of a world",
         {{"NAME", "world (default: --world, else the server's default)", arity::optional, word_kind::name}},
         {},
         {"ecsctl world info", "ecsctl world info arena"},
         [](const verb_input& in) {
             request r = simple("world.info");
             if (auto w = in.one("NAME")) {
                 r.params["world"] = *w;
             }
             return r;
         },
         {},
         "worlds"});
    v.push_back({"pause",
                 "world.pause",
                 "stop the world's ticking (step still works)",
                 {},
                 {},
                 {"ecsctl pause", "ecsctl --world arena pause"},
                 [](const verb_input&) { return simple("world.pause"); },
                 {},
                 ""});
    v.push_back({"resume",
                 "world.resume",
                 "resume ticking at the world's rate",
                 {},
                 {},
                 {"ecsctl resume"},
                 [](const verb_input&) { return simple("world.resume"); },
                 {},
                 ""});
    v.push_back(
        {"step",
         "world.step",
         "advance the world by TICKS ticks now; prints the new tick",
         {{"TICKS", "number of ticks (default 1)", arity::optional}},
         {},
         {"ecsctl step", "ecsctl step 60"},
         [](const verb_input& in) {
             return request{"world.step", {{"ticks", parse_count(in.one("TICKS").value_or("1"), "TICKS")}}};
         },
         {},
         ""});
    v.push_back({"slowlog",
                 "server.slowlog",
                 "the slowest recent requests (handler time of at least ecsd's --slowlog-us), newest first",
                 {},
                 {{"--count", "how many (default 10)", false, "N"},
                  {"--reset", "empty the log after showing it", true, ""}},
                 {"ecsctl slowlog", "ecsctl slowlog --count 50 --reset"},
                 [](const verb_input& in) {
                     request r{"server.slowlog", json::object()};
                     if (auto n = in.one("--count")) r.params["count"] = parse_count(*n, "--count");
                     if (in.flag("--reset")) r.params["reset"] = true;
                     return r;
                 },
                 {},
                 ""});
    v.push_back({"hash",
                 "world.hash",
                 "hash of the world's state at the current tick",
                 {},
                 {},
                 {"ecsctl hash", "ecsctl step 10 && ecsctl hash"},
                 [](const verb_input&) { return simple("world.hash"); },
                 {},
                 ""});
    // --- entities ---------------------------------------------------------------------------------------
    v.push_back(
        {"spawn",
         "world.spawn_entity",
         "create an entity with components; prints its id",
         {{"COMPONENT", "Name=JSON, or a bare Name for the component's defaults", arity::any,
           word_kind::name_value}},
         {{"--count", "create N alike entities at once (world.spawn_entities); prints their ids", false, "N"},
          {"--name", "give it a Name, unique in the world, usable wherever an id is (get hero)", false,
           "NAME"}},
         {R"(ecsctl spawn Position='{"x":0,"y":10}' Velocity='{"x":1,"y":0}' )"
          R"(RigidBody Collider='{"radius":0.5}')",
          R"(ecsctl spawn Position='{"x":3,"y":0}' Health='{"hp":10}' AI)",
          "ecsctl spawn --name hero Position Health Player", "ecsctl spawn --count 1000 Position Velocity"},
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
                 return request{"world.spawn_entities",
                                {{"entities", json::array_t(static_cast<std::size_t>(count), components)}}};
             }
             return request{"world.spawn_entity", {{"components", std::move(components)}}};
         },
         {},
         "components"});
    v.push_back({"get",
                 "world.get_components",
                 "show an entity's components (all, or the named ones)",
                 {id_arg, {"COMPONENT", "component names (default: all)", arity::any, word_kind::name}},
                 {},
                 {"ecsctl get 4294967296", "ecsctl get 4294967296 Position Velocity"},
                 [](const verb_input& in) {
                     request r{"world.get_components", {{"entity", entity_of(in)}}};
                     if (!in.all("COMPONENT").empty()) {
                         r.params["components"] = parse_component_names(in.all("COMPONENT"));
                     }
                     return r;
                 },
                 {},
                 "components"});
    v.push_back(
        {"describe",
         "world.describe_entity",
         "one entity for debugging: its components, the systems that work on it, what changed this tick",
         {id_arg},
         {},
         {"ecsctl describe 4294967296", "ecsctl describe 4294967296 --json | jq .systems"},
         [](const verb_input& in) {
             return request{"world.describe_entity", {{"entity", entity_of(in)}}};
         },
         {},
         "",
         description_view});
    v.push_back(
        {"insert",
         "world.insert_components",
         "add components to an entity, or replace them",
         {id_arg,
          {"COMPONENT", "Name=JSON, or a bare Name for defaults", arity::many, word_kind::name_value}},
         {},
         {R"(ecsctl insert 4294967296 Velocity='{"x":0,"y":-1}' Frozen)"},
         [](const verb_input& in) {
             return request{
                 "world.insert_components",
                 {{"entity", entity_of(in)}, {"components", parse_components(in.all("COMPONENT"))}}};
         },
         {},
         "components"});
    v.push_back({"mutate",
                 "world.mutate_components",
                 "change one field of one component",
                 {id_arg,
                  {"COMPONENT", "component name", arity::one, word_kind::name},
                  {"PATH", "field path inside the component, e.g. x", arity::one},
                  {"VALUE", "new value as JSON", arity::one}},
                 {},
                 {"ecsctl mutate 4294967296 Position y 25.5"},
                 [](const verb_input& in) {
                     return request{"world.mutate_components",
                                    {{"entity", entity_of(in)},
                                     {"component", in.one("COMPONENT").value_or("")},
                                     {"path", in.one("PATH").value_or("")},
                                     {"value", parse_json(in.one("VALUE").value_or(""), "VALUE")}}};
                 },
                 {},
                 "components"});
    v.push_back({"remove",
                 "world.remove_components",
                 "remove components from an entity",
                 {id_arg, {"COMPONENT", "component names", arity::many, word_kind::name}},
                 {},
                 {"ecsctl remove 4294967296 Velocity", "ecsctl remove 4294967296 Frozen Ghost"},
                 [](const verb_input& in) {
                     return request{"world.remove_components",
                                    {{"entity", entity_of(in)},
                                     {"components", parse_component_names(in.all("COMPONENT"))}}};
                 },
                 {},
                 "components"});
    v.push_back({"despawn",
                 "world.despawn_entity",
                 "destroy entities (several ids: all or none, in one request)",
                 {{"ID", "entity ids, as printed by spawn (e.g. 4294967296), or Names", arity::many}},
                 {},
                 {"ecsctl despawn 4294967296", "ecsctl despawn 4294967296 4294967297"},
                 [](const verb_input& in) {
                     const auto ids = in.all("ID");
                     if (ids.size() == 1)
                         return request{"world.despawn_entity", {{"entity", parse_entity_ref(ids[0])}}};
                     json list = json::array();
                     for (const auto& id : ids) list.push_back(parse_entity_ref(id));
                     return request{"world.despawn_entities", {{"entities", std::move(list)}}};
                 },
                 {},
                 ""});
    v.push_back(
        {"query",
         "world.query",
         "find entities by components",
         {{"QUERY",
           "text form 'Position, Velocity, !Frozen, ?Health' or a JSON object "
           "{all, any, none, added, changed, removed}",
           arity::one, word_kind::query}},
         {{"--fields", "components to return, comma-separated (repeatable); their columns come in this order",
           false, "NAMES", word_kind::name_list},
          limit_opt,
          offset_opt},
         {"ecsctl query 'Position, Velocity, !Frozen' --fields Position --limit 20",
          R"(ecsctl query '{"all":["Position"],"none":["Frozen"]}')"},
         [](const verb_input& in) {
             request r{"world.query", query_params(in)};
             paging(in, r.params);
             return r;
         },
         {},
         "components"});
    v.push_back({"watch",
                 "world.watch",
                 "follow a query live: a table updated in place on a terminal, one JSON text per "
                 "notification otherwise; Ctrl-C unsubscribes",
                 {{"QUERY", "text form 'Position, Velocity, near(0, 0, 10)' or a JSON object, as for query",
                   arity::one, word_kind::query}},
                 {{"--fields", "components to carry, comma-separated (default: those the query names)", false,
                   "NAMES", word_kind::name_list},
                  {"--every", "at most one notification every N ticks (default 1)", false, "N"},
                  {"--count", "stop after N notifications (default: until Ctrl-C)", false, "N"}},
                 {"ecsctl watch 'Position, Velocity'",
                  "ecsctl watch 'Position, !Frozen' --fields Position --every 10",
                  "ecsctl watch Position --count 3 | jq -c .changed",
                  "ecsctl --world arena watch 'Health, AI' --fields Health"},
                 [](const verb_input& in) {
                     request r{"world.watch", query_params(in)};
                     if (auto every = in.one("--every")) {
                         const auto n = parse_count(*every, "--every");
                         if (n == 0) {
                             throw usage_error("--every: must be at least 1");
                         }
                         r.params["every"] = n;
                     }
                     if (auto count = in.one("--count")) {
                         (void)parse_count(*count, "--count");  // the client's own: checked, never sent
                     }
                     return r;
                 },
                 {},
                 "components",
                 {},
                 /*streams=*/true});
    // --- components -------------------------------------------------------------------------------------
    v.push_back({"components",
                 "world.list_components",
                 "list component types with their schemas, or the components of entity ID",
                 {{"ID", "entity id (default: all component types)", arity::optional}},
                 {},
                 {"ecsctl components", "ecsctl components 4294967296"},
                 [](const verb_input& in) {
                     request r = simple("world.list_components");
                     if (in.one("ID")) {
                         r.params["entity"] = entity_of(in);
                     }
                     return r;
                 },
                 {},
                 "",
                 short_fields});
    v.push_back({"register",
                 "world.register_component",
                 "register a run-time component type (no fields: a tag)",
                 {{"NAME", "component name: letters, digits and _", arity::one},
                  {"FIELD",
                   "field=DEFAULT (type inferred: number, bool, string, number[]) or "
                   "field='{\"type\":\"integer\",\"default\":10}'; or one JSON object of all fields",
                   arity::any}},
                 {},
                 {"ecsctl register Mana points=0 regen=0.5",
                  R"(ecsctl register Team id='{"type":"integer","default":1}' name='"red"')",
                  R"(ecsctl register Vector2 '{"x":0,"y":0}')", "ecsctl register Marker"},
                 [](const verb_input& in) {
                     const auto words = in.all("FIELD");
                     json fields = json::object();
                     if (words.size() == 1 && words.front().starts_with('{')) {
                         fields = parse_json(words.front(), "FIELDS");
                     } else {
                         fields = parse_components(words);
                     }
                     return request{"world.register_component",
                                    {{"name", in.one("NAME").value_or("")}, {"fields", fields}}};
                 },
                 {},
                 ""});
    // --- systems and spells -----------------------------------------------------------------------------
    v.push_back({"systems",
                 "world.list_systems",
                 "list systems: phase, order, enabled, members, timing",
                 {},
                 {},
                 {"ecsctl systems"},
                 [](const verb_input&) { return simple("world.list_systems"); },
                 {},
                 ""});
    v.push_back({"system-entities",
                 "world.system_entities",
                 "entities a system currently works on",
                 {{"SYSTEM", "system name, as listed by systems", arity::one, word_kind::name}},
                 {limit_opt, offset_opt},
                 {"ecsctl system-entities movement", "ecsctl system-entities collision_detection --limit 10"},
                 [](const verb_input& in) {
                     request r{"world.system_entities", {{"system", in.one("SYSTEM").value_or("")}}};
                     paging(in, r.params);
                     return r;
                 },
                 {},
                 "systems"});
    v.push_back({"enable-system",
                 "world.enable_system",
                 "enable a system",
                 {{"SYSTEM", "system name", arity::one, word_kind::name}},
                 {},
                 {"ecsctl enable-system movement"},
                 [](const verb_input& in) {
                     return request{"world.enable_system", {{"system", in.one("SYSTEM").value_or("")}}};
                 },
                 {},
                 "systems"});
    v.push_back({"disable-system",
                 "world.disable_system",
                 "disable a system",
                 {{"SYSTEM", "system name", arity::one, word_kind::name}},
                 {},
                 {"ecsctl disable-system movement"},
                 [](const verb_input& in) {
                     return request{"world.disable_system", {{"system", in.one("SYSTEM").value_or("")}}};
                 },
                 {},
                 "systems"});
    v.push_back({"run-system",
                 "world.run_system",
                 "run a system once, now",
                 {{"SYSTEM", "system name", arity::one, word_kind::name}},
                 {},
                 {"ecsctl run-system cleanup"},
                 [](const verb_input& in) {
                     return request{"world.run_system", {{"system", in.one("SYSTEM").value_or("")}}};
                 },
                 {},
                 "systems"});
    v.push_back({"spells",
                 "world.list_spells",
                 "list the spells",
                 {},
                 {},
                 {"ecsctl spells"},
                 [](const verb_input&) { return simple("world.list_spells"); },
                 {},
                 ""});
    v.push_back({"cast",
                 "world.cast_spell",
                 "cast a spell; prints the tick it takes effect on",
                 {{"CASTER", "entity id (or Name) of the caster", arity::one},
                  {"SPELL", "spell name, as listed by spells", arity::one, word_kind::name},
                  {"TARGET", "entity id (or Name) of the target (default: the caster)", arity::optional}},
                 {{"--amount", "spell-specific strength, e.g. seconds for ghost, hp for heal", false, "X"}},
                 {"ecsctl cast 4294967296 kill_all_monsters", "ecsctl cast 4294967296 freeze 4294967297",
                  "ecsctl cast 4294967296 heal --amount 25"},
                 [](const verb_input& in) {
                     request r{
                         "world.cast_spell",
                         {{"caster", entity_of(in, "CASTER")}, {"spell", in.one("SPELL").value_or("")}}};
                     if (in.one("TARGET")) {
                         r.params["target"] = entity_of(in, "TARGET");
                     }
                     if (auto a = in.one("--amount")) {
                         r.params["amount"] = parse_json(*a, "--amount");
                     }
                     return r;
                 },
                 {},
                 "spells"});
    // --- prefabs ----------------------------------------------------------------------------------------
    v.push_back(
        {"prefab define",
         "world.define_prefab",
         "define (or redefine) a prefab",
         {{"NAME", "prefab name", arity::one},
          {"COMPONENT", "Name=JSON, or a bare Name for defaults", arity::many, word_kind::name_value}},
         {},
         {R"(ecsctl prefab define tree Position='{"x":0,"y":0}' Collider='{"radius":1}' Static)"},
         [](const verb_input& in) {
             return request{"world.define_prefab",
                            {{"name", in.one("NAME").value_or("")},
                             {"components", parse_components(in.all("COMPONENT"))}}};
         },
         {},
         "components"});
    v.push_back(
        {"prefab spawn",
         "world.spawn_prefab",
         "spawn COUNT entities from a prefab; prints their ids",
         {{"NAME", "prefab name", arity::one, word_kind::name, "prefabs"},
          {"OVERRIDE", "Name=JSON components merged field by field into the prefab's (a new one is added)",
           arity::any, word_kind::name_value}},
         {{"--count", "how many (default 1)", false, "N"}},
         {"ecsctl prefab spawn tree", R"(ecsctl prefab spawn tree --count 10 Position='{"x":5,"y":0}')"},
         [](const verb_input& in) {
             request r{"world.spawn_prefab", {{"name", in.one("NAME").value_or("")}}};
             if (auto n = in.one("--count")) {
                 r.params["count"] = parse_count(*n, "--count");
             }
             if (!in.all("OVERRIDE").empty()) {
                 r.params["overrides"] = parse_components(in.all("OVERRIDE"));
             }
             return r;
         },
         {},
         "components"});
    v.push_back({"prefab list",
                 "world.list_prefabs",
                 "list the prefabs with their components",
                 {},
                 {},
                 {"ecsctl prefab list"},
                 [](const verb_input&) { return simple("world.list_prefabs"); },
                 {},
                 ""});
    // --- persistence (needs ecsd --data-dir) ---------------------------------------------------------
    v.push_back({"save",
                 "world.save",
                 "write the world's snapshot now (the server needs --data-dir)",
                 {},
                 {},
                 {"ecsctl save", "ecsctl --world arena save"},
                 [](const verb_input&) { return simple("world.save"); },
                 {},
                 ""});
    v.push_back({"load",
                 "world.load",
                 "replace the world with its snapshot and journal, as a restart would",
                 {},
                 {},
                 {"ecsctl load", "ecsctl --world arena load"},
                 [](const verb_input&) { return simple("world.load"); },
                 {},
                 ""});
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
