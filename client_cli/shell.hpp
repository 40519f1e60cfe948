#pragma once

// Interactive mode: a readline prompt with history and tab completion.

#include <string>
#include <vector>

#include "session.hpp"

namespace ecsd::cli {

/// @brief Names for completion, asked from the server once per kind and kept.
class completion_source {
  public:
    explicit completion_source(session& s) : session_(s) {}

    /// @brief Names of `kind` ("methods", "components", "systems", "spells", "worlds", "prefabs"); empty when
    /// the
    ///        server cannot say.
    const std::vector<std::string>& names(std::string_view kind);

  private:
    session& session_;
    std::map<std::string, std::vector<std::string>, std::less<>> cache_;
};

/// @brief Candidates for the word being completed, given the words before it. Pure apart from asking
///        `source` for server names.
[[nodiscard]] std::vector<std::string> complete(const std::vector<std::string>& before,
                                                std::string_view prefix, completion_source* source);

/// @brief Names found in a listing result: strings of an array, `name` members of its objects, or the
///        keys of an object of objects (the first array member of an object is searched first).
[[nodiscard]] std::vector<std::string> names_in(const json& listing);

/// @brief Runs the shell until `exit`, `quit` or end of input; returns ok.
exit_code run_shell(session& s);

}  // namespace ecsd::cli
