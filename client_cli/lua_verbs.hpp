#pragma once

// `ecsctl system define` and `ecsctl spell define`: a system or a spell written in Lua 5.4, read
// from a file (issue 42). The server names a script's errors after the script ("chase: syntax
// error at line 3, column 5: ..."); these verbs name the file instead, as a compiler does
// ("chase.lua:3:5: syntax error: ..."), so an editor can jump to it.

#include <string>
#include <string_view>

#include "json.hpp"

namespace ecsd::cli {

struct session;
struct verb_input;

/// @brief `system define NAME --file FILE --query Q [--phase P] [--order N] [--every N]`:
///        world.define_system with FILE's text; returns its answer.
json run_define_system(session& s, const verb_input& input);

/// @brief `spell define NAME --file FILE`: world.define_spell with FILE's text.
json run_define_spell(session& s, const verb_input& input);

/// @brief `action define NAME --file FILE`: world.define_action with FILE's text.
json run_define_action(session& s, const verb_input& input);

/// @brief A define error's message with the script's name replaced by the file it came from:
///        "NAME: syntax error at line L, column C: TEXT" → "FILE:L:C: syntax error: TEXT",
///        "NAME: NAME:L: TEXT" → "FILE:L: TEXT", "NAME: TEXT" → "FILE: TEXT".
[[nodiscard]] std::string located_in_file(std::string_view message, std::string_view name,
                                          std::string_view file);

}  // namespace ecsd::cli
