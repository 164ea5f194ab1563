// Interop: blur3x3 under the host_tiled schedule, compiled ahead of time by
// Halide 14 (add_halide_library, halide_blur3x3.cpp) and by Kiln
// (kiln_add_library, generators/blur3x3.cpp), is called with the very same
// Halide::Runtime::Buffer objects; the outputs must be equal bit for bit,
// and both reject a bad output buffer with a negative code.
#include <catch2/catch.hpp>

#include <HalideBuffer.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "halide_blur3x3.h"
#include "kiln_blur3x3.h"

namespace {

using Buffer = Halide::Runtime::Buffer<float>;

const float kSentinel = -12345.0f;

// An odd-sized input away from the origin (317x71 at (-13, 7)), filled with
// values whose sums are inexact in float, so that any difference in the
// order or kind of the operations shows.
Buffer make_input() {
    Buffer in(317, 71);
    in.set_min(-13, 7);
    uint32_t state = 12345;
    in.for_each_value([&](float &v) {
        state = state * 1664525u + 1013904223u;
        v = (float)(state >> 8) / (float)(1u << 24) * 100.0f - 37.0f;
    });
    return in;
}

Buffer make_output(int w, int h, int x0, int y0) {
    Buffer out(w, h);
    out.set_min(x0, y0);
    out.fill(kSentinel);
    return out;
}

// Bit-for-bit equality of two buffers over the same domain.
void require_identical(const Buffer &a, const Buffer &b) {
    REQUIRE(a.dim(0).min() == b.dim(0).min());
    REQUIRE(a.dim(1).min() == b.dim(1).min());
    REQUIRE(a.width() == b.width());
    REQUIRE(a.height() == b.height());
    int mismatches = 0;
    std::string first;
    a.for_each_element([&](int x, int y) {
        uint32_t u, v;
        std::memcpy(&u, &a(x, y), sizeof u);
        std::memcpy(&v, &b(x, y), sizeof v);
        if (u == v) return;
        if (mismatches++ == 0)
            first = "(" + std::to_string(x) + ", " + std::to_string(y) + "): " + std::to_string(a(x, y)) +
                    " vs " + std::to_string(b(x, y));
    });
    INFO(mismatches << " element(s) differ; first " << first);
    REQUIRE(mismatches == 0);
}

// The domains the outputs cover: the input's own (317x71 at (-13, 7)), and
// one that reaches past its left and top edges and stops short of the
// others (281x45 at (-40, -5)); neither is a multiple of the 256x32 tiles.
struct Domain {
    int w, h, x0, y0;
};
const Domain kDomains[] = {{317, 71, -13, 7}, {281, 45, -40, -5}};

// Errors reported by the Halide runtime while one of these lives.
struct HalideErrors {
    static std::string &last() {
        static std::string m;
        return m;
    }
    static void handler(void *, const char *msg) { last() = msg; }
    HalideErrors() { last().clear(), previous = halide_set_error_handler(&HalideErrors::handler); }
    ~HalideErrors() { halide_set_error_handler(previous); }
    halide_error_handler_t previous;
};

struct KilnErrors {
    static std::string &last() {
        static std::string m;
        return m;
    }
    static void handler(const char *msg) { last() = msg; }
    KilnErrors() { last().clear(), previous = kiln_set_error_handler(&KilnErrors::handler); }
    ~KilnErrors() { kiln_set_error_handler(previous); }
    kiln_error_handler_t previous;
};

}  // namespace

TEST_CASE("interop: Halide's and Kiln's blur3x3 agree on the same input buffer, two outputs", "[interop]") {
    Buffer in = make_input();
    for (const Domain &d : kDomains) {
        INFO("output " << d.w << "x" << d.h << " at (" << d.x0 << ", " << d.y0 << ")");
        Buffer from_halide = make_output(d.w, d.h, d.x0, d.y0);
        Buffer from_kiln = make_output(d.w, d.h, d.x0, d.y0);
        REQUIRE(halide_blur3x3(in.raw_buffer(), from_halide.raw_buffer()) == 0);
        REQUIRE(kiln_blur3x3(in.raw_buffer(), from_kiln.raw_buffer()) == 0);
        // Both wrote every element (no sentinel is left).
        from_halide.for_each_value([](float v) { REQUIRE(v != kSentinel); });
        require_identical(from_halide, from_kiln);
    }
    // The input is read only.
    require_identical(in, make_input());
}

TEST_CASE("interop: Halide's and Kiln's blur3x3 agree on the same output buffer, in turn", "[interop]") {
    Buffer in = make_input();
    for (const Domain &d : kDomains) {
        INFO("output " << d.w << "x" << d.h << " at (" << d.x0 << ", " << d.y0 << ")");
        Buffer out = make_output(d.w, d.h, d.x0, d.y0);
        REQUIRE(halide_blur3x3(in.raw_buffer(), out.raw_buffer()) == 0);
        Buffer from_halide = out.copy();
        out.fill(kSentinel);
        REQUIRE(kiln_blur3x3(in.raw_buffer(), out.raw_buffer()) == 0);
        require_identical(from_halide, out);
        // And back: Halide overwrites Kiln's result with the same values.
        out.fill(kSentinel);
        REQUIRE(halide_blur3x3(in.raw_buffer(), out.raw_buffer()) == 0);
        require_identical(from_halide, out);
    }
}

TEST_CASE("interop: both reject an output smaller than one tile, without crashing", "[interop]") {
    // 200x20 at (0, 10) is smaller than a 256x32 tile: the ShiftInwards
    // splits of both schedules shift the tile to x in [-56, 199], outside
    // the buffer, so both refuse before computing and name that region.
    Buffer in = make_input();
    Buffer tiny = make_output(200, 20, 0, 10);
    {
        HalideErrors errors;
        int r = halide_blur3x3(in.raw_buffer(), tiny.raw_buffer());
        INFO("Halide returned " << r << ": " << HalideErrors::last());
        CHECK(r == halide_error_code_access_out_of_bounds);
        CHECK_THAT(HalideErrors::last(), Catch::Contains("Output buffer output is accessed at -56"));
    }
    {
        KilnErrors errors;
        int r = kiln_blur3x3(in.raw_buffer(), tiny.raw_buffer());
        INFO("Kiln returned " << r << ": " << KilnErrors::last());
        CHECK(r == kiln_error_output_too_small);
        CHECK_THAT(KilnErrors::last(), Catch::Contains("kiln_blur3x3: ") && Catch::Contains("output 'output' is written over [-56, 199]"));
    }
    // Neither touched the buffer.
    tiny.for_each_value([](float v) { REQUIRE(v == kSentinel); });
}
