#pragma once

// `expect` (alias `assert`) for scripts and the shell: a check on values that fails the script.
// Pure: the words come in after variable substitution; unit-tested.

#include <optional>
#include <string>
#include <vector>

namespace ecsd::cli {

/// @brief Checks `VALUE` (true unless false, null, 0, "", [] or {}) or `VALUE OP VALUE` with OP one
///        of == != < <= > >=. Each value is read as JSON when it parses (3, true, "x", [1]) and as
///        text otherwise; == and != compare JSON values, the others numbers or texts.
/// @returns nullopt when the check holds, otherwise what failed ("expected 3 == 0").
/// @throws usage_error on a malformed check (no value, an unknown operator, ordering mixed kinds).
[[nodiscard]] std::optional<std::string> failed_expectation(const std::vector<std::string>& words);

}  // namespace ecsd::cli
