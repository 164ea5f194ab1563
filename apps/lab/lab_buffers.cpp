#include "lab_buffers.h"

#include <kiln/Float16.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln_lab {

using Halide::Runtime::Buffer;
using kiln::GeneratorInputBase;

namespace {

// Call f(T()) for the C++ type T of halide type t; a CompileError for others.
template<typename F> void visit_element_type(const halide_type_t &t, F &&f) {
    switch (t.code) {
    case halide_type_float:
        if (t.bits == 16) return f(kiln::float16_t());
        if (t.bits == 32) return f(float());
        if (t.bits == 64) return f(double());
        break;
    case halide_type_uint:
        if (t.bits == 8) return f(uint8_t());
        if (t.bits == 16) return f(uint16_t());
        if (t.bits == 32) return f(uint32_t());
        if (t.bits == 64) return f(uint64_t());
        break;
    case halide_type_int:
        if (t.bits == 8) return f(int8_t());
        if (t.bits == 16) return f(int16_t());
        if (t.bits == 32) return f(int32_t());
        if (t.bits == 64) return f(int64_t());
        break;
    case halide_type_bfloat:
        if (t.bits == 16) return f(kiln::bfloat16_t());
        break;
    default:
        break;
    }
    throw kiln::CompileError("kiln-lab: buffers of element type code " + std::to_string(t.code) + ", " +
                             std::to_string(t.bits) + " bits are not supported (bool, handles)");
}

// A float element type, the 16-bit ones (kiln::float16_t, kiln::bfloat16_t) included.
template<typename T>
constexpr bool is_float_v = std::is_floating_point<T>::value || std::is_same<T, kiln::float16_t>::value ||
                            std::is_same<T, kiln::bfloat16_t>::value;

// ---- Finding the ImageParam of a buffer Input ----

template<typename T, int D> bool try_image(const GeneratorInputBase &in, kiln::ImageParam &out) {
    const auto *p = dynamic_cast<const kiln::Input<Halide::Runtime::Buffer<T, D>> *>(&in);
    if (p) out = p->param();
    return p != nullptr;
}

template<typename T, int... Ds>
bool try_image_dims(const GeneratorInputBase &in, kiln::ImageParam &out, std::integer_sequence<int, Ds...>) {
    return (try_image<T, Ds>(in, out) || ...);
}

template<typename... Ts> bool try_image_types(const GeneratorInputBase &in, kiln::ImageParam &out) {
    using Dims = std::integer_sequence<int, Halide::Runtime::AnyDims, 0, 1, 2, 3, 4, 5, 6, 7, 8>;
    return (try_image_dims<Ts>(in, out, Dims{}) || ...);
}

// ---- Scalars ----

template<typename T> bool parse(const std::string &s, T &v) {
    if constexpr (std::is_same<T, bool>::value) {
        if (s == "true" || s == "1") v = true;
        else if (s == "false" || s == "0") v = false;
        else return false;
        return true;
    } else if constexpr (std::is_floating_point<T>::value) {
        char *end = nullptr;
        double d = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0') return false;
        v = (T)d;
        return true;
    } else {
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        return r.ec == std::errc() && r.ptr == s.data() + s.size();
    }
}

template<typename T> bool try_scalar(const GeneratorInputBase &in, const std::string &text, bool &parsed) {
    const auto *p = dynamic_cast<const kiln::Input<T> *>(&in);
    if (!p) return false;
    T v{};
    parsed = parse(text, v);
    if (parsed) {
        kiln::Param<T> param = p->param();  // a handle to the same parameter
        param.set(v);
    }
    return true;
}

template<typename... Ts> bool try_scalar_types(const GeneratorInputBase &in, const std::string &text, bool &parsed) {
    return (try_scalar<Ts>(in, text, parsed) || ...);
}

template<typename T> T from_unit(float v, double scale) {
    if constexpr (is_float_v<T>) {
        return T(v);
    } else {
        double d = std::nearbyint((double)v * scale);
        double lo = std::is_signed<T>::value ? -scale : 0.0;
        return (T)(d > lo ? (d < scale ? d : scale) : lo);  // NaN -> lo
    }
}

}  // namespace

kiln::ImageParam image_param(const GeneratorInputBase &input) {
    kiln::ImageParam p;
    if (try_image_types<void, bool, uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t, int32_t, int64_t,
                        kiln::float16_t, kiln::bfloat16_t, float, double>(input, p))
        return p;
    throw kiln::CompileError("kiln-lab: cannot bind Input '" + input.name() + "' (" + input.describe() +
                             "): not a buffer Input of a supported element type with 0 to 8 dimensions");
}

bool set_scalar(const GeneratorInputBase &input, const std::string &text) {
    bool parsed = false;
    if (try_scalar_types<bool, uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t, int32_t, int64_t, float,
                         double>(input, text, parsed))
        return parsed;
    throw kiln::CompileError("kiln-lab: Input '" + input.name() + "' (" + input.describe() + ") is not a scalar");
}

