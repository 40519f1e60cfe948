#include "line_parser.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

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

/// @brief A reference at `text[i]` (which is `$`): `$name` or `${name.path}`; advances `i` past it.
const json& reference_at(std::string_view text, std::size_t& i, const variables& vars) {
    std::string_view name;
    std::string_view path;
    if (i + 1 < text.size() && text[i + 1] == '{') {
        const auto close = text.find('}', i + 2);
        if (close == std::string_view::npos) {
            throw usage_error("unterminated ${ in '" + std::string(text) + "'");
        }
        const auto inner = text.substr(i + 2, close - i - 2);
        const auto dot = inner.find('.');
        name = inner.substr(0, dot);
        if (dot != std::string_view::npos) {
            path = inner.substr(dot + 1);
        }
        i = close + 1;
    } else {
        std::size_t j = i + 1;
        while (j < text.size() && is_name_char(text[j])) {
            ++j;
        }
        name = text.substr(i + 1, j - i - 1);
        i = j;
    }
    if (!valid_variable_name(name)) {
        throw usage_error("invalid variable reference in '" + std::string(text) + "'");
    }
    const auto it = vars.find(name);
    if (it == vars.end()) {
        throw usage_error("undefined variable $" + std::string(name));
    }
    return follow(it->second, name, path);
}

/// @brief A number while evaluating: an exact integer as long as every step allows it, else a double.
struct number {
    bool exact = true;
    std::int64_t whole = 0;
    double real = 0;

    [[nodiscard]] double as_double() const noexcept { return exact ? static_cast<double>(whole) : real; }
    static number of(double d) noexcept { return {false, 0, d}; }
};

/// @brief Recursive descent over `expr := term (+|- term)*`, `term := unary (*|/ unary)*`,
///        `unary := (-|+) unary | NUMBER | $var | ( expr )`.
class expression_parser {
  public:
    expression_parser(std::string_view text, const variables& vars) : text_(text), vars_(vars) {}

    number parse() {
        const number n = sum();
        skip_blanks();
        if (pos_ < text_.size()) {
            fail("unexpected '" + std::string(1, text_[pos_]) + "'");
        }
        return n;
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw usage_error("arithmetic: " + what + " at character " + std::to_string(pos_ + 1) + " of '" +
                          std::string(text_) + "'");
    }

    void skip_blanks() {
        while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
    }

    bool take(char c) {
        skip_blanks();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }

    number sum() {
        number left = product();
        for (;;) {
            if (take('+')) {
                left = apply('+', left, product());
            } else if (take('-')) {
                left = apply('-', left, product());
            } else {
                return left;
            }
        }
    }

    number product() {
        number left = unary();
        for (;;) {
            if (take('*')) {
                left = apply('*', left, unary());
            } else if (take('/')) {
                left = apply('/', left, unary());
            } else {
                return left;
            }
        }
    }

    number unary() {
        if (take('-')) {
            return apply('-', number{}, unary());
        }
        if (take('+')) {
            return unary();
        }
        return primary();
    }

    number primary() {
        skip_blanks();
        if (take('(')) {
            const number n = sum();
            if (!take(')')) fail("missing )");
            return n;
        }
        if (pos_ >= text_.size()) fail("a number is missing");
        const char c = text_[pos_];
        if (c == '$') {
            const std::size_t start = pos_;
            const json& value = reference_at(text_, pos_, vars_);
            if (value.is_number_integer() || value.is_number_unsigned()) {
                if (value.is_number_unsigned() &&
                    value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
                    return number::of(value.get<double>());
                }
                return {true, value.get<std::int64_t>(), 0};
            }
            if (value.is_number()) return number::of(value.get<double>());
            const std::string ref(text_.substr(start, pos_ - start));
            pos_ = start;
            fail(ref + " holds '" + as_text(value) + "', not a number");
        }
        if (std::isdigit(static_cast<unsigned char>(c)) == 0 && c != '.') {
            fail("a number or $variable is expected, not '" + std::string(1, c) + "'");
        }
        const char* begin = text_.data() + pos_;
        const char* end = text_.data() + text_.size();
        std::int64_t whole = 0;
        const auto as_int = std::from_chars(begin, end, whole);
        double real = 0;
        const auto as_real = std::from_chars(begin, end, real);
        if (as_real.ec != std::errc()) fail("a malformed number");
        if (as_int.ec == std::errc() && as_int.ptr == as_real.ptr) {
            pos_ += static_cast<std::size_t>(as_int.ptr - begin);
            return {true, whole, 0};
        }
        pos_ += static_cast<std::size_t>(as_real.ptr - begin);
        return number::of(real);
    }

    number apply(char op, const number& a, const number& b) {
        if (op == '/' && b.as_double() == 0) fail("division by zero");
        if (a.exact && b.exact) {
            std::int64_t r = 0;
            bool overflow = false;
            switch (op) {
                case '+':
                    overflow = __builtin_add_overflow(a.whole, b.whole, &r);
                    break;
                case '-':
                    overflow = __builtin_sub_overflow(a.whole, b.whole, &r);
                    break;
                case '*':
                    overflow = __builtin_mul_overflow(a.whole, b.whole, &r);
                    break;
                default:  // '/': exact only when it divides (INT64_MIN / -1 overflows)
                    overflow = a.whole % b.whole != 0 || (a.whole == INT64_MIN && b.whole == -1);
                    if (!overflow) r = a.whole / b.whole;
                    break;
            }
            if (!overflow) return {true, r, 0};
        }
        const double x = a.as_double();
        const double y = b.as_double();
        switch (op) {
            case '+':
                return number::of(x + y);
            case '-':
                return number::of(x - y);
            case '*':
                return number::of(x * y);
            default:
                return number::of(x / y);
        }
    }

    std::string_view text_;
    const variables& vars_;
    std::size_t pos_ = 0;
};

}  // namespace

bool is_expression(const std::vector<std::string>& words) noexcept {
    if (words.empty() || words.front().empty()) {
        return false;
    }
    const char c = words.front().front();
    return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '$' || c == '(' || c == '-' ||
           c == '+';
}

json evaluate(const std::vector<std::string>& words, const variables& vars) {
    std::string text;
    for (const auto& w : words) {
        text += (text.empty() ? "" : " ") + w;
    }
    if (words.size() == 1 && text.starts_with('$')) {
        std::size_t i = 0;
        const json& value = reference_at(text, i, vars);
        if (i == text.size()) {
            return value;  // `$copy = $orig`: whatever it holds
        }
    }
    const number n = expression_parser(text, vars).parse();
    if (n.exact) {
        return n.whole;
    }
    if (!std::isfinite(n.real)) {
        throw usage_error("arithmetic: '" + text + "' is not a finite number");
    }
    // A whole result is an integer (so `repeat $n` and ids take it); 2^53 bounds the exact ones.
    if (n.real == std::trunc(n.real) && std::fabs(n.real) < 9007199254740992.0) {
        return static_cast<std::int64_t>(n.real);
    }
    return n.real;
}

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
