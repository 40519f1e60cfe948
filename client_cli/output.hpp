#pragma once

// Output formatting: aligned tables for people, YAML, one JSON text per result for programs. Pure;
// unit-tested.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"

namespace ecsd::cli {

/// @brief How results are printed.
enum class output_format {
    table,       ///< aligned columns, for a terminal (`-o table`, `-o wide`)
    yaml,        ///< one YAML document per result, block style, values exact (`-o yaml`)
    json_lines,  ///< one compact JSON text per result, one per line (for jq and scripts)
};

/// @brief How tables show values. JSON and YAML ignore it: they are always exact.
struct table_options {
    /// @brief Significant digits of floating-point numbers (also inside JSON shown in a cell); 0 prints
    ///        them exactly.
    int precision = 6;
    /// @brief Longest cell in display columns when the terminal's width is unknown (max_width 0); a
    ///        longer one is cut and ends in `…`. 0 never cuts (`-o wide`). On a terminal only its width
    ///        limits cells (fit_table), so a wide one shows them whole.
    std::size_t max_cell_width = 40;
    /// @brief Longest line in display columns (the terminal's width when stdout is one): a wider table
    ///        shrinks its widest columns first, their cells ending in `…`, instead of wrapping. 0 never
    ///        shrinks (a pipe, `-o wide`).
    std::size_t max_width = 0;
    /// @brief Component columns to put first, in this order (a query's `--fields`); the others follow
    ///        in the natural order (see component_rank).
    std::vector<std::string> component_order;
};

/// @brief A table: column headers and rows of cells, each row as long as the headers.
struct table {
    std::vector<std::string> headers;
    std::vector<std::vector<std::string>> rows;
};

/// @brief Number of terminal columns `text` takes (UTF-8 code points; control bytes count as one).
[[nodiscard]] std::size_t display_width(std::string_view text) noexcept;

/// @brief `text` cut to `width` display columns, its last one `…`, when it is wider; whole otherwise
///        (and always when `width` is 0). Never splits a UTF-8 sequence.
[[nodiscard]] std::string fit_width(std::string_view text, std::size_t width);

/// @brief Renders a table with columns padded to their widest cell, separated by two spaces, headers
///        upper-cased, trailing blanks trimmed, every line ending in '\n'.
[[nodiscard]] std::string format_table(const table& t);

/// @brief Cuts `t`'s cells so that its lines take at most `max_width` display columns: the widest
///        column loses a column at a time (its cut cells end in `…`) until the table fits or every
///        column is down to its header's width (at least 3). 0 leaves it whole.
void fit_table(table& t, std::size_t max_width);

/// @brief The width of the terminal on stdout, for tables: $COLUMNS when it is a number, else the
///        TIOCGWINSZ ioctl, else 0 (not a terminal: no limit).
[[nodiscard]] std::size_t terminal_width();

/// @brief server.info for people: KEY/VALUE rows (version first, then uptime, auth, the connection
///        counts, bytes in and out, requests, cpu, worlds, memory, limits, config; nested members as
///        `a.b.c`), then one row per method called so far: METHOD, CALLS, ERRORS, P50, P99, MAX (the
///        handler's times, in us, ms or s).
[[nodiscard]] std::string render_info(const json& info, const table_options& options = {});

/// @brief A floating-point number with `precision` significant digits (`%g` style: 1.0000000000000013
///        is `1`, 0.000123456789 is `0.000123457`), small ones without an exponent too (2e-05 is
///        `0.00002`, down to 1e-15); exactly as JSON writes it when `precision` is 0.
[[nodiscard]] std::string float_text(double value, int precision);

/// @brief Text of one cell: strings bare, null empty, anything else as compact JSON, its floating-point
///        numbers with `precision` significant digits (0: exact).
[[nodiscard]] std::string cell_text(const json& value, int precision = 0);

/// @brief Sort key of a member among a table's columns and KEY/VALUE rows: identifying members first
///        (entity, order, name, world), then the members of the server's results in a natural order
///        (a system's phase, enabled, members...; a world's tick, tick_hz, paused...); every other
///        member gets the same, last rank (the caller orders those alphabetically).
[[nodiscard]] std::size_t member_rank(std::string_view key) noexcept;

/// @brief Sort key of a component column or row: its place in `preferred` (the user's `--fields`),
///        else after those in the server's registration order of the built-in components (Name, which
///        identifies an entity, first; then Position, Velocity, RigidBody, Collider, Contacts,
///        Appearance, Health, AI, Player, Frozen, Ghost, MagicInput, Lifetime); every other component
///        gets the same, last rank (the caller orders those alphabetically).
[[nodiscard]] std::size_t component_rank(std::string_view name, const std::vector<std::string>& preferred);

/// @brief Renders a result for people: a scalar on its own line, an array of objects as a table (a
///        `components` object expands into one column per component), an object as KEY/VALUE rows (an
///        array of objects inside it becomes a table, its scalar siblings a footer), null as "ok".
///        Columns, rows and components come in their natural order (member_rank, component_rank).
[[nodiscard]] std::string render_human(const json& result, const table_options& options = {});

/// @brief A YAML document for `value`: `---`, then block style (two-space indents, `- ` items), strings
///        double-quoted only when a plain scalar could read as something else, numbers exact.
[[nodiscard]] std::string to_yaml(const json& value);

/// @brief Renders a result in the given format; the text always ends with '\n'. `options` apply to
///        tables only.
[[nodiscard]] std::string render(const json& result, output_format format, const table_options& options = {});

}  // namespace ecsd::cli
