#pragma once

// A session: the connection, the chosen world, the output format and the script variables, plus running
// one verb or one script/shell line against them and reporting errors with the right exit code.

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "errors.hpp"
#include "line_parser.hpp"
#include "output.hpp"
#include "rpc_client.hpp"
#include "verbs.hpp"

namespace ecsd::cli {

/// @brief Everything one ecsctl run shares between its commands.
struct session {
    rpc_client client;
    std::optional<std::string> world;  ///< added to world.* params (--world, ECSD_WORLD, `use`)
    output_format format = output_format::json_lines;
    variables vars;
    std::ostream* out = nullptr;
    std::ostream* err = nullptr;
    /// @brief How tables show values: --precision, `-o wide`, and the component column order of the
    ///        request being printed (requested_columns, set by run_verb).
    table_options tables;
};

/// @brief Builds, sends and reshapes one verb's request; returns the result to print.
/// @throws usage_error, server_error, connection_error
[[nodiscard]] json run_verb(session& s, const verb& v, const verb_input& input);

/// @brief The text printed for a verb's result in the session's format (ends with '\n').
[[nodiscard]] std::string present(const session& s, const verb& v, const json& result);

/// @brief Runs `f` and turns what it throws into a message on `s.err` (prefixed with `where`, e.g.
///        "ecsctl" or "setup.ecs:3") and an exit code.
exit_code guarded(session& s, std::string_view where, const std::function<void()>& f);

/// @brief The local commands of scripts and the shell (run_line handles them; not sent to the server),
///        for help and docs that must list every one.
[[nodiscard]] std::span<const std::string_view> local_command_names() noexcept;

/// @brief What a line asked for beyond its exit code.
enum class line_effect { none, quit };

/// @brief Runs one line like run_line but throws what it fails with (usage_error, server_error,
///        connection_error, expectation_failed) instead of printing it.
void execute_line(session& s, std::string_view line, bool interactive, line_effect* effect = nullptr);

/// @brief N of `repeat N ...` (words[1], after substitution): a whole number up to 1,000,000.
/// @throws usage_error otherwise.
[[nodiscard]] std::uint64_t repeat_count(const std::vector<std::string>& words, const variables& vars);

/// @brief Runs one script or shell line: `#` comments, `$var = VERB ...`, variable substitution, the
///        local commands (help, use, vars, echo, expect, repeat, sleep, exit) and any verb. Errors are
///        printed with `where`.
/// @param interactive in the shell an assignment echoes the stored value; in a script it prints nothing.
exit_code run_line(session& s, std::string_view line, std::string_view where, bool interactive,
                   line_effect* effect = nullptr);

}  // namespace ecsd::cli
