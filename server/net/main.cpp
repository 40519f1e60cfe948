#include <cstdio>

#include "ecsd/protocol/version.hpp"

int main() {
    std::puts(ecsd::protocol::version_line("ecsd"));
    return 0;
}
