#pragma once

// Script mode: one command per line from a file or standard input.

#include <iosfwd>
#include <string_view>

#include "session.hpp"

namespace ecsd::cli {

/// @brief Runs every line of `in`; stops at the first failing line (its error is printed as
///        `NAME:LINE: ...`) unless `keep_going`. Returns ok, or the exit code of the first failing line.
exit_code run_script(session& s, std::istream& in, std::string_view name, bool keep_going);

}  // namespace ecsd::cli
