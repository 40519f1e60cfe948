#include "output.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace ecsd::cli {

namespace {

bool is_scalar(const json& v) {
    return !v.is_object() && !v.is_array();
}

/// @brief Compact JSON text; invalid UTF-8 in strings is replaced rather than thrown on.
std::string compact(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// @brief Appends `value` as compact JSON with its floating-point numbers at `precision` digits.
void append_compact(std::string& out, const json& value, int precision) {
    if (value.is_object()) {
        out += '{';
        bool first = true;
        for (const auto& [key, inner] : value.items()) {
            out += first ? "" : ",";
            first = false;
            out += compact(json(key));
            out += ':';
            append_compact(out, inner, precision);
        }
        out += '}';
    } else if (value.is_array()) {
        out += '[';
        for (std::size_t i = 0; i < value.size(); ++i) {
            out += i == 0 ? "" : ",";
            append_compact(out, value[i], precision);
        }
        out += ']';
    } else if (value.is_number_float()) {
        out += float_text(value.get<double>(), precision);
    } else {
        out += compact(value);
    }
}

/// @brief Appends `text` padded with spaces to `width` display columns.
void append_padded(std::string& out, std::string_view text, std::size_t width) {
    out += text;
    const auto w = display_width(text);
    if (w < width) {
        out.append(width - w, ' ');
    }
}

std::string upper(std::string_view text) {
    std::string out(text);
    for (auto& c : out) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return out;
}

bool all_objects(const json& array) {
    return array.is_array() && !array.empty() &&
           std::all_of(array.begin(), array.end(), [](const auto& v) { return v.is_object(); });
}

/// @brief `keys` in the order `rank` gives them, equal ranks alphabetically.
template <typename Rank>
std::vector<std::string> ordered(std::vector<std::string> keys, Rank rank) {
    std::stable_sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) {
        const auto ra = rank(a);
        const auto rb = rank(b);
        return ra != rb ? ra < rb : a < b;
    });
    return keys;
}

std::vector<std::string> keys_of(const json& object) {
    std::vector<std::string> keys;
    for (const auto& [key, ignored] : object.items()) {
        keys.push_back(key);
    }
    return keys;
}

std::vector<std::string> natural_members(std::vector<std::string> keys) {
    return ordered(std::move(keys), [](const std::string& key) { return member_rank(key); });
}

std::vector<std::string> natural_components(std::vector<std::string> names, const table_options& options) {
    return ordered(std::move(names),
                   [&](const std::string& name) { return component_rank(name, options.component_order); });
}

/// @brief Columns of an array of objects: keys in their natural order; a `components` object is
///        expanded into one column per component name, in the components' natural order.
table rows_table(const json& array, const table_options& options) {
    std::vector<std::string> keys;
    std::vector<std::string> component_keys;
    bool has_components = false;
    auto remember = [](std::vector<std::string>& list, const std::string& key) {
        if (std::find(list.begin(), list.end(), key) == list.end()) {
            list.push_back(key);
        }
    };
    for (const auto& row : array) {
        for (const auto& [key, value] : row.items()) {
            if (key == "components" && value.is_object()) {
                has_components = true;
                for (const auto& [name, ignored] : value.items()) {
                    remember(component_keys, name);
                }
            }
            remember(keys, key);
        }
    }
    keys = natural_members(std::move(keys));
    component_keys = natural_components(std::move(component_keys), options);
    table t;
    for (const auto& key : keys) {
        if (key == "components" && has_components) {
            t.headers.insert(t.headers.end(), component_keys.begin(), component_keys.end());
        } else {
            t.headers.push_back(key);
        }
    }
    for (const auto& row : array) {
        std::vector<std::string> cells;
        for (const auto& key : keys) {
            const auto it = row.find(key);
            if (key == "components" && has_components) {
                for (const auto& name : component_keys) {
                    const bool present = it != row.end() && it->is_object() && it->contains(name);
                    cells.push_back(present ? cell_text((*it)[name], options.precision) : "");
                }
            } else {
                cells.push_back(it == row.end() ? "" : cell_text(*it, options.precision));
            }
        }
        t.rows.push_back(std::move(cells));
    }
    return t;
}

/// @brief A list of scalars as `a, b, c`; anything else as compact JSON.
std::string value_text(const json& value, int precision) {
    if (!value.is_array() || value.empty() || !std::all_of(value.begin(), value.end(), is_scalar)) {
        return cell_text(value, precision);
    }
    std::string text;
    for (const auto& item : value) {
        text += (text.empty() ? "" : ", ") + cell_text(item, precision);
    }
    return text;
}

