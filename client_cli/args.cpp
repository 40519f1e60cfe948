#include "args.hpp"

#include <charconv>

#include "errors.hpp"

namespace ecsd::cli {

namespace {

/// @brief Largest entity id the protocol accepts: ids travel as JSON integers below 2^53.
constexpr std::uint64_t max_entity = (std::uint64_t{1} << 53U) - 1;

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

bool valid_name(std::string_view name) {
    if (name.empty()) {
        return false;
    }
    for (const char c : name) {
        if (c == ' ' || c == '\t' || c == '=' || c == '"' || c == '\'') {
            return false;
        }
    }
    return true;
}

}  // namespace

json parse_json(std::string_view text, std::string_view what) {
    try {
        return json::parse(text);
    } catch (const json::out_of_range& e) {
        // 406: a number no double holds (1e400). Not a quoting problem: say what is wrong with it.
        const std::string message = e.what();
        const auto open = message.find('\'');
        const auto close = open == std::string::npos ? open : message.find('\'', open + 1);
        const std::string number =
            close == std::string::npos ? std::string("a number") : message.substr(open + 1, close - open - 1);
        throw usage_error(std::string(what) + ": " + number +
                          " is out of range for JSON doubles (at most about 1.8e308)");
    } catch (const json::exception&) {
        throw usage_error(std::string(what) + ": not valid JSON: " + std::string(text) +
                          " (quote strings, e.g. '\"text\"')");
    }
}

json parse_components(std::span<const std::string> words) {
    auto components = json::object();
    for (const auto& word : words) {
        const auto eq = word.find('=');
        const std::string name = word.substr(0, eq);
        if (!valid_name(name)) {
            throw usage_error("expected Name or Name=JSON, got '" + word + "'");
        }
        if (components.contains(name)) {
            throw usage_error("component " + name + " given twice");
        }
        if (eq == std::string::npos) {
            components[name] = json::object();  // a bare name takes the component's defaults
            continue;
        }
        const std::string_view value = trim(std::string_view(word).substr(eq + 1));
        if (value.empty()) {
            throw usage_error("component " + name + ": missing value after '='");
        }
        components[name] = parse_json(value, name);
    }
    return components;
}

json parse_component_names(std::span<const std::string> words) {
    auto names = json::array();
    for (const auto& word : words) {
        if (!valid_name(word)) {
            throw usage_error("expected a component name, got '" + word + "'");
        }
        names.push_back(word);
    }
    return names;
}

std::uint64_t parse_entity(std::string_view word) {
    std::uint64_t id = 0;
    const auto* const end = word.data() + word.size();
    const auto [ptr, ec] = std::from_chars(word.data(), end, id);
    if (word.empty() || ec != std::errc{} || ptr != end || id > max_entity) {
        throw usage_error("invalid entity id '" + std::string(word) +
                          "': expected a non-negative integer below 2^53");
    }
    return id;
}

json parse_entity_ref(std::string_view word) {
    // A word that starts like a number is an id (and `-1`, `12.5` are mistakes); anything else is a Name.
    const bool numeric = !word.empty() && (word.front() == '-' || word.front() == '+' ||
                                           (word.front() >= '0' && word.front() <= '9'));
    if (numeric) return parse_entity(word);
    if (word.empty() || word.size() > 64) {
        throw usage_error("invalid entity '" + std::string(word) +
                          "': expected an id (4294967296) or a Name (hero)");
    }
    return std::string(word);  // a Name: the server looks it up
}

std::uint64_t parse_count(std::string_view word, std::string_view what) {
    std::uint64_t n = 0;
    const auto* const end = word.data() + word.size();
    const auto [ptr, ec] = std::from_chars(word.data(), end, n);
    if (word.empty() || ec != std::errc{} || ptr != end || n > max_entity) {
        throw usage_error(std::string(what) + ": expected a non-negative integer, got '" + std::string(word) +
                          "'");
    }
    return n;
}

json split_list(std::span<const std::string> words) {
    auto list = json::array();
    for (const auto& word : words) {
        std::string_view rest = word;
        while (!rest.empty()) {
            const auto comma = rest.find(',');
            const auto item = trim(rest.substr(0, comma));
            if (!item.empty()) {
                list.push_back(std::string(item));
            }
            if (comma == std::string_view::npos) {
                break;
            }
            rest.remove_prefix(comma + 1);
        }
    }
    return list;
}

}  // namespace ecsd::cli
