#pragma once
// The journal: between snapshots, every acknowledged mutating request of a
// world is appended before its response is sent, and a mark for every tick the
// clock runs, so start-up can replay to the exact state before a crash.
//
// One record per line: 8 hex digits of CRC-32 over the JSON text, a space, the
// JSON text, LF. {"seq": n, "tick": t} marks a tick; {"seq": n, "tick": t,
// "method": m, "params": p} is a request applied when the world was at tick t.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/json_parse.hpp"
#include "persist/snapshot.hpp"

namespace ecsd::persist {

using nlohmann::json;

/// @brief When appended records reach the disk (Redis's appendfsync).
enum class fsync_policy {
    always,    ///< fsync before the response is sent: an acknowledged write is never lost
    everysec,  ///< fsync at most once a second: a crash of the machine loses up to ~1 s
    never,     ///< leave it to the OS: a crash of the machine loses what it had not written
};

/// @brief Parses "always" / "everysec" / "never"; throws std::invalid_argument.
[[nodiscard]] fsync_policy parse_fsync_policy(std::string_view text);
[[nodiscard]] const char* to_string(fsync_policy p) noexcept;

/// @brief CRC-32 (IEEE), as zlib computes it.
[[nodiscard]] std::uint32_t crc32(std::string_view data) noexcept;

/// @brief The text of one record line, with its checksum and LF.
[[nodiscard]] std::string encode_record(const json& record);

class journal_writer {
  public:
    /// @brief Opens (creating) the journal for appending.
    journal_writer(std::filesystem::path path, fsync_policy policy);
    journal_writer(const journal_writer&) = delete;
    journal_writer& operator=(const journal_writer&) = delete;
    ~journal_writer();

    /// @brief Appends one record; with `always` it is on disk when this returns. On failure (disk
    /// full, I/O error) throws storage_error and leaves the file at its previous length: a partial
    /// record never stays behind.
    void append(const json& record);
    /// @brief Cuts the journal back to `length` bytes (a record written ahead whose request then failed).
    void rollback(std::uint64_t length);
    /// @brief fsyncs if the policy is everysec and a second has passed since the last one.
    void maybe_sync();
    /// @brief Empties the journal (after a snapshot that includes everything in it).
    void truncate();
    /// @brief Drops the first `length` bytes (the records a background snapshot includes) and
    /// keeps the rest: the tail is written to a new file that replaces the journal atomically,
    /// so a crash leaves the whole journal or the tail, and replay skips what the snapshot holds.
    /// Throws storage_error: before the rename the journal is left as it was; after it (only the
    /// folder's fsync can fail there) the writer already appends to the tail.
    void drop_prefix(std::uint64_t length);
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

  private:
    void sync();

    std::filesystem::path path_;
    fsync_policy policy_;
    int fd_ = -1;
    std::uint64_t bytes_ = 0;
    bool dirty_ = false;
    bool trim_pending_ = false;  ///< a failed append could not be cut back yet: do it before the next one
    std::chrono::steady_clock::time_point last_sync_{};
};

/// @brief What reading a journal found: the checked text and, per record, where it starts and
/// its sequence number and tick. A record's JSON is parsed again only when asked for (record()),
/// so reading a journal takes memory in proportion to the file, not to its records' trees.
struct journal_contents {
    std::string data;                    ///< the file's intact prefix
    std::vector<std::uint64_t> offsets;  ///< byte offset of each record
    std::vector<std::uint64_t> seqs;     ///< each record's "seq"
    std::vector<std::uint64_t> ticks;    ///< each record's "tick"
    std::vector<bool> requests;          ///< whether each record has a "method" (else it marks a tick)
    std::uint64_t valid_bytes = 0;       ///< length of the intact prefix
    bool torn_tail = false;              ///< the last record was cut short (crash mid-write) and dropped

