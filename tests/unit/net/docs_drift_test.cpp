// Docs cannot drift from the tables they describe: docs/protocol.md has a section for every method
// in the method table and a row for every error reason with its code.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ecsd/protocol/errors.hpp"
#include "method_table.hpp"
#include "methods/methods.hpp"

namespace {

std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

}  // namespace

TEST(DocsDrift, ProtocolMdHasASectionForEveryMethod) {
    ecsd::net::method_table table;
    ecsd::net::register_all_methods(table);
    const auto lines = lines_of(ECSD_SOURCE_DIR "/docs/protocol.md");
    ASSERT_FALSE(table.methods().empty());
    for (const auto& m : table.methods()) {
        const std::string quoted = "`" + m.name + "`";
        bool found = false;
        for (const auto& l : lines)
            found = found || (l.starts_with("#### ") && l.find(quoted) != std::string::npos);
        EXPECT_TRUE(found) << "docs/protocol.md has no '#### ' heading naming " << quoted;
    }
}

TEST(DocsDrift, ProtocolMdHasARowForEveryErrorReasonWithItsCode) {
    const auto lines = lines_of(ECSD_SOURCE_DIR "/docs/protocol.md");
    for (const auto& r : ecsd::protocol::all_reasons()) {
        const std::string row = "| `" + std::string(r.name) + "` | " + std::to_string(r.code) + " |";
        bool found = false;
        for (const auto& l : lines) found = found || l.starts_with(row);
        EXPECT_TRUE(found) << "docs/protocol.md has no error row starting '" << row << "'";
    }
}