/// @brief KEY/VALUE rows in natural order; a nested object is expanded one level into `key.member` rows.
table key_value_table(const json& object, const table_options& options) {
    table t{{"key", "value"}, {}};
    for (const auto& key : natural_members(keys_of(object))) {
        const json& value = object[key];
        if (value.is_object() && !value.empty()) {
            for (const auto& member : natural_members(keys_of(value))) {
                t.rows.push_back({key + "." + member, value_text(value[member], options.precision)});
            }
        } else {
            t.rows.push_back({key, value_text(value, options.precision)});
        }
    }
    return t;
}

/// @brief The table's text: fitted to the terminal's width when it is known (a wide terminal shows long
///        cells whole: the terminal, not a fixed 40, is the limit), else every cell cut to the options'.
std::string show(table t, const table_options& options) {
    if (options.max_width == 0) {
        for (auto& row : t.rows) {
            for (auto& cell : row) {
                cell = fit_width(cell, options.max_cell_width);
            }
        }
    }
    fit_table(t, options.max_width);
    return format_table(t);
}

/// @brief Microseconds as a short duration: `850us`, `3.2us`, `12.5ms`, `1.25s`.
std::string duration_text(const json& us) {
    if (!us.is_number()) {
        return cell_text(us);
    }
    const double v = us.get<double>();
    std::array<char, 48> text{};
    if (v < 10) {
        std::snprintf(text.data(), text.size(), "%.1fus", v);
    } else if (v < 1000) {
        std::snprintf(text.data(), text.size(), "%.0fus", v);
    } else if (v < 1e6) {
        std::snprintf(text.data(), text.size(), "%.1fms", v / 1e3);
    } else {
        std::snprintf(text.data(), text.size(), "%.2fs", v / 1e6);
    }
    return text.data();
}

/// @brief Appends KEY/VALUE rows for `value` under `key`, objects expanded into `key.member` rows.
void append_rows(table& t, const std::string& key, const json& value, const table_options& options) {
    if (value.is_object() && !value.empty()) {
        for (const auto& member : natural_members(keys_of(value))) {
            append_rows(t, key + "." + member, value[member], options);
        }
        return;
    }
    t.rows.push_back({key, value_text(value, options.precision)});
}

/// @brief `key: value` lines for the members of `object` other than `skip`, in the object's order.
std::string footer_lines(const json& object, const json* skip, const table_options& options) {
    std::string out;
    for (const auto& [key, value] : object.items()) {
        if (&value != skip) {
            out += key + ": " + cell_text(value, options.precision) + "\n";
        }
    }
    return out;
}

// --- YAML -------------------------------------------------------------------------------------------------

/// @brief True when `text` reads back as this very string without quotes, in YAML 1.1 and 1.2 alike:
///        it starts with a letter, `_` or `/` (not a number, an indicator or a blank), holds no control
///        character, flow indicator, comment, anchor, tag or quote, no `: `, does not end in `:` or a
///        blank, and is no boolean or null word (`yes`, `off`, `Null`...).
bool plain_yaml(std::string_view text) {
    if (text.empty()) {
        return false;
    }
    const auto first = static_cast<unsigned char>(text.front());
    if (!(std::isalpha(first) != 0 || first == '_' || first == '/' || first >= 0x80U)) {
        return false;
    }
    if (text.back() == ' ' || text.back() == ':' || text.find(": ") != std::string_view::npos) {
        return false;
    }
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20U || u == 0x7FU ||
            std::string_view("{}[],#&*!|>'\"%@`").find(c) != std::string_view::npos) {
            return false;
        }
    }
    std::string lower(text);
    for (auto& c : lower) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    constexpr auto words =
        std::to_array<std::string_view>({"true", "false", "yes", "no", "on", "off", "y", "n", "null"});
    return std::find(words.begin(), words.end(), lower) == words.end();
}

/// @brief A string as a YAML scalar: plain when safe, else double-quoted (JSON's escapes are YAML's).
std::string yaml_string(const std::string& text) {
    if (plain_yaml(text)) {
        return text;
    }
    std::string quoted;
    for (const char c : compact(json(text))) {
        quoted += c == '\x7F' ? std::string("\\x7F") : std::string(1, c);  // DEL is no printable YAML
    }
    return quoted;
}

