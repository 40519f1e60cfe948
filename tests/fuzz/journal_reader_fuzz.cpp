// Fuzz target for the journal reader (persist::read_journal), over a file as ecsd reads it at
// start-up. The first byte holds flags: bit 0 rewrites each record's checksum to the right one
// first, so the fuzzer gets past the CRC to the JSON, format and sequence checks. Damage is a
// journal_error naming a record's offset (and what cutting there loses), nothing else; what reads
// is consistent (intact prefix, torn tail only without a final newline, consecutive sequence
// numbers) and the records, written again with encode_record, read back the same.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "persist/journal.hpp"

namespace {

namespace fs = std::filesystem;
namespace persist = ecsd::persist;

void check(bool ok) {
    if (!ok) std::abort();
}

/// @brief A scratch file of this process, removed at exit. In memory (/dev/shm) where there is
/// one: rewriting a file on ext4 flushes it to disk each time, far slower.
struct scratch_file {
    fs::path path = (fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) /
                    ("ecsd-journal-fuzz-" + std::to_string(::getpid()));
    ~scratch_file() {
        std::error_code ec;
        fs::remove(path, ec);
    }
    void write(const std::string& bytes) const {
        std::error_code ec;
        fs::remove(path, ec);  // a new file, not a truncated one
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        check(static_cast<bool>(out.flush()));
    }
};

void fix_checksums(std::string& data) {
    std::size_t start = 0;
    while (start < data.size()) {
        auto end = data.find('\n', start);
        if (end == std::string::npos) end = data.size();
        if (end - start > 9 && data[start + 8] == ' ') {
            char hex[9];
            std::snprintf(hex, sizeof hex, "%08x",
                          persist::crc32(std::string_view(data).substr(start + 9, end - start - 9)));
            data.replace(start, 8, hex, 8);
        }
        start = end + 1;
    }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer's entry point
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const scratch_file file;
    if (size == 0) return 0;
    std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if ((data[0] & 1) != 0) fix_checksums(bytes);
    file.write(bytes);

    persist::journal_contents got;
    try {
        got = persist::read_journal(file.path);
    } catch (const persist::journal_error& e) {
        check(e.offset < bytes.size());
        check(e.offset == 0 || bytes[e.offset - 1] == '\n');  // at the start of a record
        check(e.bytes_lost == bytes.size() - e.offset);
        check(e.records_lost >= 1);
        return 0;
    }
    check(got.seqs.size() == got.offsets.size() && got.ticks.size() == got.offsets.size() &&
          got.requests.size() == got.offsets.size());
    check(got.data == bytes.substr(0, got.valid_bytes));
    check(got.valid_bytes <= bytes.size());
    check(got.torn_tail == (got.valid_bytes < bytes.size()));
    if (got.torn_tail) check(bytes.find('\n', got.valid_bytes) == std::string::npos);
    check(got.valid_bytes == 0 || bytes[got.valid_bytes - 1] == '\n');
    std::string rewritten;
    std::vector<nlohmann::json> records;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const auto r = got.record(i);  // the SAX check and the tree agree on every record
        records.push_back(r);
        check(got.offsets[i] < got.valid_bytes &&
              (i == 0 ? got.offsets[i] == 0 : got.offsets[i] > got.offsets[i - 1]));
        check(r.is_object() && r["seq"].is_number_unsigned() && r["tick"].is_number_unsigned());
        check(r["seq"].get<std::uint64_t>() == got.seqs[i] &&
              r["tick"].get<std::uint64_t>() == got.ticks[i] && r.contains("method") == got.requests[i]);
        if (i > 0) check(got.seqs[i] == got.seqs[i - 1] + 1);
        rewritten += persist::encode_record(r);
    }
    file.write(rewritten);
    const auto again = persist::read_journal(file.path);
    check(again.size() == records.size() && !again.torn_tail && again.valid_bytes == rewritten.size());
    for (std::size_t i = 0; i < again.size(); ++i) check(again.record(i) == records[i]);
    return 0;
}
