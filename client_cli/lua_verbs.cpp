#include "lua_verbs.hpp"

#include <cctype>
#include <fstream>
#include <iostream>
#include <iterator>

#include "args.hpp"
#include "errors.hpp"
#include "session.hpp"
#include "verbs.hpp"

namespace ecsd::cli {
namespace {

/// @brief The digits at the front of `text` (and drops them), or "" when it starts otherwise.
std::string take_digits(std::string_view& text) {
    std::size_t n = 0;
    while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n])) != 0) ++n;
    std::string digits(text.substr(0, n));
    text.remove_prefix(n);
    return digits;
}

std::string read_source(std::string_view verb, const std::string& file) {
    std::string text;
    if (file == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
        std::ifstream in(file, std::ios::binary);
        if (!in) throw usage_error(std::string(verb) + ": cannot open " + file);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (text.empty())
        throw usage_error(std::string(verb) + ": " + (file == "-" ? std::string("standard input") : file) +
                          " is empty");
    return text;
}

json define_script(session& s, const verb_input& input, std::string_view verb, const std::string& method,
                   json params) {
    const std::string file = input.one("--file").value_or("");
    if (file.empty())
        throw usage_error(std::string(verb) + ": --file FILE is required ('-': standard input)");
    const std::string name = input.one("NAME").value_or("");
    params["name"] = name;
    params["source"] = read_source(verb, file);
    request req{method, std::move(params)};
    apply_world(req, s.world);
    try {
        return s.client.call(req.method, req.params);
    } catch (const server_error& e) {
        json error = e.error();
        error["message"] = located_in_file(e.message(), name,
                                           file == "-" ? std::string_view("stdin") : std::string_view(file));
        throw server_error(error);
    }
}

}  // namespace

std::string located_in_file(std::string_view message, std::string_view name, std::string_view file) {
    const std::string head = std::string(name) + ": ";
    if (!message.starts_with(head)) return std::string(file) + ": " + std::string(message);
    std::string_view rest = message.substr(head.size());
    constexpr std::string_view syntax = "syntax error at line ";
    if (rest.starts_with(syntax)) {
        std::string_view at = rest.substr(syntax.size());
        const auto line = take_digits(at);
        if (!line.empty() && at.starts_with(", column ")) {
            at.remove_prefix(9);
            const auto column = take_digits(at);
            if (!column.empty() && at.starts_with(": ")) {
                at.remove_prefix(2);  // Lua's own text says "syntax error near ..." at times
                return std::string(file) + ":" + line + ":" + column +
                       (at.starts_with("syntax error") ? ": " : ": syntax error: ") + std::string(at);
            }
        }
    }
    const std::string inner = std::string(name) + ":";
    if (rest.starts_with(inner)) {  // Lua's own "NAME:LINE: text" from running the chunk
        std::string_view at = rest.substr(inner.size());
        const auto line = take_digits(at);
        if (!line.empty() && at.starts_with(":")) return std::string(file) + ":" + line + std::string(at);
    }
    return std::string(file) + ": " + std::string(rest);
}

json run_define_system(session& s, const verb_input& input) {
    json params = json::object();
    const auto query = input.one("--query");
    if (!query) throw usage_error("system define: --query QUERY is required (the entities w:each() walks)");
    params["query"] = *query;
    params["phase"] = input.one("--phase").value_or("simulation");
    if (auto order = input.one("--order")) params["order"] = parse_json(*order, "--order");
    if (auto every = input.one("--every")) params["every"] = parse_count(*every, "--every");
    return define_script(s, input, "system define", "world.define_system", std::move(params));
}

json run_define_spell(session& s, const verb_input& input) {
    return define_script(s, input, "spell define", "world.define_spell", json::object());
}

json run_define_action(session& s, const verb_input& input) {
    return define_script(s, input, "action define", "world.define_action", json::object());
}

}  // namespace ecsd::cli
