#pragma once
// Writes JSON text straight onto a string, for hot read paths (world.get_components) that would
// otherwise build a json tree only to serialise it: each object node and key is an allocation.
// Scalars go through nlohmann's own serializer, so numbers read exactly as json::dump() writes
// them; callers write object keys in sorted order, as json::dump() does for std::map objects.
// Doubles have a faster path, number(): the same layout as json::dump() (3.0, 0.001, 1e-05,
// 1.5e+20), with the shortest digits that read back as the same double (Dragonbox), and
// whole numbers below 1e15 written as integers.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ecsd::ecs {

namespace internal {
inline constexpr char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
/// @brief x < 1e8 as eight digits, zero-padded. Always inlined: a call per block (write_decimal
/// makes up to three) cost more than the digits.
[[gnu::always_inline]] inline void eight_digits(char* at, std::uint32_t x) noexcept {
    const std::uint32_t hi = x / 10000;
    const std::uint32_t lo = x % 10000;
    std::memcpy(at, digit_pairs + 2 * (hi / 100), 2);
    std::memcpy(at + 2, digit_pairs + 2 * (hi % 100), 2);
    std::memcpy(at + 4, digit_pairs + 2 * (lo / 100), 2);
    std::memcpy(at + 6, digit_pairs + 2 * (lo % 100), 2);
}
inline constexpr std::uint64_t powers_of_ten[20] = {1ULL,
                                                    10ULL,
                                                    100ULL,
                                                    1000ULL,
                                                    10000ULL,
                                                    100000ULL,
                                                    1000000ULL,
                                                    10000000ULL,
                                                    100000000ULL,
                                                    1000000000ULL,
                                                    10000000000ULL,
                                                    100000000000ULL,
                                                    1000000000000ULL,
                                                    10000000000000ULL,
                                                    100000000000000ULL,
                                                    1000000000000000ULL,
                                                    10000000000000000ULL,
                                                    100000000000000000ULL,
                                                    1000000000000000000ULL,
                                                    10000000000000000000ULL};
/// @brief How many digits x has (1 <= x): from its bit width, as fmt's count_digits does.
[[gnu::always_inline]] inline int digit_count(std::uint64_t x) noexcept {
    const int guess =
        ((64 - __builtin_clzll(x | 1)) * 1233) >> 12;  // floor(log10(2^bits)): one short at most
    return guess + 1 - static_cast<int>(x < powers_of_ten[guess]);
}
/// @brief Writes x's digits (1 <= x < 1e8, no leading zeros), ending at `end`, two at a time.
[[gnu::always_inline]] inline void top_digits(char* end, std::uint32_t x) noexcept {
    while (x >= 100) {
        end -= 2;
        std::memcpy(end, digit_pairs + 2 * (x % 100), 2);
        x /= 100;
    }
    if (x >= 10) {
        std::memcpy(end - 2, digit_pairs + 2 * x, 2);
    } else {
        end[-1] = static_cast<char>('0' + x);
    }
}
}  // namespace internal

/// @brief Writes v in decimal at `out` (room for 24 characters: at most 20 are written) and returns
/// the end, as std::to_chars does. Blocks of eight digits from a table of pairs, as many as v needs
/// (hit points one, entity ids two, a double's significand up to three), the top block's length
/// from its bit width: no division by a variable, and each digit stored once where it belongs. A
/// scan for the first digit over a zero-padded copy, then a copy of a fixed size that read back
/// the small stores just made, cost 11% more per number and id (a throwaway loop of a query page's
/// values, 2026-12-06).
[[gnu::always_inline]] inline char* write_decimal(char* out, std::uint64_t v) noexcept {
    if (v < 100000000) {
        const auto x = static_cast<std::uint32_t>(v);
        if (x == 0) {
            *out = '0';
            return out + 1;
        }
        const int n = internal::digit_count(x);
        internal::top_digits(out + n, x);
        return out + n;
    }
    const auto low = static_cast<std::uint32_t>(v % 100000000);
    const std::uint64_t rest = v / 100000000;
    if (rest < 100000000) {
        const auto top = static_cast<std::uint32_t>(rest);  // >= 1
        const int n = internal::digit_count(top);
        internal::top_digits(out + n, top);
        internal::eight_digits(out + n, low);
        return out + n + 8;
    }
    const auto top = static_cast<std::uint32_t>(rest / 100000000);  // v < 1.9e19: at most four digits
    const int n = internal::digit_count(top);
    internal::top_digits(out + n, top);
    internal::eight_digits(out + n, static_cast<std::uint32_t>(rest % 100000000));
    internal::eight_digits(out + n + 8, low);
    return out + n + 16;
}

