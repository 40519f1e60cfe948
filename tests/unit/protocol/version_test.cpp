#include "ecsd/protocol/version.hpp"

#include <gtest/gtest.h>

#include <string>

TEST(Version, LineNamesProgramAndVersion) {
    EXPECT_EQ(std::string(ecsd::protocol::version_line("ecsd")),
              std::string("ecsd ") + ecsd::protocol::version);
}