/// @brief A scalar, an empty object or an empty array as YAML.
std::string yaml_scalar(const json& value) {
    if (value.is_string()) {
        return yaml_string(value.get<std::string>());
    }
    if (value.is_object()) {
        return "{}";
    }
    if (value.is_array()) {
        return "[]";
    }
    std::string text = compact(value);  // null, true, false and numbers read the same in YAML
    if (value.is_number_float() && text.find('e') != std::string::npos &&
        text.find('.') == std::string::npos) {
        text.insert(text.find('e'), ".0");  // 1e+300 is a string to YAML 1.1; 1.0e+300 a float to both
    }
    return text;
}

bool yaml_block(const json& value) {
    return (value.is_object() || value.is_array()) && !value.empty();
}

/// @brief Appends a non-empty object or array in block style at `indent` spaces; the first line goes
///        on the current line when `inline_first` (after a `- `).
void append_yaml_block(std::string& out, const json& value, std::size_t indent, bool inline_first) {
    bool first = true;
    auto start_line = [&] {
        if (!(first && inline_first)) {
            out.append(indent, ' ');
        }
        first = false;
    };
    auto append_after = [&](const json& inner, std::size_t inner_indent, bool after_dash) {
        if (!yaml_block(inner)) {
            out += " " + yaml_scalar(inner) + "\n";
        } else if (after_dash) {
            out += " ";
            append_yaml_block(out, inner, inner_indent, true);
        } else {
            out += "\n";
            append_yaml_block(out, inner, inner_indent, false);
        }
    };
    if (value.is_object()) {
        for (const auto& [key, inner] : value.items()) {
            start_line();
            out += yaml_string(key) + ":";
            append_after(inner, indent + 2, false);
        }
        return;
    }
    for (const auto& item : value) {
        start_line();
        out += "-";
        append_after(item, indent + 2, true);
    }
}

}  // namespace

std::size_t display_width(std::string_view text) noexcept {
    std::size_t width = 0;
    for (const char c : text) {
        if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) {
            ++width;  // skip UTF-8 continuation bytes
        }
    }
    return width;
}

std::string fit_width(std::string_view text, std::size_t width) {
    if (width == 0 || display_width(text) <= width) {
        return std::string(text);
    }
    std::string out;
    std::size_t used = 0;
    for (const char c : text) {
        const bool starts_code_point = (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
        if (starts_code_point && ++used == width) {
            break;  // room for the ellipsis only
        }
        out += c;
    }
    return out + "…";
}

void fit_table(table& t, std::size_t max_width) {
    if (max_width == 0 || t.headers.empty()) {
        return;
    }
    const std::size_t columns = t.headers.size();
    std::vector<std::size_t> widths(columns, 0);
    std::vector<std::size_t> floors(columns, 0);
    for (std::size_t i = 0; i < columns; ++i) {
        widths[i] = display_width(t.headers[i]);
        floors[i] = std::max<std::size_t>(widths[i], 3);
    }
    // A cut number reads as a different number: columns of numbers keep their width, and the
    // text columns give up room instead.
    std::vector<bool> numbers(columns, true);
    const auto is_number = [](const std::string& cell) {
        if (cell.empty()) {
            return false;
        }
        char* end = nullptr;
        (void)std::strtod(cell.c_str(), &end);
        return end == cell.c_str() + cell.size();
    };
    for (const auto& row : t.rows) {
        for (std::size_t i = 0; i < row.size() && i < columns; ++i) {
            widths[i] = std::max(widths[i], display_width(row[i]));
            numbers[i] = numbers[i] && is_number(row[i]);
        }
    }
    for (std::size_t i = 0; i < columns; ++i) {
        if (numbers[i] && !t.rows.empty()) {
            floors[i] = widths[i];
        }
    }
    std::size_t total = 2 * (columns - 1);
    for (const auto w : widths) {
        total += w;
    }
    bool cut = false;
    while (total > max_width) {
        // The widest column that can still give a column up.
        std::size_t widest = columns;
        for (std::size_t i = 0; i < columns; ++i) {
            if (widths[i] > floors[i] && (widest == columns || widths[i] > widths[widest])) {
                widest = i;
            }
        }
        if (widest == columns) {
            break;  // every column is at its floor: the headers alone are wider than the terminal
        }
        --widths[widest];
        --total;
        cut = true;
    }
    if (!cut) {
        return;
    }
    for (auto& row : t.rows) {
        for (std::size_t i = 0; i < row.size() && i < columns; ++i) {
            row[i] = fit_width(row[i], widths[i]);
        }
    }
}

std::size_t terminal_width() {
    if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
        char* end = nullptr;
        const long value = std::strtol(columns, &end, 10);
        if (*end == '\0' && value > 0) {
            return static_cast<std::size_t>(value);
        }
    }
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        return ws.ws_col;
    }
    return 0;
}