    [[nodiscard]] std::size_t size() const noexcept { return offsets.size(); }
    [[nodiscard]] bool empty() const noexcept { return offsets.empty(); }
    /// @brief Record `i`'s JSON text (checked by read_journal).
    [[nodiscard]] std::string_view text(std::size_t i) const noexcept;
    /// @brief Record `i` parsed.
    [[nodiscard]] json record(std::size_t i) const { return protocol::parse_json(text(i)); }
};

/// @brief Damage in a journal: what() names the file and the byte offset; the rest says what cutting
/// the journal there (ecsd --repair) loses.
class journal_error : public persist_error {
  public:
    journal_error(const std::filesystem::path& file, std::uint64_t offset, std::uint64_t records_lost,
                  std::uint64_t bytes_lost, const std::string& what);
    std::filesystem::path file;
    std::uint64_t offset = 0;        ///< where the damage starts: the journal would be cut here
    std::uint64_t records_lost = 0;  ///< records from `offset` to the end
    std::uint64_t bytes_lost = 0;
};

/// @brief The journal_error for the record at `offset` of the journal `data` (read from `file`).
[[nodiscard]] journal_error journal_damage(const std::filesystem::path& file, std::string_view data,
                                           std::uint64_t offset, const std::string& what);

/// @brief One record as journal_reader::next() reads it.
struct journal_record {
    std::uint64_t offset = 0;  ///< byte offset of the record's line
    std::uint64_t seq = 0;
    std::uint64_t tick = 0;
    bool request = false;  ///< has a "method" (else it marks a tick)
    std::string method;    ///< a request's method, when next() was asked to parse it
    json params;           ///< and its params (an empty object when it has none)
};

/// @brief Reads a journal one record at a time, each checked as read_journal checks it, so a
/// caller can act on record i while the file past it is still unread (start-up parses on one
/// thread and applies on another). A request asked for is parsed by the same pass that checks
/// it: the text is read once.
class journal_reader {
  public:
    /// @brief Reads the file (a missing file reads as empty) and finds its torn tail, if any.
    explicit journal_reader(std::filesystem::path path);
    /// @brief Passed as next()'s `parse_after`: parse no request.
    static constexpr std::uint64_t no_requests = UINT64_MAX;
    /// @brief The next record into `out`; false after the last. A request whose seq is past
    /// `parse_after` comes parsed, its method and params filled (else the method is empty and the
    /// params null). Throws journal_error at damage, as read_journal does, and where a parsed
    /// request's "method" is not a string.
    bool next(journal_record& out, std::uint64_t parse_after = no_requests);
    /// @brief Complete records in the file (checked or not yet): the length of the intact prefix in records.
    [[nodiscard]] std::uint64_t records() const noexcept { return records_; }
    /// @brief Bytes of complete records: where a torn tail starts.
    [[nodiscard]] std::uint64_t valid_bytes() const noexcept { return valid_bytes_; }
    /// @brief The last record was cut short (a crash mid-write); next() never returns it.
    [[nodiscard]] bool torn_tail() const noexcept { return valid_bytes_ < data_.size(); }
    /// @brief Moves the file's text out (read_journal keeps it); the reader is done after this.
    [[nodiscard]] std::string take_data() noexcept { return std::move(data_); }

  private:
    std::filesystem::path path_;
    std::string data_;
    std::uint64_t records_ = 0;
    std::uint64_t valid_bytes_ = 0;
    std::uint64_t offset_ = 0;    ///< where the next record starts
    std::uint64_t last_seq_ = 0;  ///< the previous record's, for the gap check
    bool first_ = true;
};

/// @brief Reads a journal. A last record without its final newline is torn (a crash mid-write):
/// it is dropped (torn_tail). Anything else throws journal_error naming the file and the byte
/// offset: a complete record that fails its checksum or format, anywhere (the last one too), and
/// a sequence number that is not the previous one plus 1. A missing file reads as empty.
[[nodiscard]] journal_contents read_journal(const std::filesystem::path& path);

/// @brief Cuts a journal back to its intact prefix (after a torn tail).
void truncate_journal(const std::filesystem::path& path, std::uint64_t bytes);

}  // namespace ecsd::persist
