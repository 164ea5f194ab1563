// Shared helpers of the correctness tier: deterministic input images (with
// any min), element-by-element comparison of a realized buffer against a
// plain C++ reference, and the reference semantics the tests need
// (Euclidean division, boundary conditions, a 3x3 box blur).
#pragma once
#include <kiln/kiln.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <type_traits>
#include <vector>

namespace kt {

using kiln::Buffer;

// A deterministic pseudo-random value in [lo, hi] for the point (x, y).
inline int noise(int x, int y, int lo, int hi, uint32_t seed = 1) {
    uint32_t h = (uint32_t)x * 0x9E3779B1u ^ ((uint32_t)y + 0x7F4A7C15u) * 0x85EBCA77u ^ seed * 0xC2B2AE3Du;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return lo + (int)(h % (uint32_t)(hi - lo + 1));
}

// A w x h image whose top-left pixel is (min_x, min_y), pixel (x, y) = fn(x, y).
template<typename T, typename Fn>
Buffer<T> image(int w, int h, int min_x, int min_y, Fn fn) {
    Buffer<T> b(w, h);
    b.set_min(min_x, min_y);
    for (int y = min_y; y < min_y + h; y++)
        for (int x = min_x; x < min_x + w; x++) b(x, y) = (T)fn(x, y);
    return b;
}
// Random pixels in [lo, hi].
template<typename T>
Buffer<T> random_image(int w, int h, int min_x, int min_y, int lo, int hi, uint32_t seed = 1) {
    return image<T>(w, h, min_x, min_y, [=](int x, int y) { return noise(x, y, lo, hi, seed); });
}
// A 1-D image of extent w starting at min_x.
template<typename T, typename Fn>
Buffer<T> image1(int w, int min_x, Fn fn) {
    Buffer<T> b(w);
    b.set_min(min_x);
    for (int x = min_x; x < min_x + w; x++) b(x) = (T)fn(x);
    return b;
}
// An output buffer of w x h pixels whose min is (min_x, min_y).
template<typename T>
Buffer<T> output(int w, int h, int min_x = 0, int min_y = 0) {
    Buffer<T> b(w, h);
    b.set_min(min_x, min_y);
    b.fill((T)0);
    return b;
}

// got == want for integers; |got - want| <= tol * max(1, |want|) for floats.
template<typename T>
bool close(T got, double want, double tol) {
    if (std::is_floating_point<T>::value) {
        if (std::isnan((double)got) || std::isnan(want)) return std::isnan((double)got) && std::isnan(want);
        if (std::isinf(want)) return (double)got == want;
        return std::fabs((double)got - want) <= tol * std::max(1.0, std::fabs(want));
    }
    return got == (T)(int64_t)want;
}

// Calls ref with one int per dimension of the buffer.
template<typename Ref>
double call_ref(Ref &ref, const int *p) {
    if constexpr (std::is_invocable<Ref, int, int, int>::value) {
        return (double)ref(p[0], p[1], p[2]);
    } else if constexpr (std::is_invocable<Ref, int, int>::value) {
        return (double)ref(p[0], p[1]);
    } else if constexpr (std::is_invocable<Ref, int>::value) {
        return (double)ref(p[0]);
    } else {
        (void)p;
        return (double)ref();
    }
}

// Compares every element of `out` with ref(x, y, ...), reporting the number
// of mismatches and the first one.
template<typename T, typename Ref>
void check(const Buffer<T> &out, Ref ref, double tol = 1e-5) {
    int bad = 0;
    std::ostringstream first;
    auto visit = [&](const int *p) {
        T got = out(p);
        double want = call_ref(ref, p);
        if (close(got, want, tol)) return;
        if (bad++ == 0) {
            first << "at (";
            for (int d = 0; d < out.dimensions(); d++) first << (d ? ", " : "") << p[d];
            first << "): got " << +got << ", want " << want;
        }
    };
    if (out.dimensions() == 0) {
        visit(nullptr);
    } else {
        out.for_each_element(visit);
    }
    INFO(bad << " mismatching element(s); first " << first.str());
    CHECK(bad == 0);
}

// Realizes f into a fresh 2-D buffer for each {width, height, min_x, min_y}
// region in turn (the compiled kernel is reused) and compares with ref.
template<typename T, typename Ref>
void realize_and_check(kiln::Func f, const std::vector<std::array<int, 4>> &regions, Ref ref, double tol = 1e-5) {
    for (const auto &r : regions) {
        Buffer<T> o = output<T>(r[0], r[1], r[2], r[3]);
        f.realize(o);
        check(o, ref, tol);
    }
}

// Several 1-D outputs of one type, compiled into one Pipeline and realized
// together, each compared with its own reference.
template<typename T>
struct Outputs1D {
    std::vector<kiln::Func> funcs;
    std::vector<std::function<double(int)>> refs;
    kiln::Pipeline pipeline;

