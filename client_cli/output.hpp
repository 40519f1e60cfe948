#pragma once

// Output formatting: aligned tables for people, one JSON text per result for programs. Pure; unit-tested.

#include <string>
#include <vector>

#include "json.hpp"

namespace ecsd::cli {

/// @brief How results are printed.
enum class output_format {
    table,       ///< aligned columns, for a terminal
    json_lines,  ///< one compact JSON text per result, one per line (for jq and scripts)
};

/// @brief A table: column headers and rows of cells, each row as long as the headers.
struct table {
    std::vector<std::string> headers;
    std::vector<std::vector<std::string>> rows;
};

/// @brief Number of terminal columns `text` takes (UTF-8 code points; control bytes count as one).
[[nodiscard]] std::size_t display_width(std::string_view text) noexcept;

/// @brief Renders a table with columns padded to their widest cell, separated by two spaces, headers
///        upper-cased, trailing blanks trimmed, every line ending in '\n'.
[[nodiscard]] std::string format_table(const table& t);

/// @brief Text of one cell: strings bare, null empty, anything else as compact JSON.
[[nodiscard]] std::string cell_text(const json& value);

/// @brief Renders a result for people: a scalar on its own line, an array of objects as a table (a
///        `components` object expands into one column per component), an object as KEY/VALUE rows (an
///        array of objects inside it becomes a table, its scalar siblings a footer), null as "ok".
[[nodiscard]] std::string render_human(const json& result);

/// @brief Renders a result in the given format; the text always ends with '\n'.
[[nodiscard]] std::string render(const json& result, output_format format);

}  // namespace ecsd::cli
