#include "expect.hpp"

#include <array>
#include <string_view>

#include "errors.hpp"
#include "json.hpp"

namespace ecsd::cli {

namespace {

json value_of(const std::string& word) {
    auto parsed = json::parse(word, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? json(word) : parsed;
}

bool truthy(const json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    if (v.is_string()) return !v.get_ref<const std::string&>().empty();
    return !v.empty();
}

std::string shown(const json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::optional<std::string> failed_expectation(const std::vector<std::string>& words) {
    if (words.size() == 1) {
        if (truthy(value_of(words[0]))) return std::nullopt;
        return "expected a true value, got " + words[0];
    }
    if (words.size() != 3) {
        throw usage_error("usage: expect VALUE, or expect VALUE OP VALUE with OP one of == != < <= > >=");
    }
    const json a = value_of(words[0]);
    const json b = value_of(words[2]);
    const std::string& op = words[1];
    bool holds = false;
    if (op == "==" || op == "!=") {
        holds = (a == b) == (op == "==");
    } else if (op == "<" || op == "<=" || op == ">" || op == ">=") {
        if (a.is_number() != b.is_number() || (!a.is_number() && !(a.is_string() && b.is_string()))) {
            throw usage_error("expect: " + op + " compares two numbers or two texts, not " + shown(a) +
                              " and " + shown(b));
        }
        const bool less = a < b, greater = b < a;
        holds = op == "<" ? less : op == "<=" ? !greater : op == ">" ? greater : !less;
    } else {
        throw usage_error("expect: unknown operator '" + op + "' (use == != < <= > >=)");
    }
    if (holds) return std::nullopt;
    return "expected " + shown(a) + " " + op + " " + shown(b);
}

}  // namespace ecsd::cli
