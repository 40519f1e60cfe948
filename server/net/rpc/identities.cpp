#include "rpc/identities.hpp"

#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <openssl/evp.h>

#include "rpc/constant_time.hpp"

namespace ecsd::net {
namespace {

bool is_hex64(std::string_view s) noexcept {
    if (s.size() != 64) return false;
    for (const char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
    return true;
}

/// An identity's name: 1 to 64 of letters, digits, '_', '-', '.', '@'.
bool is_identity_name(std::string_view s) noexcept {
    if (s.empty() || s.size() > 64) return false;
    for (const char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '_' || c == '-' || c == '.' || c == '@';
        if (!ok) return false;
    }
    return true;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

}  // namespace

std::string_view role_name(role r) noexcept {
    switch (r) {
        case role::admin:
            return "admin";
        case role::observer:
            return "observer";
        case role::player:
            return "player";
    }
    return "player";
}

std::optional<role> role_from(std::string_view name) noexcept {
    for (const auto r : {role::admin, role::observer, role::player})
        if (name == role_name(r)) return r;
    return std::nullopt;
}

bool role_may_call(role r, method_flags flags) noexcept {
    if (r == role::admin || has(flags, method_flags::pre_auth)) return true;
    if (has(flags, method_flags::action)) return r == role::player;
    return has(flags, method_flags::read_only) && !has(flags, method_flags::operator_only);
}

std::string sha256_hex(std::string_view text) {
    std::array<unsigned char, 32> digest{};
    unsigned int length = 0;
    if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
        length != digest.size())
        throw std::runtime_error("SHA-256 failed (OpenSSL)");
    constexpr std::string_view digits = "0123456789abcdef";
    std::string out;
    out.reserve(64);
    for (const auto b : digest) {
        out += digits[b >> 4U];
        out += digits[b & 0xfU];
    }
    return out;
}

identity_table identity_table::parse(std::string_view text, std::string_view where) {
    identity_table t;
    std::istringstream in{std::string(text)};
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (const auto hash_mark = line.find('#'); hash_mark != std::string::npos) line.resize(hash_mark);
        std::istringstream fields(line);
        std::string hash;
        std::string name;
        std::string role_text;
        std::string extra;
        if (!(fields >> hash)) continue;  // blank or a comment
        const auto fail = [&](const std::string& why) {
            throw std::runtime_error(std::string(where) + ":" + std::to_string(number) + ": " + why);
        };
        if (!(fields >> name >> role_text) || (fields >> extra))
            fail("expected three fields, SHA256_HEX IDENTITY ROLE (ecsd --hash-token TOKEN prints the hash)");
        if (!is_hex64(hash))
            fail("the first field must be a token's SHA-256, 64 hex digits (ecsd --hash-token TOKEN)");
        if (!is_identity_name(name)) fail("an identity is 1 to 64 letters, digits, '_', '-', '.' or '@'");
        const auto r = role_from(role_text);
        if (!r) fail("unknown role '" + role_text + "' (admin, observer or player)");
        hash = lower(hash);
        for (const auto& e : t.entries_)
            if (e.hash == hash) fail("this token's hash is already given for '" + e.who.name + "'");
        t.entries_.push_back({std::move(hash), {std::move(name), *r}});
    }
    return t;
}

identity_table identity_table::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read the tokens file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw std::runtime_error("cannot read the tokens file " + path);
    return parse(text.str(), path);
}

std::optional<identity> identity_table::find(std::string_view hash) const {
    const entry* found = nullptr;
    for (const auto& e : entries_)
        if (constant_time_equal(e.hash, hash) && found == nullptr) found = &e;
    if (found == nullptr) return std::nullopt;
    return found->who;
}

void identity_store::set(identity_table table) {
    const std::lock_guard lock(mutex_);
    table_ = std::move(table);
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::optional<identity> identity_store::find(std::string_view hash) const {
    const std::lock_guard lock(mutex_);
    return table_.find(hash);
}

}  // namespace ecsd::net
