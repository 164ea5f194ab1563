// Shared helpers of the differential tier. Each case writes its algorithm and
// its schedule once, as a generic lambda over a library tag (kd::K for Kiln,
// kd::H for Halide 14), so that the Kiln program and the Halide program are
// the same text; run() builds both, realizes them into twin buffers and
// compare() checks the outputs element by element.
//
//   auto build = [&](auto lib) {
//       using L = decltype(lib);
//       typename L::ImageParam in(L::u16, 2, "in");
//       L::set(in, input);                          // a kiln::Buffer<uint16_t>
//       typename L::Var x("x"), y("y");
//       typename L::Func f("f");
//       f(x, y) = cast(L::u8, in(x, y) / 3);        // cast, min, select... found by ADL
//       f.vectorize(x, 8);
//       return typename L::Pipeline(f);
//   };
//   kd::Out<uint8_t> out("f", {67, 45}, {-3, 2});
//   kd::run(build, {out.pair()});
//   kd::compare(out);                               // exact; floats: compare(out, ulps)
//
// Several outputs: kd::outs() makes a group of one type, kd::pairs() lists
// groups in the pipeline's output order, pipeline_of() makes one Func per
// value. Halide runs for the host; kd::H::strict_float() is the target
// without FMA contraction and float reassociation (see test_math.cpp).
// KILN_DIFF_ULPS=1 prints the largest float difference of every output.
#pragma once
#include <kiln/kiln.h>

#include "Halide.h"
#include "halide_target.h"
#include "correctness/check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace kd {

// The boundary conditions that take an explicit region.
enum class Boundary { ConstantExterior, MirrorImage, MirrorInterior };

// The names both libraries spell the same way, written once for namespace NS.
#define KD_LIBRARY_NAMES(NS)                                                                                          \
    using Func = NS::Func;                                                                                            \
    using Var = NS::Var;                                                                                              \
    using Expr = NS::Expr;                                                                                            \
    using RDom = NS::RDom;                                                                                            \
    using RVar = NS::RVar;                                                                                            \
    using Tuple = NS::Tuple;                                                                                          \
    using ImageParam = NS::ImageParam;                                                                                \
    template<typename T> using Param = NS::Param<T>;                                                                  \
    using Pipeline = NS::Pipeline;                                                                                    \
    using PrefetchBoundStrategy = NS::PrefetchBoundStrategy;                                                          \
    using VarOrRVar = NS::VarOrRVar;                                                                                  \
    using LoopAlignStrategy = NS::LoopAlignStrategy;                                                                  \
    static constexpr NS::TailStrategy GuardWithIf = NS::TailStrategy::GuardWithIf;                                    \
    static constexpr NS::TailStrategy RoundUp = NS::TailStrategy::RoundUp;                                            \
    static constexpr NS::TailStrategy ShiftInwards = NS::TailStrategy::ShiftInwards;                                  \
    static inline const NS::Type u8 = NS::UInt(8), u16 = NS::UInt(16), u32 = NS::UInt(32), i8 = NS::Int(8),           \
                                 i16 = NS::Int(16), i32 = NS::Int(32), f32 = NS::Float(32);                           \
    template<typename T> static NS::Type type() { return NS::type_of<T>(); }                                          \
    static Func repeat_edge(const ImageParam &im) { return NS::BoundaryConditions::repeat_edge(im); }                 \
    static Func bounded(Boundary b, const Func &f, const Region &r, Expr value = Expr()) {                            \
        switch (b) {                                                                                                  \
        case Boundary::ConstantExterior: return NS::BoundaryConditions::constant_exterior(f, value, r);               \
        case Boundary::MirrorImage: return NS::BoundaryConditions::mirror_image(f, r);                                \
        case Boundary::MirrorInterior: return NS::BoundaryConditions::mirror_interior(f, r);                          \
        }                                                                                                             \
        return Func();                                                                                                \
    }

// Kiln's names.
struct K {
    using Region = kiln::BoundaryConditions::Region;
    KD_LIBRARY_NAMES(kiln)
    template<typename T> static void set(ImageParam &p, const kiln::Buffer<T> &b) { p.set(b); }
};

// Halide 14's names; its JIT compiles for the host as kiln_halide::jit_target()
// sees it (apps/common/halide_target.h: never code the CPU cannot run).
struct H {
    using Region = Halide::Region;
    KD_LIBRARY_NAMES(Halide)
    // The Halide::Buffer shares the kiln buffer's memory (and its mins).
    template<typename T> static void set(ImageParam &p, const kiln::Buffer<T> &b) {
        p.set(Halide::Buffer<T>(*b.raw_buffer()));
    }
    static void realize(Pipeline &p, const std::vector<halide_buffer_t *> &outs, const Halide::Target &t) {
        std::vector<Halide::Buffer<>> bufs;
        for (halide_buffer_t *b : outs) bufs.emplace_back(*b);
        Halide::Realization r(bufs);
        p.realize(r, t);
    }
    // The host target; Halide's LLVM backend contracts a * b + c into FMAs there.
    static Halide::Target host() { return kiln_halide::jit_target(); }
    // The host target with IEEE float semantics: no contraction, no reassociation.
    static Halide::Target strict_float() { return host().with_feature(Halide::Target::StrictFloat); }
};
#undef KD_LIBRARY_NAMES

// The raw buffers one output gets from each library.
struct RawPair {
    halide_buffer_t *kiln, *halide;
};

