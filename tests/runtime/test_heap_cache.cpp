// The heap blocks of kernels' intermediates (kiln_heap, runtime/kiln_prologue.h,
// and the runtime's caches behind it, kiln_heap_alloc): a large block freed by
// one call is kept for the next, within a bound, and small blocks freed by one
// row are reused by the next.
#include <catch2/catch.hpp>

#include "kiln_prologue.h"

#include <memory>
#include <set>
#include <utility>
#include <vector>

namespace {

// The blocks this thread keeps in its small or large cache, with their sizes.
std::vector<std::pair<void *, size_t>> kept(bool large) {
    void *blocks[64];
    size_t sizes[64];
    const int n = kiln_heap_kept(large, blocks, sizes, 64);
    REQUIRE(n <= 64);
    std::vector<std::pair<void *, size_t>> k;
    for (int i = 0; i < n; i++) k.push_back({blocks[i], sizes[i]});
    return k;
}

// What is kept in large blocks, in bytes, by this thread.
size_t kept_bytes() {
    size_t total = 0;
    for (const auto &b : kept(true)) total += b.second;
    return total;
}

}  // namespace

TEST_CASE("runtime: a large intermediate's block is reused by the next call", "[runtime][heap]") {
    void *first = nullptr;
    {
        kiln_heap a(16 << 20, sizeof(float));  // 64 MiB: above glibc's mmap threshold
        REQUIRE(a.ptr);
        first = a.ptr;
        static_cast<float *>(a.ptr)[0] = 1.0f;
    }
    CHECK(kept_bytes() >= (64u << 20));
    {
        kiln_heap b(8 << 20, sizeof(float));  // smaller: the kept block serves it
        CHECK(b.ptr == first);
        CHECK(reinterpret_cast<uintptr_t>(b.ptr) % 64 == 0);
    }
    {
        kiln_heap c(32 << 20, sizeof(float));  // larger than any kept block: a new one
        REQUIRE(c.ptr);
        CHECK(c.ptr != first);
    }
    CHECK(kept_bytes() <= kiln_heap_large_keep);
}

TEST_CASE("runtime: the kept blocks stay within the per-thread bound", "[runtime][heap]") {
    {
        kiln_heap huge((long long)(kiln_heap_large_keep / sizeof(float)) + 1024, sizeof(float));
        REQUIRE(huge.ptr);
    }
    CHECK(kept_bytes() <= kiln_heap_large_keep);  // larger than the bound: freed
    for (int i = 0; i < 8; i++) {
        kiln_heap a(12 << 20, sizeof(float)), b(12 << 20, sizeof(float)), c(12 << 20, sizeof(float));
        REQUIRE((a.ptr && b.ptr && c.ptr));
    }
    CHECK(kept_bytes() <= kiln_heap_large_keep);
    CHECK(kept(true).size() <= (size_t)kiln_heap_large_slots);
}

TEST_CASE("runtime: small intermediates live at once are reused row after row", "[runtime][heap]") {
    // Nine per-row intermediates alive together, as a fused backward pass
    // allocates them: after the first row every block comes from the cache.
    auto row = [](std::set<void *> &seen) {
        std::vector<std::unique_ptr<kiln_heap>> live;
        for (int i = 0; i < 9; i++) {
            live.emplace_back(new kiln_heap(1024 + 16 * i, sizeof(float)));
            REQUIRE(live.back()->ptr);
            CHECK(reinterpret_cast<uintptr_t>(live.back()->ptr) % 64 == 0);
            seen.insert(live.back()->ptr);
        }
        while (!live.empty()) live.pop_back();  // freed innermost first
    };
    auto cached = [] {
        std::set<void *> c;
        for (const auto &b : kept(false)) c.insert(b.first);
        return c;
    };
    std::set<void *> first;
    row(first);
    for (int r = 0; r < 5; r++) {
        std::set<void *> before = cached(), used;
        CHECK(before.size() >= 9);
        row(used);
        for (void *p : used) CHECK(before.count(p) == 1);  // taken from the cache, not allocated
    }
    size_t small_bytes = 0;
    for (const auto &b : kept(false)) {
        small_bytes += b.second;
        CHECK(b.second <= (size_t)kiln_heap_small_max);
    }
    CHECK(kept(false).size() <= (size_t)kiln_heap_small_slots);
    CHECK(small_bytes <= (size_t)kiln_heap_small_keep);
}