/// @brief A short piece of JSON text that is the same every time it is written (a component's
/// `"Position":`, a field's `,"x":`), kept in a fixed-size padded buffer so that json_text::piece()
/// copies it with one copy of a fixed size, inlined. A key written by json_text::key() was a scan
/// for characters to escape and a copy of its own length (a call into memmove), nine times per
/// entity of a query page: a sixth of the page's server CPU. Text longer than max_size is kept
/// whole in `long_text_` and written as it is.
class json_piece {
  public:
    static constexpr std::size_t room = 40;
    static constexpr std::size_t max_size = room - 1;

    json_piece() = default;
    /// @brief The piece holding `text` (JSON already: the caller has escaped it).
    explicit json_piece(std::string_view text) : size_(text.size()) {
        if (text.size() <= max_size) {
            std::memcpy(bytes_, text.data(), text.size());
        } else {
            long_text_.assign(text);
        }
    }
    /// @brief `"key":` with `prefix` before it (`{` or `,` for a field), escaped as JSON needs.
    static json_piece key(std::string_view k, std::string_view prefix = {}) {
        std::string text(prefix);
        text += nlohmann::json(std::string(k)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        text += ':';
        return json_piece(text);
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool is_short() const noexcept { return size_ <= max_size; }
    /// @brief room bytes: the text, then zeros (short pieces only).
    [[nodiscard]] const char* padded() const noexcept { return bytes_; }
    [[nodiscard]] std::string_view text() const noexcept {
        return is_short() ? std::string_view(bytes_, size_) : std::string_view(long_text_);
    }

  private:
    char bytes_[room] = {};
    std::size_t size_ = 0;
    std::string long_text_;
};

/// The text collects in a small buffer of the writer's own and reaches the string when the buffer
/// fills, at value(), at flush() and when the writer goes: a query page is thousands of pieces of a
/// few bytes, and each std::string::append was a call into memmove. Read the string only after
/// flush() or once the writer is gone.
class json_text {
  public:
    // buf_ is left unset: only its first used_ bytes are ever read, and zeroing it would cost every
    // short-lived writer a 512-byte memset.
    explicit json_text(std::string& out) : out_(out) {}  // NOLINT(cppcoreguidelines-pro-type-member-init)
    json_text(const json_text&) = delete;
    json_text& operator=(const json_text&) = delete;
    ~json_text() { flush(); }

    /// @brief Moves the buffered text onto the string.
    void flush() {
        out_.append(buf_, used_);
        used_ = 0;
    }
    /// @brief Appends text that is already JSON (punctuation, literals).
    void raw(std::string_view text) { put(text.data(), text.size()); }
    /// @brief Appends any JSON value.
    void value(const nlohmann::json& v) {
        flush();           // the serializer appends to the string itself
        if (!serializer_)  // made on first use: it allocates, and most writers only need number()
            serializer_.emplace(nlohmann::detail::output_adapter<char>(out_), ' ',
                                nlohmann::json::error_handler_t::replace);
        serializer_->dump(v, false, false, 0);
    }
    /// @brief Appends a double as json::dump() lays it out (null when not finite, as dump() does).
    /// The digits are the shortest that read back as `v`: the same as dump()'s but for a last
    /// digit that can differ where two shortest forms exist; both read back as `v`.
    void number(double v) {
        if (!std::isfinite(v)) {
            raw("null");
            return;
        }
        // Written in place in the buffer, with copies of fixed sizes (inlined, where a copy of the
        // digits' own length was a call into memmove): they write up to 48 bytes past the start.
        if (capacity - used_ < number_room) flush();
        char* const start = buf_ + used_;
        char* p = start;
        if (std::signbit(v)) {
            *p++ = '-';
            v = -v;
        }
        if (v == 0) {
            std::memcpy(p, "0.0", 3);
            used_ += static_cast<std::size_t>(p + 3 - start);
            return;
        }
        // Whole numbers below 1e15 (hit points, counts, grid positions: most of a game's values)
        // are laid out as dump() does, digits then ".0", without the shortest-digits search.
        // (Checked by truncating: std::floor is a dozen instructions without SSE4.1's round.)
        if (v < 1e15 && static_cast<double>(static_cast<std::uint64_t>(v)) == v) {
            p = write_decimal(p, static_cast<std::uint64_t>(v));
            std::memcpy(p, ".0", 2);
            used_ += static_cast<std::size_t>(p + 2 - start);
            return;
        }
        // The shortest digits that read back as v, from fmt's Dragonbox (fmt comes with spdlog;
        // Debian 12's is 9.1): about twice as fast as std::to_chars, whose digits we used to read
        // back out of its scientific text. A watch of movers writes two numbers per entity.
        const auto dec = fmt::detail::dragonbox::to_decimal(v);  // significand without trailing zeros
        const std::uint64_t sig = dec.significand;
        // The common layouts write each digit once, where it belongs. Digits written to a scratch
        // buffer and copied into place made each copy wait for a dozen two-byte stores just made
        // (a store-forwarding stall).
        if (v >= 1 && v < 1e15) {  // dig.its (v is not whole): the whole part, the point, -exponent digits
            // Truncated, v is exactly the digits before the point (the shortest digits lie within
            // half an ulp of v, and no integer does), and how many digits follow it is Dragonbox's
            // exponent: no division and no digit count, and the layout is known before the digits.
            const auto whole = static_cast<std::uint64_t>(v);
            const int w = -dec.exponent;  // 1 to 16: at most 17 digits, at least one before the point
            p = write_decimal(p, whole);
            *p++ = '.';
            // The fraction's w digits with their leading zeros, as 16 digits scaled so that they
            // come first (the zeros past them lie past the end, written over or never used).
            const std::uint64_t fraction =
                (sig - whole * internal::powers_of_ten[w]) * internal::powers_of_ten[16 - w];
            internal::eight_digits(p, static_cast<std::uint32_t>(fraction / 100000000));
            internal::eight_digits(p + 8, static_cast<std::uint32_t>(fraction % 100000000));
            used_ += static_cast<std::size_t>(p + w - start);
            return;
        }
        const int k = internal::digit_count(sig);
        // As nlohmann's format_buffer: n is where the decimal point falls in the digits. dump()'s
        // digits[000].0 (k <= n <= 15) is a whole number below 1e15, written above, and 1 <= v <
        // 1e15 is dig.its: what is left is below 1, or 1e15 and above.
        const int n = dec.exponent + k;
        constexpr int min_exp = -4;
        if (min_exp < n && n <= 0) {  // 0.[000]digits
            std::memcpy(p, "0.", 2);
            std::memset(p + 2, '0', 4);
            p += 2 - n;
            p = write_decimal(p, sig);
        } else {
            // d[.igits]e+XX: rare, so the scratch copy stays (at most 17 digits, and what the
            // copy reaches past them).
            char digits[48] = {};
            (void)write_decimal(digits, sig);
            *p++ = digits[0];
            if (k > 1) {
                *p++ = '.';
                std::memcpy(p, digits + 1, 24);
                p += k - 1;
            }
            int x = n - 1;
            *p++ = 'e';
            *p++ = x < 0 ? '-' : '+';
            x = x < 0 ? -x : x;
            if (x >= 100) {
                *p++ = static_cast<char>('0' + x / 100);
                x %= 100;
            }
            *p++ = static_cast<char>('0' + x / 10);
            *p++ = static_cast<char>('0' + x % 10);
        }
        used_ += static_cast<std::size_t>(p - start);
    }
    /// @brief Appends a piece made once (json_piece::key): the same text as key(), without the scan.
    void piece(const json_piece& p) {
        if (p.is_short() && capacity - used_ >= json_piece::room) {
            std::memcpy(buf_ + used_, p.padded(), json_piece::room);  // fixed size: inlined
            used_ += p.size();
            return;
        }
        const auto t = p.text();
        put(t.data(), t.size());
    }
    /// @brief Appends "k": with k escaped.
    void key(std::string_view k) {
        string(k);
        put(':');
    }
    /// @brief Appends an unsigned integer (an entity id), as json::dump() writes it.
    void unsigned_integer(std::uint64_t v) {
        if (capacity - used_ < 24) flush();  // write_decimal writes at most 20 bytes
        used_ = static_cast<std::size_t>(write_decimal(buf_ + used_, v) - buf_);
    }
    /// @brief Appends a JSON string.
    void string(std::string_view s) {
        if (plain(s)) {
            put('"');
            put(s.data(), s.size());
            put('"');
        } else {
            value(nlohmann::json(std::string(s)));  // rare: let the serializer escape it
        }
    }

  private:
    static constexpr std::size_t capacity = 512;
    // The longest a number's text is (25: -d.dddddddddddddddde-308), with what the fixed-size
    // copies write past it.
    static constexpr std::size_t number_room = 64;

    void put(char c) {
        if (used_ == capacity) flush();
        buf_[used_++] = c;
    }
    void put(const char* s, std::size_t n) {
        if (n > capacity || used_ > capacity - n) {  // the buffer's text, then this piece, onto the string
            flush();
            out_.append(s, n);
            return;
        }
        if (n == 0) return;  // s may be null then, which memcpy must not see
        std::memcpy(buf_ + used_, s, n);
        used_ += n;
    }
    static bool plain(std::string_view s) noexcept {
        for (const char c : s) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') return false;
        }
        return true;
    }

    std::string& out_;
    std::size_t used_ = 0;
    char buf_[capacity];
    std::optional<nlohmann::detail::serializer<nlohmann::json>> serializer_;
};

}  // namespace ecsd::ecs
