#include "line_parser.hpp"

#include <cctype>

#include "errors.hpp"

namespace ecsd::cli {

namespace {

bool is_blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool is_name_start(char c) noexcept {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool is_name_char(char c) noexcept {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

/// @brief Text a variable's value stands for inside a word.
std::string as_text(const json& value) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    return value.dump();
}

/// @brief Follows `a.b.0` from `root`; numeric segments index arrays.
const json& follow(const json& root, std::string_view name, std::string_view path) {
    const json* node = &root;
    while (!path.empty()) {
        const auto dot = path.find('.');
        const std::string key(path.substr(0, dot));
        path = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
        if (node->is_object() && node->contains(key)) {
            node = &(*node)[key];
            continue;
        }
        if (node->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos &&
            key.size() < 10) {
            const auto index = std::stoul(key);
            if (index < node->size()) {
                node = &(*node)[index];
                continue;
            }
        }
        throw usage_error("variable $" + std::string(name) + " has no member '" + key + "'");
    }
    return *node;
}

}  // namespace

bool valid_variable_name(std::string_view name) noexcept {
    if (name.empty() || !is_name_start(name.front())) {
        return false;
    }
    for (const char c : name) {
        if (!is_name_char(c)) {
            return false;
        }
    }
    return true;
}

std::vector<std::string> split_words(std::string_view line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (is_blank(c)) {
            if (in_word) {
                words.push_back(std::move(word));
            }
            word.clear();
            in_word = false;
            continue;
        }
        if (c == '#' && !in_word) {
            break;  // a comment runs to the end of the line
        }
        in_word = true;
        if (c == '\'') {
            const auto close = line.find('\'', i + 1);
            if (close == std::string_view::npos) {
                throw usage_error("unterminated ' quote");
            }
            word.append(line.substr(i + 1, close - i - 1));
            i = close;
        } else if (c == '"') {
            std::size_t j = i + 1;
            for (; j < line.size() && line[j] != '"'; ++j) {
                if (line[j] == '\\' && j + 1 < line.size() && (line[j + 1] == '"' || line[j + 1] == '\\')) {
                    ++j;
                }
                word.push_back(line[j]);
            }
            if (j >= line.size()) {
                throw usage_error("unterminated \" quote");
            }
            i = j;
        } else if (c == '\\') {
            if (i + 1 >= line.size()) {
                throw usage_error("trailing backslash");
            }
            word.push_back(line[++i]);
        } else {
            word.push_back(c);
        }
    }
    if (in_word) {
        words.push_back(std::move(word));
    }
    return words;
}

parsed_line parse_line(std::string_view line) {
    parsed_line parsed;
    parsed.words = split_words(line);
    if (parsed.words.size() >= 2 && parsed.words[1] == "=" && parsed.words[0].starts_with('$')) {
        const std::string name = parsed.words[0].substr(1);
        if (!valid_variable_name(name)) {
            throw usage_error("invalid variable name '" + parsed.words[0] + "'");
        }
        if (parsed.words.size() == 2) {
            throw usage_error("nothing to run after '" + parsed.words[0] + " ='");
        }
        parsed.assign_to = name;
        parsed.words.erase(parsed.words.begin(), parsed.words.begin() + 2);
    }
    return parsed;
}

std::string_view words_after(std::string_view line, std::size_t n) noexcept {
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    std::size_t i = 0;
    const auto skip_blanks = [&] {
        while (i < line.size() && blank(line[i])) ++i;
    };
    skip_blanks();
    for (std::size_t w = 0; w < n; ++w) {
        while (i < line.size() && !blank(line[i])) ++i;
        skip_blanks();
    }
    return line.substr(i);
}

std::string substitute(std::string_view word, const variables& vars) {
    std::string out;
    out.reserve(word.size());
    for (std::size_t i = 0; i < word.size(); ++i) {
        const char c = word[i];
        if (c != '$' || i + 1 >= word.size()) {
            out.push_back(c);
            continue;
        }
        if (word[i + 1] == '$') {  // `$$` is a literal dollar
            out.push_back('$');
            ++i;
            continue;
        }
        std::string_view name;
        std::string_view path;
        if (word[i + 1] == '{') {
            const auto close = word.find('}', i + 2);
            if (close == std::string_view::npos) {
                throw usage_error("unterminated ${ in '" + std::string(word) + "'");
            }
            const auto inner = word.substr(i + 2, close - i - 2);
            const auto dot = inner.find('.');
            name = inner.substr(0, dot);
            if (dot != std::string_view::npos) {
                path = inner.substr(dot + 1);
            }
            if (!valid_variable_name(name)) {
                throw usage_error("invalid variable reference '${" + std::string(inner) + "}'");
            }
            i = close;
        } else if (is_name_start(word[i + 1])) {
            std::size_t j = i + 1;
            while (j < word.size() && is_name_char(word[j])) {
                ++j;
            }
            name = word.substr(i + 1, j - i - 1);
            i = j - 1;
        } else {
            out.push_back(c);  // a lone `$` (e.g. before a digit) stays as it is
            continue;
        }
        const auto it = vars.find(name);
        if (it == vars.end()) {
            throw usage_error("undefined variable $" + std::string(name));
        }
        out += as_text(follow(it->second, name, path));
    }
    return out;
}

json value_to_store(const json& result) {
    if (result.is_object()) {
        const auto it = result.find("entity");
        if (it != result.end() && it->is_number_integer()) {
            return *it;
        }
    }
    return result;
}

}  // namespace ecsd::cli
