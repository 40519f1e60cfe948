#pragma once

// Pure parsing of script and interactive lines: words, quotes, comments, `$var = ...` assignments
// and variable substitution. No I/O; unit-tested.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"

namespace ecsd::cli {

/// @brief Variables of a script or interactive session, by name without the `$`.
using variables = std::map<std::string, json, std::less<>>;

/// @brief One line split into words, with the variable it assigns to, if any.
struct parsed_line {
    /// @brief Name (without `$`) when the line reads `$name = VERB ...`.
    std::optional<std::string> assign_to;
    /// @brief The command's words, quotes removed, variables not yet substituted.
    std::vector<std::string> words;
};

/// @brief Splits a line into words like a small shell: blanks separate words, '...' keeps everything
///        literally, "..." honours \" and \\, a backslash outside quotes escapes the next character,
///        and `#` at the start of a word begins a comment.
/// @throws usage_error on an unterminated quote or a trailing backslash.
[[nodiscard]] std::vector<std::string> split_words(std::string_view line);

/// @brief The raw text of `line` after its first `n` words (blank-separated, no quotes in them),
///        with leading blanks removed: what `repeat N COMMAND` repeats.
[[nodiscard]] std::string_view words_after(std::string_view line, std::size_t n) noexcept;

/// @brief Splits a line and recognises `$name = VERB ...`; an empty or comment-only line has no words.
/// @throws usage_error on a malformed assignment (bad name, nothing after `=`).
[[nodiscard]] parsed_line parse_line(std::string_view line);

/// @brief Replaces `$name`, `${name}` and `${name.path.0}` in a word with the variable's value: strings
///        and numbers as their plain text, anything else as compact JSON. `$$` is a literal `$`.
/// @throws usage_error on an undefined variable or a path that does not exist.
[[nodiscard]] std::string substitute(std::string_view word, const variables& vars);

/// @brief True when the words after `$name =` are arithmetic rather than a command: the first starts
///        with a digit, `.`, `$`, `(`, `-` or `+`, which no verb or local command does.
[[nodiscard]] bool is_expression(const std::vector<std::string>& words) noexcept;

/// @brief The value of `$name = EXPRESSION` (the words after `=`): numbers, variables (`$i`, `${r.total}`)
///        holding numbers, `+ - * /`, unary minus and parentheses, with the usual precedence. Integers
///        stay exact while they can (`$i * 2`); a whole result is stored as an integer (`0.5 * 4` is 2),
///        any other as a double. A lone variable (`$copy = $orig`) is copied whatever it holds.
/// @throws usage_error on a syntax error, a variable that is undefined or not a number, division by
///         zero, or a result that is not finite.
[[nodiscard]] json evaluate(const std::vector<std::string>& words, const variables& vars);

/// @brief The value a `$var = VERB` line stores: the entity id when the result is an object with an
///        integer `entity` member (spawn, cast), otherwise the whole result.
[[nodiscard]] json value_to_store(const json& result);

/// @brief True when `name` is a valid variable name: a letter or `_`, then letters, digits or `_`.
[[nodiscard]] bool valid_variable_name(std::string_view name) noexcept;

}  // namespace ecsd::cli
