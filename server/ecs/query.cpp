#include "ecs/query.hpp"

#include <cctype>

#include "ecs/error.hpp"

namespace ecsd::ecs {

namespace {
bool name_char(char c, bool first) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalpha(u) || c == '_' || (!first && (std::isdigit(u) || c == '.' || c == ':' || c == '-'));
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

[[noreturn]] void fail(std::size_t pos, const std::string& what) {
    throw ecs_error(reason::invalid_params, "query: " + what + " at character " + std::to_string(pos + 1));
}

std::string parse_name(std::string_view s, std::size_t pos) {
    s = trim(s);
    if (s.empty()) fail(pos, "expected a component name");
    for (std::size_t i = 0; i < s.size(); ++i)
        if (!name_char(s[i], i == 0)) fail(pos, "unexpected '" + std::string(1, s[i]) + "' in '" + std::string(s) + "'");
    return std::string(s);
}

/// @brief `fn(Name)` -> Name, or empty when the term is not that call.
bool parse_call(std::string_view term, std::string_view fn, std::size_t pos, std::string& out) {
    if (term.substr(0, fn.size()) != fn) return false;
    auto rest = trim(term.substr(fn.size()));
    if (rest.empty() || rest.front() != '(') return false;
    if (rest.back() != ')') fail(pos, "missing ')' after " + std::string(fn));
    out = parse_name(rest.substr(1, rest.size() - 2), pos);
    return true;
}
}  // namespace

query_terms parse_query(std::string_view text) {
    query_terms q;
    if (trim(text).empty()) fail(0, "empty query (use * for every entity)");
    if (text.size() > 4096) fail(4096, "query text longer than 4096 characters");
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        const std::string_view term = trim(text.substr(start, comma - start));
        std::string name;
        if (term.empty()) {
            fail(start, "empty term");
        } else if (term == "*") {
            q.match_all = true;
        } else if (term == "died") {
            q.died = true;
        } else if (parse_call(term, "added", start, name)) {
            q.added.push_back(name);
        } else if (parse_call(term, "changed", start, name)) {
            q.changed.push_back(name);
        } else if (parse_call(term, "removed", start, name)) {
            q.removed.push_back(name);
        } else if (term.front() == '!') {
            q.none.push_back(parse_name(term.substr(1), start));
        } else if (term.find('|') != std::string_view::npos) {
            std::vector<std::string> group;
            std::size_t s = 0;
            while (s <= term.size()) {
                std::size_t bar = term.find('|', s);
                if (bar == std::string_view::npos) bar = term.size();
                group.push_back(parse_name(term.substr(s, bar - s), start));
                s = bar + 1;
            }
            q.any.push_back(std::move(group));
        } else {
            q.all.push_back(parse_name(term, start));
        }
        start = comma + 1;
    }
    return q;
}

}  // namespace ecsd::ecs