    void add(kiln::Func f, std::function<double(int)> ref) {
        funcs.push_back(f);
        refs.push_back(std::move(ref));
    }
    // Realizes every output over [min_x, min_x + w), for `target`.
    void run(int w, int min_x, double tol = 1e-5, const kiln::Target &target = kiln::Target::host()) {
        if (pipeline.outputs().empty()) pipeline = kiln::Pipeline(funcs);
        std::vector<Buffer<T>> bufs;
        std::vector<halide_buffer_t *> raw;
        for (size_t i = 0; i < funcs.size(); i++) {
            bufs.emplace_back(w);
            bufs.back().set_min(min_x);
        }
        for (auto &b : bufs) raw.push_back(b.raw_buffer());
        pipeline.realize_raw(raw, target);
        for (size_t i = 0; i < funcs.size(); i++) {
            INFO("output " << funcs[i].name());
            check(bufs[i], refs[i], tol);
        }
    }
};

// ---- Reference semantics ----

// Integer division and modulo as in the IR: round toward -infinity for
// positive divisors (Euclidean: 0 <= a % b < |b|), and x / 0 == x % 0 == 0.
inline int64_t div_euclid(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = a / b, r = a % b;
    return r < 0 ? (b > 0 ? q - 1 : q + 1) : q;
}
inline int64_t mod_euclid(int64_t a, int64_t b) { return b == 0 ? 0 : a - div_euclid(a, b) * b; }

inline int clampi(int v, int lo, int hi) { return std::min(std::max(v, lo), hi); }

// The boundary conditions, as coordinate maps into [mn, mn + ex).
inline int edge_coord(int x, int mn, int ex) { return clampi(x, mn, mn + ex - 1); }
inline int mirror_image_coord(int x, int mn, int ex) {
    int m = (int)mod_euclid(x - mn, 2 * ex);
    return mn + (m < ex ? m : 2 * ex - 1 - m);
}
inline int mirror_interior_coord(int x, int mn, int ex) {
    int period = std::max(2 * ex - 2, 1);
    int m = (int)mod_euclid(x - mn, period);
    return clampi(mn + (m < ex ? m : period - m), mn, mn + ex - 1);
}

// in(x, y) with repeat_edge outside the image.
template<typename T>
T at_edge(const Buffer<T> &in, int x, int y) {
    return in(edge_coord(x, in.dim(0).min(), in.dim(0).extent()), edge_coord(y, in.dim(1).min(), in.dim(1).extent()));
}

// The 3x3 blur of the tests, (sum of three) / 3 in x and then in y, in the
// input's type with repeat_edge; integer division for integer types.
template<typename T>
T blur3x3(const Buffer<T> &in, int x, int y) {
    auto bx = [&](int yy) {
        return (T)((at_edge(in, x - 1, yy) + at_edge(in, x, yy) + at_edge(in, x + 1, yy)) / (T)3);
    };
    return (T)((bx(y - 1) + bx(y) + bx(y + 1)) / (T)3);
}

// The host's narrower x86 instruction sets (AVX2 + FMA below AVX-512, SSE4.1),
// for code whose shape depends on the vector register's width.
inline std::vector<kiln::Target> narrower_targets() {
    std::vector<kiln::Target> r;
#if defined(__x86_64__)
    const kiln::Target host = kiln::Target::host();
    if (host.has(kiln::Target::AVX512) && host.has(kiln::Target::AVX2))
        r.push_back(kiln::Target("x86-64-linux-sse41-avx-avx2-fma"));
    if (host.has(kiln::Target::SSE41)) r.push_back(kiln::Target("x86-64-linux-sse41"));
#endif
    return r;
}

}  // namespace kt