std::string render_info(const json& info, const table_options& options) {
    if (!info.is_object()) {
        return render_human(info, options);
    }
    // What a reader looks for first: the version, then how long it has run and who is connected, and
    // how much went through; the reference (limits, config) last.
    static constexpr auto first =
        std::to_array<std::string_view>({"version", "uptime_s", "auth_required", "connections", "bytes",
                                         "requests_total", "cpu", "worlds", "memory", "limits", "config"});
    std::vector<std::string> keys;
    for (const auto key : first) {
        if (info.contains(std::string(key))) {
            keys.emplace_back(key);
        }
    }
    for (const auto& [key, ignored] : info.items()) {
        if (key != "methods" && std::find(first.begin(), first.end(), std::string_view(key)) == first.end()) {
            keys.push_back(key);
        }
    }
    table t{{"key", "value"}, {}};
    for (const auto& key : keys) {
        if (key == "connections" && info[key].is_object()) {
            for (const char* member : {"open", "total", "max"}) {  // counts, then the limit
                if (info[key].contains(member)) {
                    append_rows(t, key + "." + member, info[key][member], options);
                }
            }
            for (const auto& [member, value] : info[key].items()) {
                if (member != "open" && member != "total" && member != "max") {
                    append_rows(t, key + "." + member, value, options);
                }
            }
            continue;
        }
        if (key == "bytes" && info[key].is_object()) {
            for (const char* member : {"in", "out"}) {
                if (info[key].contains(member)) {
                    append_rows(t, key + "." + member, info[key][member], options);
                }
            }
            continue;
        }
        append_rows(t, key, info[key], options);
    }
    std::string out = show(std::move(t), options);
    const auto methods = info.find("methods");
    if (methods != info.end() && methods->is_object() && !methods->empty()) {
        table m{{"method", "calls", "errors", "p50", "p99", "max"}, {}};
        for (const auto& [name, stats] : methods->items()) {
            if (!stats.is_object()) {
                continue;
            }
            m.rows.push_back({name, cell_text(stats.value("calls", json()), options.precision),
                              cell_text(stats.value("errors", json()), options.precision),
                              duration_text(stats.value("p50_us", json())),
                              duration_text(stats.value("p99_us", json())),
                              duration_text(stats.value("max_us", json()))});
        }
        out += "\n" + show(std::move(m), options);
    }
    return out;
}

std::string format_table(const table& t) {
    std::vector<std::size_t> widths(t.headers.size(), 0);
    for (std::size_t i = 0; i < t.headers.size(); ++i) {
        widths[i] = display_width(t.headers[i]);
    }
    for (const auto& row : t.rows) {
        for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
            widths[i] = std::max(widths[i], display_width(row[i]));
        }
    }
    std::string out;
    auto emit = [&](const std::vector<std::string>& cells, bool header) {
        std::string line;
        for (std::size_t i = 0; i < widths.size(); ++i) {
            const std::string cell = i < cells.size() ? (header ? upper(cells[i]) : cells[i]) : std::string{};
            if (i + 1 < widths.size()) {
                append_padded(line, cell, widths[i]);
                line += "  ";
            } else {
                line += cell;
            }
        }
        while (!line.empty() && line.back() == ' ') {
            line.pop_back();
        }
        out += line;
        out += '\n';
    };
    emit(t.headers, true);
    for (const auto& row : t.rows) {
        emit(row, false);
    }
    return out;
}

std::string float_text(double value, int precision) {
    if (precision <= 0) {
        return compact(json(value));
    }
    const int digits = std::min(precision, 17);
    std::array<char, 64> text{};
    std::snprintf(text.data(), text.size(), "%.*g", digits, value);
    std::string out(text.data());
    // %g writes small numbers with an exponent (2e-05): write them out (0.00002) down to 1e-15.
    if (const auto e = out.find("e-"); e != std::string::npos) {
        const int exponent = -std::atoi(out.c_str() + e + 2);
        if (exponent >= -15) {
            std::snprintf(text.data(), text.size(), "%.*f", digits - 1 - exponent, value);
            out = text.data();
            while (out.back() == '0') {
                out.pop_back();
            }
            if (out.back() == '.') {
                out.pop_back();
            }
        }
    }
    return out == "-0" ? "0" : out;
}

