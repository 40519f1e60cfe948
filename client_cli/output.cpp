#include "output.hpp"

#include <algorithm>
#include <cctype>

namespace ecsd::cli {

namespace {

bool is_scalar(const json& v) {
    return !v.is_object() && !v.is_array();
}

/// @brief Compact JSON text; invalid UTF-8 in strings is replaced rather than thrown on.
std::string compact(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
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

/// @brief Columns of an array of objects: keys in first-seen order; a `components` object is expanded
///        into one column per component name.
table rows_table(const json& array) {
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
                if (!has_components) {
                    remember(keys, key);
                }
                has_components = true;
                for (const auto& [name, ignored] : value.items()) {
                    remember(component_keys, name);
                }
            } else {
                remember(keys, key);
            }
        }
    }
    // Identifying columns lead, whatever order the server's members came in.
    std::stable_partition(keys.begin(), keys.end(), [](const std::string& key) {
        return key == "entity" || key == "name" || key == "world";
    });
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
                    cells.push_back(present ? cell_text((*it)[name]) : "");
                }
            } else {
                cells.push_back(it == row.end() ? "" : cell_text(*it));
            }
        }
        t.rows.push_back(std::move(cells));
    }
    return t;
}

/// @brief A list of scalars as `a, b, c`; anything else as compact JSON.
std::string value_text(const json& value) {
    if (!value.is_array() || value.empty() || !std::all_of(value.begin(), value.end(), is_scalar)) {
        return cell_text(value);
    }
    std::string text;
    for (const auto& item : value) {
        text += (text.empty() ? "" : ", ") + cell_text(item);
    }
    return text;
}

/// @brief KEY/VALUE rows; a nested object is expanded one level into `key.member` rows.
table key_value_table(const json& object) {
    table t{{"key", "value"}, {}};
    for (const auto& [key, value] : object.items()) {
        if (value.is_object() && !value.empty()) {
            for (const auto& [member, inner] : value.items()) {
                std::string name = key;
                name += '.';
                name += member;
                t.rows.push_back({std::move(name), value_text(inner)});
            }
        } else {
            t.rows.push_back({key, value_text(value)});
        }
    }
    return t;
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

std::string cell_text(const json& value) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_null()) {
        return {};
    }
    return compact(value);
}

std::string render_human(const json& result) {
    if (result.is_null()) {
        return "ok\n";
    }
    if (is_scalar(result)) {
        return cell_text(result) + "\n";
    }
    if (result.is_array()) {
        if (result.empty()) {
            return "(empty)\n";
        }
        if (all_objects(result)) {
            return format_table(rows_table(result));
        }
        std::string out;
        for (const auto& item : result) {
            out += cell_text(item) + "\n";
        }
        return out;
    }
    if (result.empty()) {
        return "(empty)\n";
    }
    // `{worlds: [...]}`: just the list.
    if (result.size() == 1 && result.begin()->is_array()) {
        return render_human(*result.begin());
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
        std::string out = list->empty() ? "(empty)\n" : format_table(rows_table(*list));
        for (const auto& [key, value] : result.items()) {
            if (&value != list) {
                out += key + ": " + cell_text(value) + "\n";
            }
        }
        return out;
    }
    // `{components: {...}}` (get): one row per component.
    if (const auto it = result.find("components"); it != result.end() && it->is_object()) {
        table t{{"component", "value"}, {}};
        for (const auto& [name, value] : it->items()) {
            t.rows.push_back({name, cell_text(value)});
        }
        std::string out = it->empty() ? "(no components)\n" : format_table(t);
        for (const auto& [key, value] : result.items()) {
            if (key != "components") {
                out += key + ": " + cell_text(value) + "\n";
            }
        }
        return out;
    }
    return format_table(key_value_table(result));
}

std::string render(const json& result, output_format format) {
    if (format == output_format::json_lines) {
        return compact(result) + "\n";
    }
    return render_human(result);
}

}  // namespace ecsd::cli
