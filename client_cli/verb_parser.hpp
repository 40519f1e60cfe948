#pragma once

// Turns the verb table into CLI11 subcommands (groups such as `world` become nested subcommands), so the
// command line, script lines and the interactive shell parse verbs, and print `VERB --help`, the same way.

#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "verbs.hpp"

namespace ecsd::cli {

/// @brief Adds every verb of the table to a CLI11 app and, after parsing, says which one was chosen.
class verb_parser {
  public:
    /// @brief Registers the verbs as subcommands of `app`, which must outlive this object.
    explicit verb_parser(CLI::App& app);
    verb_parser(const verb_parser&) = delete;
    verb_parser& operator=(const verb_parser&) = delete;

    /// @brief The verb the parsed words named, or nullptr when none did.
    [[nodiscard]] const verb* selected() const;

    /// @brief Its words; valid after parsing.
    [[nodiscard]] const verb_input& input() const;

  private:
    struct entry {
        CLI::App* app = nullptr;
        const verb* row = nullptr;
        verb_input* input = nullptr;
    };
    std::deque<verb_input> inputs_;  // a deque: CLI11 keeps pointers into the elements
    std::vector<entry> entries_;
};

/// @brief Builds the help footer of a verb: what it calls and its examples.
[[nodiscard]] std::string verb_footer(const verb& v);

/// @brief Parses one script or shell line's words with a fresh app holding only the verbs; prints help
///        to `out` and returns nullptr for `VERB --help`.
/// @throws usage_error for words that name no verb or do not fit it.
struct parsed_words {
    const verb* row = nullptr;  ///< nullptr when help was printed
    verb_input input;
};
[[nodiscard]] parsed_words parse_words(const std::vector<std::string>& words, std::ostream& out);

/// @brief The message for words that name no verb, or nullopt when they do (or start with an option):
///        `unknown verb 'spwan'; did you mean 'spawn'? (help lists them)`, `unknown verb 'world frob'
///        (help world lists them)`. The suggestion is the closest verb within two edits, if any.
[[nodiscard]] std::optional<std::string> unknown_verb(std::span<const std::string> words);

/// @brief The candidate closest to `word` within two edits (Levenshtein; the first of equals), or "":
///        the suggestion of every "did you mean" (verbs here, component names in session.cpp).
[[nodiscard]] std::string closest(std::string_view word, const std::vector<std::string>& candidates);

/// @brief Help text of the verb (or verb group) `name` ("spawn", "world", "world create"), or of all verbs
///        when `name` is empty; empty when there is no such verb.
[[nodiscard]] std::string help_text(std::string_view name);

}  // namespace ecsd::cli
