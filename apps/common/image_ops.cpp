#include "image_ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kiln_apps {

using Halide::Runtime::Buffer;

Buffer<float, 3> with_channels(const Buffer<const float, 3> &image, int channels) {
    if (channels < 1) throw std::runtime_error("with_channels: channels must be at least 1");
    const int w = image.dim(0).extent(), h = image.dim(1).extent(), src = image.dim(2).extent();
    const int x0 = image.dim(0).min(), y0 = image.dim(1).min(), c0 = image.dim(2).min();
    Buffer<float, 3> out(w, h, channels);
    out.for_each_element([&](int x, int y, int c) {
        if (channels == 1 && src >= 3) {
            out(x, y, c) = 0.299f * image(x0 + x, y0 + y, c0) + 0.587f * image(x0 + x, y0 + y, c0 + 1) +
                           0.114f * image(x0 + x, y0 + y, c0 + 2);
        } else {
            // Gray (with or without alpha) is repeated into every colour channel.
            int from = src < 3 ? 0 : std::min(c, src - 1);
            out(x, y, c) = image(x0 + x, y0 + y, c0 + from);
        }
    });
    return out;
}

Buffer<float, 3> mirror_tile(const Buffer<const float, 3> &image, int width, int height) {
    const int w = image.dim(0).extent(), h = image.dim(1).extent(), c = image.dim(2).extent();
    const int x0 = image.dim(0).min(), y0 = image.dim(1).min(), c0 = image.dim(2).min();
    // 0 1 .. n-1 n-1 .. 1 0 0 1 ..: the index of i in a mirrored repetition of n.
    auto mirror = [](int i, int n) {
        int m = i % (2 * n);
        return m < n ? m : 2 * n - 1 - m;
    };
    Buffer<float, 3> out(width, height, c);
    out.for_each_element(
        [&](int x, int y, int k) { out(x, y, k) = image(x0 + mirror(x, w), y0 + mirror(y, h), c0 + k); });
    return out;
}

