#pragma once

// The verb table: one row per ecsctl verb with its arguments, options, examples and the JSON-RPC request
// it builds (the method named once, in the row). The command line, script lines, the interactive shell,
// completion and `help` all read it.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"
#include "output.hpp"

namespace ecsd::cli {

struct session;

/// @brief How many words a positional argument takes.
enum class arity {
    one,       ///< exactly one, required
    optional,  ///< zero or one
    many,      ///< one or more
    any,       ///< zero or more
};

/// @brief What the interactive shell offers when a word is completed.
enum class word_kind {
    none,        ///< nothing: ids, numbers, JSON, new names
    name,        ///< a name from a server list (the verb's `completes`, or the argument's own `list`)
    name_list,   ///< comma-separated names (`--fields Position,Velocity`)
    name_value,  ///< `Name=JSON`: the name is completed without a blank after it, so `=` can follow
    query,       ///< query text: component names after `'`, `,`, `!`, `?`, `|`, `(`, inside quotes too
};

/// @brief A positional argument of a verb.
struct positional_spec {
    std::string_view name;  ///< upper-case placeholder shown in help, e.g. "ID"
    std::string_view help;
    arity count = arity::one;
    word_kind completion = word_kind::none;
    std::string_view list = {};  ///< the server list its names come from when not the verb's `completes`
};

/// @brief An option of a verb (`--limit N`) or a flag (`--paused`).
struct option_spec {
    std::string_view name;  ///< with its dashes, e.g. "--limit"
    std::string_view help;
    bool is_flag = false;
    std::string_view value_name = "VALUE";
    word_kind completion = word_kind::none;  ///< of its value, with names from the verb's `completes`
};

/// @brief The words a verb was given, by positional or option name.
struct verb_input {
    std::map<std::string, std::vector<std::string>, std::less<>> values;
    std::set<std::string, std::less<>> flags;

    /// @brief The single value of `name`, if given.
    [[nodiscard]] std::optional<std::string> one(std::string_view name) const;
    /// @brief All values of `name` (empty when not given).
    [[nodiscard]] std::span<const std::string> all(std::string_view name) const;
    /// @brief True when the flag `name` was given.
    [[nodiscard]] bool flag(std::string_view name) const { return flags.contains(name); }
};

/// @brief A JSON-RPC call to make.
struct request {
    std::string method;
    json params = json::object();
};

/// @brief One verb: a row of the table. Rows use designated initializers and name only what they need.
struct verb {
    std::string_view name;     ///< "spawn", or "world create" for a verb inside a group
    std::string_view method;   ///< the JSON-RPC method it calls, also shown by help ("" for `call`)
    std::string_view summary;  ///< one line
    std::vector<positional_spec> args = {};
    std::vector<option_spec> options = {};
    std::vector<std::string_view> examples = {};  ///< full command lines, shown by `VERB --help`
    /// @brief More reference for `VERB --help`, shown before the method and the examples (e.g. the
    ///        query language for `query` and `watch`); lines end in '\n'.
    std::string_view details = {};
    /// @brief The params of its request, from its words; throws usage_error. Unset: no params ({}).
    std::function<json(const verb_input&)> params = {};
    /// @brief For a verb whose words choose the method (`spawn --count`, `despawn` of several ids, `call`):
    ///        the method to call, or "" for `method`. Unset: always `method`.
    std::function<std::string(const verb_input&)> method_for = {};
    /// @brief Optional reshaping of the result before it is printed (both formats).
    std::function<json(const json&)> shape = {};
    /// @brief The server list its words' names come from: "components", "systems", "spells", "methods",
    ///        "worlds", "prefabs" or "" (each argument's `completion` says which words take them).
    std::string_view completes = {};
    /// @brief Optional reshaping for tables only (JSON output keeps the server's result).
    std::function<json(const json&)> table_view = {};
    /// @brief Optional text of the result as a table, instead of render()'s (`info`'s two tables).
    std::function<std::string(const json&, const table_options&)> table_text = {};
    /// @brief True for a verb that opens a stream (`watch`): its request answers once, then
    ///        notifications follow until the client stops; run_stream (watch.hpp) drives it.
    bool streams = false;
    /// @brief For a verb that makes several calls, possibly to more than one server (`world move`):
    ///        runs them and returns the result to print. `method` is then the first call, for help.
    std::function<json(session&, const verb_input&)> drive = {};

    /// @brief The JSON-RPC call its words make: `method_for`'s method, else `method`, with `params`'s
    ///        params. Throws usage_error.
    [[nodiscard]] request build(const verb_input& in) const;
};

/// @brief Every verb, in the order help lists them.
[[nodiscard]] const std::vector<verb>& verbs();

/// @brief The verb called `name` ("spawn", "world create"), or nullptr.
[[nodiscard]] const verb* find_verb(std::string_view name);

/// @brief The order a request asks its table's component columns to take: the names of its `fields`
///        param (`query --fields Velocity,Position`), else none.
[[nodiscard]] std::vector<std::string> requested_columns(const request& req);

/// @brief Adds `params.world` to a world.* request (except world.list) when a world was chosen and the
///        params name none.
void apply_world(request& req, const std::optional<std::string>& world);

}  // namespace ecsd::cli