double full_scale(const halide_type_t &t) {
    if (t.code == halide_type_float || t.code == halide_type_bfloat) return 1.0;
    if (t.bits == 8) return t.code == halide_type_int ? 127.0 : 255.0;
    if (t.bits == 16 && t.code == halide_type_int) return 32767.0;
    return 65535.0;
}

Buffer<void> from_unit_float(const Buffer<const float, 3> &image, const halide_type_t &t, int dims) {
    if (dims < 1 || dims > 3)
        throw kiln::CompileError("kiln-lab: image inputs must have 1 to 3 dimensions, not " + std::to_string(dims));
    const int w = image.dim(0).extent(), h = dims == 1 ? 1 : image.dim(1).extent();
    std::vector<int> extents = {w};
    if (dims >= 2) extents.push_back(h);
    if (dims == 3) extents.push_back(image.dim(2).extent());
    Buffer<void> out(t, extents);
    const double scale = full_scale(t);
    visit_element_type(t, [&](auto tag) {
        using T = decltype(tag);
        Buffer<T> typed = out.as<T>();
        const int channels = dims == 3 ? extents[2] : 1;
        for (int c = 0; c < channels; c++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    T v = from_unit<T>(image(x, y, c), scale);
                    if (dims == 3) typed(x, y, c) = v;
                    else if (dims == 2) typed(x, y) = v;
                    else typed(x) = v;
                }
    });
    return out;
}

Buffer<void> random_buffer(const halide_type_t &t, const std::vector<int> &extents, uint32_t seed) {
    Buffer<void> out(t, extents);
    const double scale = full_scale(t);
    uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
    auto next = [&] {  // splitmix64, uniform in [0, 1)
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
    };
    visit_element_type(t, [&](auto tag) {
        using T = decltype(tag);
        Buffer<T> typed = out.as<T>();
        const bool is_signed = is_float_v<T> || std::is_signed<T>::value;
        typed.for_each_value([&](T &v) {
            double u = is_signed ? 2 * next() - 1 : next();
            v = is_float_v<T> ? T(u) : T(std::nearbyint(u * scale));
        });
    });
    return out;
}

Buffer<double, 3> to_double(const Buffer<const void> &b) {
    if (b.dimensions() < 1)
        throw kiln::CompileError("kiln-lab: outputs must have 1 dimension or more, not " +
                                 std::to_string(b.dimensions()));
    if (b.dimensions() > 3) {
        // Dimensions 2 and up (a convolution's weights: x, y, then the
        // channels and taps) side by side as one, from 0.
        int folded = 1;
        for (int d = 2; d < b.dimensions(); d++) folded *= b.dim(d).extent();
        Buffer<double, 3> out(b.dim(0).extent(), b.dim(1).extent(), folded);
        out.set_min(b.dim(0).min(), b.dim(1).min(), 0);
        // Folded index c has dimension 2 fastest: decoded digit by digit.
        // (Not for_each_element's coordinate-array form, which makes g++
        // warn that the array may be used uninitialized in HalideBuffer.h.)
        visit_element_type(b.type(), [&](auto tag) {
            using T = decltype(tag);
            Buffer<const T> typed = b.as<const T>();
            std::vector<int> pos(b.dimensions());
            for (int c = 0; c < folded; c++) {
                for (int d = 2, rest = c; d < b.dimensions(); d++) {
                    pos[d] = b.dim(d).min() + rest % b.dim(d).extent();
                    rest /= b.dim(d).extent();
                }
                for (pos[1] = b.dim(1).min(); pos[1] <= b.dim(1).max(); pos[1]++)
                    for (pos[0] = b.dim(0).min(); pos[0] <= b.dim(0).max(); pos[0]++)
                        out(pos[0], pos[1], c) = (double)typed(pos.data());
            }
        });
        return out;
    }
    // A row (a per-column gradient such as d_bias) is an image of height 1.
    Buffer<const void> rows = b.dimensions() == 1 ? b.embedded(1, 0) : b;
    Buffer<const void, 3> b3(rows.dimensions() == 3 ? rows : rows.embedded(2, 0));
    Buffer<double, 3> out(b3.dim(0).extent(), b3.dim(1).extent(), b3.dim(2).extent());
    out.set_min(b3.dim(0).min(), b3.dim(1).min(), b3.dim(2).min());
    visit_element_type(b3.type(), [&](auto tag) {
        using T = decltype(tag);
        Buffer<const T, 3> typed = b3.as<const T>();
        out.for_each_element([&](int x, int y, int c) { out(x, y, c) = (double)typed(x, y, c); });
    });
    return out;
}

}  // namespace kiln_lab
