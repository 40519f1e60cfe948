#pragma once
// Inside the memory module only: raw mappings, for the blocks and for the forked save's copies.

#include <cstddef>

namespace ecsd::memory::internal {

/// @brief `rounded` bytes (a multiple of 2 MiB) of fresh memory aligned to 2 MiB, so huge pages back
/// all of it (mmap only promises 4 KiB: the part before the first 2 MiB boundary would be small
/// pages, a fault each on first touch and after a fork), or nullptr. One huge page more is mapped
/// and the ends beyond the aligned block unmapped.
[[nodiscard]] void* map_aligned(std::size_t rounded) noexcept;
/// @brief `rounded` bytes (a mapped_size()) of fresh memory laid out as such a block is: on a 2 MiB
/// boundary and in huge pages when a multiple of 2 MiB, in small pages otherwise; or nullptr. The
/// forked save maps its copies of the world's blocks with it too (whole, in one mapping, as mremap
/// needs: allocate_block() then leaves the world's own tails in small pages).
[[nodiscard]] void* map_block(std::size_t rounded) noexcept;
void unmap(void* p, std::size_t bytes) noexcept;

}  // namespace ecsd::memory::internal
