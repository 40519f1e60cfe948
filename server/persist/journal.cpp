#include "persist/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/json_parse.hpp"
#include "persist/atomic_file.hpp"
#include "persist/snapshot.hpp"

namespace ecsd::persist {

fsync_policy parse_fsync_policy(std::string_view text) {
    if (text == "always") return fsync_policy::always;
    if (text == "everysec") return fsync_policy::everysec;
    if (text == "never") return fsync_policy::never;
    throw std::invalid_argument("fsync policy must be always, everysec or never");
}

const char* to_string(fsync_policy p) noexcept {
    switch (p) {
        case fsync_policy::always:
            return "always";
        case fsync_policy::everysec:
            return "everysec";
        case fsync_policy::never:
            return "never";
    }
    return "?";
}

std::uint32_t crc32(std::string_view data) noexcept {
    // Slicing-by-8 (Intel's, as zlib does): eight table lookups per 8 bytes instead of one per byte.
    static const auto tables = [] {
        std::array<std::array<std::uint32_t, 256>, 8> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[0][i] = c;
        }
        for (std::uint32_t i = 0; i < 256; ++i)
            for (std::size_t k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFu;
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t n = data.size();
    for (; n >= 8; n -= 8, p += 8) {
        const std::uint32_t lo = c ^ (std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 |
                                      std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24);
        c = tables[7][lo & 0xFF] ^ tables[6][(lo >> 8) & 0xFF] ^ tables[5][(lo >> 16) & 0xFF] ^
            tables[4][lo >> 24] ^ tables[3][p[4]] ^ tables[2][p[5]] ^ tables[1][p[6]] ^ tables[0][p[7]];
    }
    for (; n > 0; --n, ++p) c = tables[0][(c ^ *p) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

namespace {
/// @brief The 8 hex digits of a record's checksum; false when they are not 8 hex digits.
bool parse_hex8(std::string_view text, std::uint32_t& out) noexcept {
    if (text.size() != 8) return false;
    std::uint32_t v = 0;
    for (const char ch : text) {
        std::uint32_t d = 0;
        if (ch >= '0' && ch <= '9')
            d = static_cast<std::uint32_t>(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = static_cast<std::uint32_t>(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F')
            d = static_cast<std::uint32_t>(ch - 'A' + 10);
        else
            return false;
        v = v << 4 | d;
    }
    out = v;
    return true;
}

}  // namespace

std::string encode_record(const json& record) {
    const std::string text = record.dump();
    char head[10];
    std::snprintf(head, sizeof head, "%08x ", crc32(text));
    return std::string(head, 9) + text + "\n";
}

journal_writer::journal_writer(std::filesystem::path path, fsync_policy policy)
    : path_(std::move(path)), policy_(policy) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw_errno("open journal " + path_.string());
    const auto end = ::lseek(fd_, 0, SEEK_END);
    bytes_ = end > 0 ? static_cast<std::uint64_t>(end) : 0;
    last_sync_ = std::chrono::steady_clock::now();
}

journal_writer::~journal_writer() {
    if (fd_ >= 0) {
        if (dirty_ && policy_ != fsync_policy::never) ::fdatasync(fd_);
        ::close(fd_);
    }
}

void journal_writer::append(const json& record) {
    if (trim_pending_) {  // an earlier failure could not cut its partial record: do it first
        if (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0)
            throw_errno("truncate journal " + path_.string());
        trim_pending_ = false;
    }
    const std::string line = encode_record(record);
    const auto undo = [&](const std::string& what) {
        const int err = errno;
        // Cut a partial record back off: the next append must not land after half a line.
        if (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) trim_pending_ = true;
        throw storage_error(err, what);
    };
    if (!write_all(fd_, line)) undo("append to journal " + path_.string());
    dirty_ = true;
    if (policy_ == fsync_policy::always) {
        if (::fdatasync(fd_) != 0) undo("fsync journal " + path_.string());
        dirty_ = false;
        last_sync_ = std::chrono::steady_clock::now();
    }
    bytes_ += line.size();
    if (policy_ == fsync_policy::everysec) {
        try {
            maybe_sync();
        } catch (const std::system_error&) {
            // The record is written; the policy allows a second of loss on a machine crash. The next
            // append tries the fsync again.
        }
    }
}

void journal_writer::rollback(std::uint64_t length) {
    if (length >= bytes_) return;
    if (::ftruncate(fd_, static_cast<off_t>(length)) != 0) throw_errno("truncate journal " + path_.string());
    bytes_ = length;
    // With `always`, the cut reaches the disk too, so a machine crash cannot bring the record back.
    if (policy_ == fsync_policy::always) sync();
}

void journal_writer::maybe_sync() {
    if (policy_ != fsync_policy::everysec || !dirty_) return;
    if (std::chrono::steady_clock::now() - last_sync_ >= std::chrono::seconds(1)) sync();
}

void journal_writer::sync() {
    if (::fdatasync(fd_) != 0) throw_errno("fsync journal " + path_.string());
    dirty_ = false;
    last_sync_ = std::chrono::steady_clock::now();
}

void journal_writer::truncate() {
    if (::ftruncate(fd_, 0) != 0) throw_errno("truncate journal " + path_.string());
    bytes_ = 0;
    if (policy_ != fsync_policy::never) sync();
}

void journal_writer::drop_prefix(std::uint64_t length) {
    if (length == 0) return;
    if (length >= bytes_) {
        truncate();
        return;
    }
    std::string tail;
    if (!read_file_from(path_, length, tail)) throw_errno("open journal " + path_.string());
    if (tail.size() < bytes_ - length) throw storage_error(EIO, "read journal " + path_.string());
    tail.resize(bytes_ - length);  // not a partial record an earlier failure left past bytes_
    // Opened before the rename: from the rename on, appends go to the new journal, never the old.
    const int fd = replace_file_open(path_, tail);
    ::close(fd_);
    fd_ = fd;
    bytes_ = tail.size();
    dirty_ = false;
    trim_pending_ = false;
    last_sync_ = std::chrono::steady_clock::now();
    sync_directory(path_.parent_path());
}

journal_error::journal_error(const std::filesystem::path& file_, std::uint64_t offset_,
                             std::uint64_t records_lost_, std::uint64_t bytes_lost_, const std::string& what)
    : persist_error(file_.string() + ": " + what + " at byte offset " + std::to_string(offset_)),
      file(file_),
      offset(offset_),
      records_lost(records_lost_),
      bytes_lost(bytes_lost_) {}

journal_error journal_damage(const std::filesystem::path& file, std::string_view data, std::uint64_t offset,
                             const std::string& what) {
    std::uint64_t records = 0;
    for (auto i = offset; i < data.size(); ++i) records += data[i] == '\n';
    if (!data.empty() && data.back() != '\n' && offset < data.size()) ++records;
    return journal_error(file, offset, records, data.size() - offset, what);
}

namespace {
/// @brief Checks a record's JSON without building its tree (SAX): an object whose "seq" and "tick"
/// are unsigned integers, as json::parse would see it (a repeated key: the last one counts).
class record_check : public nlohmann::json_sax<json> {
  public:
    bool null() override { return other(); }
    bool boolean(bool /*val*/) override { return other(); }
    bool number_integer(number_integer_t /*val*/) override { return other(); }
    bool number_unsigned(number_unsigned_t val) override {
        if (depth_ == 1) {
            if (key_ == top_key::seq) seq = val, has_seq = true;
            if (key_ == top_key::tick) tick = val, has_tick = true;
        }
        return true;
    }
    bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return other(); }
    bool string(string_t& /*val*/) override { return other(); }
    bool binary(binary_t& /*val*/) override { return other(); }
    bool start_object(std::size_t /*elements*/) override {
        if (depth_ == 0) object = true;
        if (depth_ == 1) other();
        ++depth_;
        return true;
    }
    bool end_object() override {
        --depth_;
        return true;
    }
    bool start_array(std::size_t /*elements*/) override {
        if (depth_ == 1) other();
        ++depth_;
        return true;
    }
    bool end_array() override {
        --depth_;
        return true;
    }
    bool key(string_t& val) override {
        if (depth_ != 1) return true;
        key_ = val == "seq" ? top_key::seq : val == "tick" ? top_key::tick : top_key::other;
        if (val == "method") request = true;
        return true;
    }
    bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                     const nlohmann::detail::exception& /*ex*/) override {
        return false;
    }

    [[nodiscard]] bool good() const noexcept { return object && has_seq && has_tick; }

    bool object = false;
    bool has_seq = false;
    bool has_tick = false;
    bool request = false;
    std::uint64_t seq = 0;
    std::uint64_t tick = 0;

  private:
    /// @brief A value other than an unsigned integer: under "seq" or "tick" the record is bad,
    /// unless a later repeat of the key fixes it.
    bool other() {
        if (depth_ == 1 && key_ == top_key::seq) has_seq = false;
        if (depth_ == 1 && key_ == top_key::tick) has_tick = false;
        return true;
    }
    enum class top_key { other, seq, tick };
    int depth_ = 0;
    top_key key_ = top_key::other;
};

/// @brief The same check, read by simdjson (a vectorised parse, cheaper than the SAX lexer), on `root`
/// (read_dom's DOM of the record). False where it cannot say how json::parse would read the
/// record (not JSON to simdjson, or read otherwise): then the SAX check decides.
bool quick_check(std::string_view text, simdjson::dom::element& root, record_check& check) {
    if (!protocol::read_dom(text, root)) return false;
    simdjson::dom::object fields;
    if (root.get(fields) != simdjson::SUCCESS) return true;  // not an object: check.object stays false
    check.object = true;
    for (const auto field : fields) {  // in order: a repeated key's last value counts
        std::uint64_t value = 0;
        const bool is_unsigned = field.value.get_uint64().get(value) == simdjson::SUCCESS;
        if (field.key == "seq") {
            check.has_seq = is_unsigned;
            check.seq = value;
        } else if (field.key == "tick") {
            check.has_tick = is_unsigned;
            check.tick = value;
        } else if (field.key == "method") {
            check.request = true;
        }
    }
    return true;
}
}  // namespace

std::string_view journal_contents::text(std::size_t i) const noexcept {
    const auto begin = offsets[i] + 9;
    const auto end = (i + 1 < offsets.size() ? offsets[i + 1] : valid_bytes) - 1;  // before the LF
    return std::string_view(data).substr(begin, end - begin);
}

journal_reader::journal_reader(std::filesystem::path path) : path_(std::move(path)) {
    if (!read_file_from(path_, 0, data_)) return;
    // Only a record without its final newline is torn: the newline is the last byte written.
    const auto last_newline = data_.rfind('\n');
    valid_bytes_ = last_newline == std::string::npos ? 0 : last_newline + 1;
    records_ = static_cast<std::uint64_t>(
        std::count(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(valid_bytes_), '\n'));
}

bool journal_reader::next(journal_record& out, std::uint64_t parse_after) {
    if (offset_ >= valid_bytes_) return false;
    const auto nl = data_.find('\n', offset_);
    const std::string_view line(data_.data() + offset_, nl - offset_);
    bool good = line.size() > 9 && line[8] == ' ';
    record_check check;
    simdjson::dom::element root;
    bool dom = false;
    std::string_view text;
    if (good) {
        text = line.substr(9);
        std::uint32_t want = 0;
        good = parse_hex8(line.substr(0, 8), want) && crc32(text) == want;
        // Deeper than any accepted request could make it: damage, never a tree to build.
        if (good && protocol::exceeds_depth(text, protocol::max_document_depth)) good = false;
        if (good) {
            dom = quick_check(text, root, check);
            good = (dom || json::sax_parse(text, &check, json::input_format_t::json, true, false)) &&
                   check.good();
        }
    }
    if (!good)
        throw journal_damage(path_, data_, offset_, "corrupt journal record (checksum or format mismatch)");
    if (!first_ && check.seq != last_seq_ + 1)
        throw journal_damage(path_, data_, offset_,
                             "journal sequence gap: record " + std::to_string(check.seq) +
                                 " follows record " + std::to_string(last_seq_) + " (expected " +
                                 std::to_string(last_seq_ + 1) + ")");
    out.offset = offset_;
    out.seq = check.seq;
    out.tick = check.tick;
    out.request = check.request;
    out.method.clear();
    out.params = nullptr;  // a reused record's old tree goes here, on the reading thread
    if (check.request && check.seq > parse_after) {
        bool method_is_text = false;
        bool has_params = false;
        if (dom) {  // the DOM the check read: the text is parsed once; the envelope needs no tree
            for (const auto field : simdjson::dom::object(root)) {  // a repeated key's last value counts
                if (field.key == "method") {
                    std::string_view m;
                    method_is_text = field.value.get_string().get(m) == simdjson::SUCCESS;
                    out.method.assign(m);
                } else if (field.key == "params") {
                    has_params = true;
                    protocol::build(field.value, out.params);
                }
            }
        } else {  // as parse_json would read it
            json tree = json::parse(text, nullptr, /*allow_exceptions=*/false);
            const auto& m = tree["method"];
            method_is_text = m.is_string();
            if (method_is_text) out.method = m.get<std::string>();
            if (const auto p = tree.find("params"); p != tree.end()) {
                has_params = true;
                out.params = std::move(*p);
            }
        }
        if (!has_params) out.params = json::object();  // as the dispatcher reads a request without them
        if (!method_is_text)
            throw journal_damage(path_, data_, offset_,
                                 "corrupt journal record (its method is not a string)");
    }
    first_ = false;
    last_seq_ = check.seq;
    offset_ = nl + 1;
    return true;
}

journal_contents read_journal(const std::filesystem::path& path) {
    journal_contents out;
    journal_reader reader(path);
    const auto n = static_cast<std::size_t>(reader.records());
    out.offsets.reserve(n);
    out.seqs.reserve(n);
    out.ticks.reserve(n);
    out.requests.reserve(n);
    journal_record record;
    while (reader.next(record)) {
        out.offsets.push_back(record.offset);
        out.seqs.push_back(record.seq);
        out.ticks.push_back(record.tick);
        out.requests.push_back(record.request);
    }
    out.valid_bytes = reader.valid_bytes();
    out.torn_tail = reader.torn_tail();
    out.data = reader.take_data();
    out.data.resize(out.valid_bytes);
    return out;
}

void truncate_journal(const std::filesystem::path& path, std::uint64_t bytes) {
    std::filesystem::resize_file(path, bytes);
}

}  // namespace ecsd::persist