namespace {

// A hash of (x, y, seed) to [0, 1).
float noise(int x, int y, uint32_t seed) {
    uint32_t v = (uint32_t)x * 0x9E3779B1u ^ (uint32_t)y * 0x85EBCA77u ^ seed * 0xC2B2AE3Du;
    v ^= v >> 15;
    v *= 0x2C1B3C6Du;
    v ^= v >> 12;
    v *= 0x297A2D39u;
    v ^= v >> 15;
    return (float)(v >> 8) / (float)(1u << 24);
}

float mix(float a, float b, float t) { return a + (b - a) * t; }
float smoothstep(float e0, float e1, float v) {
    float t = std::clamp((v - e0) / (e1 - e0), 0.0f, 1.0f);
    return t * t * (3 - 2 * t);
}

struct Rgb {
    float r, g, b;
};
Rgb mix(Rgb a, Rgb b, float t) { return {mix(a.r, b.r, t), mix(a.g, b.g, t), mix(a.b, b.b, t)}; }

// The scene at (u, v) in [0, 1)^2; x, y for the pixel-level texture.
Rgb scene(float u, float v, int x, int y, uint32_t seed) {
    const float phase = (float)(seed % 97) * 0.37f;
    const float pi = 3.14159265f;
    // Sky: deep blue at the top, pale at the horizon.
    Rgb c = mix(Rgb{0.16f, 0.30f, 0.72f}, Rgb{0.88f, 0.84f, 0.74f}, smoothstep(0.0f, 0.6f, v));
    // Sun with a soft glow.
    float du = u - 0.74f, dv = v - 0.22f, d = std::sqrt(du * du + dv * dv);
    c = mix(c, Rgb{1.0f, 0.93f, 0.62f}, 0.5f * std::exp(-d * d / 0.02f));
    if (d < 0.07f) c = Rgb{1.0f, 0.97f, 0.80f};
    // Hills, a darker ridge behind a nearer one.
    float far = 0.50f + 0.05f * std::sin(2 * pi * 1.3f * u + phase) + 0.02f * std::sin(2 * pi * 4.1f * u);
    float near = 0.60f + 0.04f * std::sin(2 * pi * 0.8f * u + 2 * phase) + 0.015f * std::sin(2 * pi * 6.3f * u);
    if (v > far) c = mix(Rgb{0.32f, 0.40f, 0.48f}, Rgb{0.25f, 0.34f, 0.30f}, smoothstep(far, far + 0.1f, v));
    if (v > near) {
        // Grass: a gradient with stripes of mown rows and fine grain.
        float rows = 0.5f + 0.5f * std::sin(2 * pi * 18.0f * v * v);
        c = mix(Rgb{0.30f, 0.55f, 0.20f}, Rgb{0.18f, 0.38f, 0.12f}, 0.5f * smoothstep(near, 1.0f, v) + 0.2f * rows);
    }
    // A house: a red wall, a dark roof (a triangle), a window.
    if (u > 0.12f && u < 0.34f && v > 0.52f && v < 0.74f) {
        c = Rgb{0.72f, 0.22f, 0.16f};
        if (u > 0.18f && u < 0.24f && v > 0.58f && v < 0.64f) c = Rgb{0.95f, 0.90f, 0.55f};
    }
    float roof = 0.52f - (0.11f - std::fabs(u - 0.23f));
    if (v <= 0.52f && v > roof && std::fabs(u - 0.23f) < 0.13f) c = Rgb{0.22f, 0.18f, 0.20f};
    // A checkerboard flag: corners for harris.
    if (u > 0.50f && u < 0.64f && v > 0.66f && v < 0.78f) {
        bool odd = ((int)std::floor((u - 0.50f) * 50) + (int)std::floor((v - 0.66f) * 50)) & 1;
        c = odd ? Rgb{0.95f, 0.95f, 0.95f} : Rgb{0.05f, 0.05f, 0.08f};
    }
    // A ball with shading.
    float bu = u - 0.82f, bv = v - 0.80f, br = std::sqrt(bu * bu + bv * bv);
    if (br < 0.09f) {
        float light = 0.55f + 0.45f * std::max(0.0f, (-bu - bv) / 0.09f * 0.7f + 0.3f);
        c = Rgb{0.15f * light, 0.35f * light, 0.95f * light};
    }
    // Grain and noise.
    float n = (noise(x, y, seed) - 0.5f) * 0.06f;
    return {std::clamp(c.r + n, 0.0f, 1.0f), std::clamp(c.g + n, 0.0f, 1.0f), std::clamp(c.b + n, 0.0f, 1.0f)};
}

}  // namespace

Buffer<float, 3> synthetic_photo(int width, int height, int channels, uint32_t seed) {
    if (width < 1 || height < 1) throw std::runtime_error("synthetic_photo: the size must be positive");
    if (channels != 1 && channels != 3 && channels != 4)
        throw std::runtime_error("synthetic_photo: channels must be 1, 3 or 4, not " + std::to_string(channels));
    Buffer<float, 3> out(width, height, channels);
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            Rgb c = scene((x + 0.5f) / width, (y + 0.5f) / height, x, y, seed);
            if (channels == 1) {
                out(x, y, 0) = 0.299f * c.r + 0.587f * c.g + 0.114f * c.b;
                continue;
            }
            out(x, y, 0) = c.r;
            out(x, y, 1) = c.g;
            out(x, y, 2) = c.b;
            if (channels == 4) {
                float du = (x + 0.5f) / width - 0.5f, dv = (y + 0.5f) / height - 0.5f;
                out(x, y, 3) = 1.0f - smoothstep(0.35f, 0.5f, std::sqrt(du * du + dv * dv));
            }
        }
    }
    return out;
}

}  // namespace kiln_apps
