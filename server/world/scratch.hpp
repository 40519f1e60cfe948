#pragma once
// Scratch buffers a thread keeps between calls (a world's views are diffed, and its near() walks
// made, on its strand one at a time): a thousand small views a tick would otherwise grow theirs
// from nothing each time. One that a large call grew past `keep` bytes gives its memory back, so a
// single view of the whole world does not stay resident in every thread that served it.
#include <cstddef>
#include <utility>

namespace ecsd::world {

/// @brief Empties `v` (a std::vector or std::string), freeing it when it holds more than `keep` bytes.
template <typename V>
void empty_scratch(V& v, std::size_t keep = std::size_t{1} << 20) {
    if (v.capacity() * sizeof(typename V::value_type) > keep) {
        V().swap(v);
    } else {
        v.clear();
    }
}

}  // namespace ecsd::world
