#pragma once

// Interactive mode: a readline prompt with history and tab completion.

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "session.hpp"

namespace ecsd::cli {

/// @brief Names for completion, asked from the server and kept for a moment only (until forget() or
///        `max_age`), so a world, prefab or component made meanwhile completes right after.
class completion_source {
  public:
    /// @brief Calls a method with params and returns its result; throws when it cannot.
    using lister = std::function<json(const std::string& method, const json& params)>;

    /// @brief Asks the session's server (in the session's current world), keeping answers two seconds.
    explicit completion_source(session& s);
    /// @brief Asks `ask`, keeping answers for `max_age` (0: asks every time).
    completion_source(lister ask, std::chrono::steady_clock::duration max_age);

    /// @brief Names of `kind` ("methods", "components", "systems", "spells", "worlds", "prefabs"); empty
    ///        when the server cannot say.
    const std::vector<std::string>& names(std::string_view kind);

    /// @brief Drops every kept answer: the shell calls it after each command, which may have made or
    ///        destroyed a world, a prefab or a component type.
    void forget() noexcept { cache_.clear(); }

  private:
    struct listing {
        std::vector<std::string> names;
        std::chrono::steady_clock::time_point asked;
    };
    lister ask_;
    std::chrono::steady_clock::duration max_age_;
    std::map<std::string, listing, std::less<>> cache_;
};

/// @brief What completing a word offers.
struct completion {
    std::vector<std::string> candidates;  ///< replacements for the whole word, sorted
    bool append_space = true;             ///< false when the word goes on: `Position=`, `'Position, Vel...`
};

/// @brief Completes the word under the cursor: `line` is the text typed up to the cursor, the word the
///        part after its last blank. Knows which argument of which verb the word is (a verb, a sub-verb,
///        an option, a component name, `Name=JSON`, query text even inside an open quote, a system,
///        spell, world, prefab or method name). Pure apart from asking `source` for server names.
[[nodiscard]] completion complete_line(std::string_view line, completion_source* source);

/// @brief Candidates for a new word `prefix` after the complete words `before`, as complete_line
///        offers them.
[[nodiscard]] std::vector<std::string> complete(const std::vector<std::string>& before,
                                                std::string_view prefix, completion_source* source);

/// @brief Names found in a listing result: strings of an array, `name` members of its objects, or the
///        keys of an object of objects (the first array member of an object is searched first).
[[nodiscard]] std::vector<std::string> names_in(const json& listing);

/// @brief Runs the shell until `exit`, `quit` or end of input; returns ok.
exit_code run_shell(session& s);

}  // namespace ecsd::cli