// Twin output buffers of one output: the same shape and mins, filled with
// different garbage so that an element neither side writes cannot match.
template<typename T>
struct Out {
    std::string name;
    kiln::Buffer<T> kiln, halide;
    Out(std::string name, const std::vector<int> &sizes, const std::vector<int> &mins = {})
        : name(std::move(name)), kiln(sizes), halide(sizes) {
        if (!mins.empty()) {
            kiln.set_min(mins);
            halide.set_min(mins);
        }
        kiln.fill((T)17);
        halide.fill((T)42);
    }
    RawPair pair() { return {kiln.raw_buffer(), halide.raw_buffer()}; }
};

// Twin outputs of one type and shape, one per name.
template<typename T>
std::vector<Out<T>> outs(const std::vector<std::string> &names, const std::vector<int> &sizes,
                         const std::vector<int> &mins = {}) {
    std::vector<Out<T>> v;
    for (const std::string &n : names) v.emplace_back(n, sizes, mins);
    return v;
}

// The raw pairs of several groups of outputs, in order.
template<typename... T>
std::vector<RawPair> pairs(std::vector<Out<T>> &...groups) {
    std::vector<RawPair> v;
    (..., [&](auto &g) {
        for (auto &o : g) v.push_back(o.pair());
    }(groups));
    return v;
}

// A pipeline of one Func per value, out_i(x, y) = values[i], each scheduled
// by schedule(out_i) (a generic lambda).
template<typename L, typename Schedule>
typename L::Pipeline pipeline_of(const std::vector<typename L::Expr> &values, const typename L::Var &x,
                                 const typename L::Var &y, Schedule schedule) {
    std::vector<typename L::Func> fs;
    for (size_t i = 0; i < values.size(); i++) {
        fs.emplace_back("out" + std::to_string(i));
        fs.back()(x, y) = values[i];
        schedule(fs.back());
    }
    return typename L::Pipeline(fs);
}

// Builds the pipeline of `build` with each library and realizes it into the
// outputs, in the order of the pipeline's outputs, Halide's for `target`.
// Exceptions propagate (the case fails, naming the error).
template<typename Build>
void run(Build &&build, const std::vector<RawPair> &outs, const Halide::Target &target = H::host()) {
    std::vector<halide_buffer_t *> k, h;
    for (const RawPair &p : outs) {
        k.push_back(p.kiln);
        h.push_back(p.halide);
    }
    H::Pipeline hp = build(H{});
    H::realize(hp, h, target);
    K::Pipeline kp = build(K{});
    kp.realize_raw(k);
}

// The distance in units in the last place between two floats (0 when equal,
// both NaN, or +0 and -0); huge when one is NaN and the other is not.
template<typename T>
int64_t ulp_distance(T a, T b) {
    static_assert(std::is_floating_point<T>::value, "ulps of floats only");
    if (a == b || (std::isnan(a) && std::isnan(b))) return 0;
    if (std::isnan(a) || std::isnan(b)) return INT64_MAX;
    using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    auto ordered = [](T v) {
        I i;
        std::memcpy(&i, &v, sizeof(T));
        return i < 0 ? (int64_t)std::numeric_limits<I>::min() - (int64_t)i : (int64_t)i;
    };
    int64_t d = ordered(a) - ordered(b);
    return d < 0 ? -d : d;
}

// How far apart two floats are, in units in the last place of the larger
// of |a|, |b| and `scale`: plain ulps when scale is 0, and with a scale,
// absolute differences of values far below it (after cancellation) count in
// ulps of the scale.
template<typename T>
int64_t float_distance(T a, T b, double scale) {
    int64_t d = ulp_distance(a, b);
    double m = std::max({std::fabs((double)a), std::fabs((double)b), scale});
    if (scale <= 0 || d == 0 || d == INT64_MAX || !std::isfinite(m)) return d;
    T big = (T)m;
    double ulp = (double)std::nextafter(big, std::numeric_limits<T>::infinity()) - (double)big;
    return std::min(d, (int64_t)std::ceil(std::fabs((double)a - (double)b) / ulp));
}

// Checks Kiln's output against Halide's: integers exactly, floats within
// `ulps` (see float_distance for `scale`). The largest difference seen is
// printed when KILN_DIFF_ULPS is set in the environment.
template<typename T>
void compare(const Out<T> &out, int64_t ulps = 0, double scale = 0) {
    int bad = 0;
    int64_t worst = 0;
    std::ostringstream first;
    out.halide.for_each_element([&](const int *p) {
        T k = out.kiln(p), h = out.halide(p);
        int64_t d;
        if constexpr (std::is_floating_point<T>::value) {
            d = float_distance(k, h, scale);
        } else {
            d = k == h ? 0 : 1;
        }
        worst = std::max(worst, d);
        if (d <= ulps) return;
        if (bad++ == 0) {
            first << "at (";
            for (int i = 0; i < out.halide.dimensions(); i++) first << (i ? ", " : "") << p[i];
            first.precision(9);
            first << "): kiln " << +k << ", halide " << +h;
        }
    });
    if (std::getenv("KILN_DIFF_ULPS")) std::printf("%s: max difference %lld ulp\n", out.name.c_str(), (long long)worst);
    INFO(out.name << ": " << bad << " element(s) differ by more than " << ulps << " ulp; first " << first.str());
    CHECK(bad == 0);
}

// compare() on each output of a group.
template<typename T>
void compare(const std::vector<Out<T>> &group, int64_t ulps = 0, double scale = 0) {
    for (const Out<T> &o : group) compare(o, ulps, scale);
}

}  // namespace kd