std::string cell_text(const json& value, int precision) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_null()) {
        return {};
    }
    std::string out;
    append_compact(out, value, precision);
    return out;
}

std::size_t member_rank(std::string_view key) noexcept {
    static constexpr auto known = std::to_array<std::string_view>(
        {// identifying: an entity, a system's place in the tick, a name, a world
         "entity", "order", "name", "world",
         // a system (world.list_systems)
         "phase", "enabled", "members", "signature", "runs", "last_ms", "p50_ms", "p99_ms",
         // a spell, a method, a component type
         "description", "summary", "kind", "fields", "count",
         // a world (world.info, world.hash, world.save, world.load)
         "tick", "tick_hz", "paused", "entities", "max_entities", "component_types", "overruns",
         "last_tick_ms", "tick_p50_ms", "tick_p99_ms", "skipped_ticks", "skipped_seconds", "gravity",
         "bounds", "hash", "path", "bytes", "replayed", "ms",
         // the server (server.info)
         "version", "uptime_s", "auth_required", "connections", "requests_total", "worlds", "memory",
         "limits", "methods", "config",
         // an entity's components, then what it takes part in
         "components", "systems"});
    const auto it = std::find(known.begin(), known.end(), key);
    return static_cast<std::size_t>(it - known.begin());
}

std::size_t component_rank(std::string_view name, const std::vector<std::string>& preferred) {
    static constexpr auto built_in = std::to_array<std::string_view>(
        {"Name", "Position", "Velocity", "RigidBody", "Collider", "Contacts", "Appearance", "Health", "AI",
         "Player", "Frozen", "Ghost", "MagicInput", "Lifetime", "Resting"});
    if (const auto it = std::find(preferred.begin(), preferred.end(), name); it != preferred.end()) {
        return static_cast<std::size_t>(it - preferred.begin());
    }
    const auto it = std::find(built_in.begin(), built_in.end(), name);
    return preferred.size() + static_cast<std::size_t>(it - built_in.begin());
}

std::string render_human(const json& result, const table_options& options) {
    if (result.is_null()) {
        return "ok\n";
    }
    if (is_scalar(result)) {
        return cell_text(result, options.precision) + "\n";
    }
    if (result.is_array()) {
        if (result.empty()) {
            return "(empty)\n";
        }
        if (all_objects(result)) {
            return show(rows_table(result, options), options);
        }
        std::string out;
        for (const auto& item : result) {
            out += cell_text(item, options.precision) + "\n";
        }
        return out;
    }
    if (result.empty()) {
        return "(empty)\n";
    }
    // `{worlds: [...]}`: just the list.
    if (result.size() == 1 && result.begin()->is_array()) {
        return render_human(*result.begin(), options);
    }
    // An object holding one list of objects (query, systems, worlds...): the list as a table, then its
    // scalar siblings (total, tick...) as `key: value` lines.
    const json* list = nullptr;
    bool others_scalar = true;
    for (const auto& [key, value] : result.items()) {
        if (value.is_array() && (value.empty() || all_objects(value)) && list == nullptr) {
            list = &value;
        } else if (!is_scalar(value)) {
            others_scalar = false;
        }
    }
    if (list != nullptr && others_scalar) {
        const std::string rows = list->empty() ? "(empty)\n" : show(rows_table(*list, options), options);
        return rows + footer_lines(result, list, options);
    }
    // `{components: {...}}` (get, describe): one row per component, then the other members.
    if (const auto it = result.find("components"); it != result.end() && it->is_object()) {
        table t{{"component", "value"}, {}};
        for (const auto& name : natural_components(keys_of(*it), options)) {
            t.rows.push_back({name, cell_text((*it)[name], options.precision)});
        }
        const std::string rows = it->empty() ? "(no components)\n" : show(std::move(t), options);
        return rows + footer_lines(result, &*it, options);
    }
    return show(key_value_table(result, options), options);
}

std::string to_yaml(const json& value) {
    std::string out = "---\n";
    if (yaml_block(value)) {
        append_yaml_block(out, value, 0, false);
    } else {
        out += yaml_scalar(value) + "\n";
    }
    return out;
}

std::string render(const json& result, output_format format, const table_options& options) {
    switch (format) {
        case output_format::json_lines:
            return compact(result) + "\n";
        case output_format::yaml:
            return to_yaml(result);
        case output_format::table:
            break;
    }
    return render_human(result, options);
}

}  // namespace ecsd::cli
