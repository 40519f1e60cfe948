#include "persist/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

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
    static const auto table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

std::string encode_record(const json& record) {
    const std::string text = record.dump();
    char head[10];
    std::snprintf(head, sizeof head, "%08x ", crc32(text));
    return std::string(head, 9) + text + "\n";
}

namespace {
[[noreturn]] void throw_errno(const std::string& what) {
    throw storage_error(errno, what);
}
}  // namespace

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
    std::size_t done = 0;
    while (done < line.size()) {
        const auto n = ::write(fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) undo("append to journal " + path_.string());
        done += static_cast<std::size_t>(n);
    }
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
    std::string tail(bytes_ - length, '\0');
    {
        const int in = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (in < 0) throw_errno("open journal " + path_.string());
        std::size_t done = 0;
        while (done < tail.size()) {
            const auto n =
                ::pread(in, tail.data() + done, tail.size() - done, static_cast<off_t>(length + done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                const int err = n < 0 ? errno : EIO;
                ::close(in);
                throw storage_error(err, "read journal " + path_.string());
            }
            done += static_cast<std::size_t>(n);
        }
        ::close(in);
    }
    // The tail goes to a temp file opened for appending before the rename: once the rename is
    // done the writer holds the new journal, and nothing can be appended to the old one.
    const auto tmp = temp_path_for(path_);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw_errno("create " + tmp.string());
    const auto fail = [&](const std::string& what) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        throw storage_error(err, what);
    };
    std::size_t done = 0;
    while (done < tail.size()) {
        const auto n = ::write(fd, tail.data() + done, tail.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("write " + tmp.string());
        done += static_cast<std::size_t>(n);
    }
    if (::fdatasync(fd) != 0) fail("fsync " + tmp.string());
    if (::rename(tmp.c_str(), path_.c_str()) != 0) fail("rename " + tmp.string() + " to " + path_.string());
    ::close(fd_);
    fd_ = fd;
    bytes_ = tail.size();
    dirty_ = false;
    trim_pending_ = false;
    sync_directory(path_.parent_path());
    last_sync_ = std::chrono::steady_clock::now();
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

journal_contents read_journal(const std::filesystem::path& path) {
    journal_contents out;
    std::ifstream in(path, std::ios::binary);
    if (!in) return out;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string data = buffer.str();
    std::size_t offset = 0;
    while (offset < data.size()) {
        const auto nl = data.find('\n', offset);
        const auto end = nl == std::string::npos ? data.size() : nl;
        const std::string_view line(data.data() + offset, end - offset);
        // Only a record without its final newline is torn: the newline is the last byte written.
        if (nl == std::string::npos) {
            out.torn_tail = true;
            return out;
        }
        bool good = line.size() > 9 && line[8] == ' ';
        json record;
        if (good) {
            const std::string_view text = line.substr(9);
            unsigned int want = 0;
            good =
                std::sscanf(std::string(line.substr(0, 8)).c_str(), "%8x", &want) == 1 && crc32(text) == want;
            if (good) {
                record = json::parse(text, nullptr, false);
                good = !record.is_discarded() && record.is_object() && record.contains("seq") &&
                       record.contains("tick") && record["seq"].is_number_unsigned() &&
                       record["tick"].is_number_unsigned();
            }
        }
        if (!good)
            throw journal_damage(path, data, offset, "corrupt journal record (checksum or format mismatch)");
        if (!out.records.empty()) {
            const auto prev = out.records.back()["seq"].get<std::uint64_t>();
            const auto seq = record["seq"].get<std::uint64_t>();
            if (seq != prev + 1)
                throw journal_damage(path, data, offset,
                                     "journal sequence gap: record " + std::to_string(seq) +
                                         " follows record " + std::to_string(prev) + " (expected " +
                                         std::to_string(prev + 1) + ")");
        }
        out.records.push_back(std::move(record));
        out.offsets.push_back(offset);
        offset = end + 1;
        out.valid_bytes = offset;
    }
    return out;
}

void truncate_journal(const std::filesystem::path& path, std::uint64_t bytes) {
    std::filesystem::resize_file(path, bytes);
}

}  // namespace ecsd::persist
