// apps/common/png_io: PNG round trips at every bit depth and channel count,
// the float conversions, and the errors for missing, corrupt and unwritable
// files.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "png_io.h"

namespace {

namespace fs = std::filesystem;
using Halide::Runtime::Buffer;
using kiln_apps::load_png;
using kiln_apps::save_png;

// A directory of its own for one test case, removed afterwards.
struct TempDir {
    fs::path path;
    TempDir() {
        static int count = 0;
        path = fs::temp_directory_path() /
               ("kiln_test_png_" + std::to_string(getpid()) + "_" + std::to_string(count++));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string file(const std::string &name) const { return (path / name).string(); }
};

// Every value distinct enough to catch swapped channels, rows or bytes.
template<typename T> Buffer<T, 3> pattern(int w, int h, int c) {
    Buffer<T, 3> b(w, h, c);
    b.for_each_element([&](int x, int y, int k) { b(x, y, k) = (T)(x * 131 + y * 7919 + k * 104729 + x * y); });
    return b;
}

template<typename T> void require_equal(const Buffer<const T, 3> &a, const Buffer<const T, 3> &b) {
    REQUIRE(a.dim(0).extent() == b.dim(0).extent());
    REQUIRE(a.dim(1).extent() == b.dim(1).extent());
    REQUIRE(a.dim(2).extent() == b.dim(2).extent());
    int bad = 0;
    a.for_each_element([&](int x, int y, int c) { bad += a(x, y, c) != b(x, y, c); });
    REQUIRE(bad == 0);
}

std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return "(no exception)";
}

void write_bytes(const std::string &path, const std::string &bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_bytes(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

TEMPLATE_TEST_CASE("png_io: round trip for gray, gray+alpha, RGB and RGBA", "[apps][png]", uint8_t, uint16_t) {
    TempDir dir;
    for (int c = 1; c <= 4; c++) {
        INFO("channels " << c);
        Buffer<TestType, 3> image = pattern<TestType>(37, 23, c);  // odd sizes: no row padding assumed
        save_png(dir.file("a.png"), image);
        Buffer<void, 3> back = load_png(dir.file("a.png"));
        REQUIRE(back.type() == halide_type_of<TestType>());
        require_equal<TestType>(image, back.as<TestType>());
    }
}

TEST_CASE("png_io: a 2-D buffer is saved as gray, crops and mins are honoured", "[apps][png]") {
    TempDir dir;
    Buffer<uint8_t, 3> image = pattern<uint8_t>(20, 10, 3);
    Buffer<uint8_t, 2> plane = image.sliced(2, 1);
    save_png(dir.file("gray.png"), plane);
    Buffer<uint8_t, 3> back = load_png(dir.file("gray.png")).as<uint8_t>();
    REQUIRE(back.channels() == 1);
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 20; x++) REQUIRE(back(x, y, 0) == image(x, y, 1));

    Buffer<uint8_t, 3> crop = image.cropped(0, 5, 7).cropped(1, 2, 4);  // mins (5, 2)
    save_png(dir.file("crop.png"), crop);
    Buffer<uint8_t, 3> crop_back = load_png(dir.file("crop.png")).as<uint8_t>();
    REQUIRE(crop_back.width() == 7);
    REQUIRE(crop_back.height() == 4);
    REQUIRE(crop_back(0, 0, 2) == image(5, 2, 2));
    REQUIRE(crop_back(6, 3, 0) == image(11, 5, 0));
}

TEST_CASE("png_io: to_float and from_float round trip exactly at 8 and 16 bits", "[apps][png]") {
    Buffer<uint8_t, 3> u8 = pattern<uint8_t>(16, 16, 3);
    Buffer<float, 3> f8 = kiln_apps::to_float(u8);
    REQUIRE(f8(0, 0, 0) == 0.0f);
    f8.for_each_value([](float v) { REQUIRE((v >= 0.0f && v <= 1.0f)); });
    require_equal<uint8_t>(u8, kiln_apps::from_float(f8, 8).as<uint8_t>());

    Buffer<uint16_t, 3> u16 = pattern<uint16_t>(16, 16, 2);
    require_equal<uint16_t>(u16, kiln_apps::from_float(kiln_apps::to_float(u16), 16).as<uint16_t>());
}

TEST_CASE("png_io: from_float clamps, rounds and maps NaN to 0", "[apps][png]") {
    Buffer<float, 3> f(4, 1, 1);
    f(0, 0, 0) = -0.5f;
    f(1, 0, 0) = 2.0f;
    f(2, 0, 0) = 0.5f;
    f(3, 0, 0) = std::nanf("");
    Buffer<uint8_t, 3> q = kiln_apps::from_float(f, 8).as<uint8_t>();
    CHECK(q(0, 0, 0) == 0);
    CHECK(q(1, 0, 0) == 255);
    CHECK(q(2, 0, 0) == 128);  // 127.5 rounds to even
    CHECK(q(3, 0, 0) == 0);
    REQUIRE_THROWS_WITH(kiln_apps::from_float(f, 12), "from_float: bits must be 8 or 16, not 12");
}

TEST_CASE("png_io: a missing file names the path and the reason", "[apps][png]") {
    TempDir dir;
    std::string path = dir.file("nothing_here.png");
    REQUIRE(error_of([&] { load_png(path); }) ==
            "load_png(\"" + path + "\"): cannot open: No such file or directory");
}

TEST_CASE("png_io: a file that is not a PNG is rejected by its signature", "[apps][png]") {
    TempDir dir;
    write_bytes(dir.file("text.png"), "this is not an image, just text\n");
    REQUIRE(error_of([&] { load_png(dir.file("text.png")); }) ==
            "load_png(\"" + dir.file("text.png") + "\"): not a PNG file (the first 8 bytes are not the PNG signature)");
    write_bytes(dir.file("empty.png"), "");
    REQUIRE_THAT(error_of([&] { load_png(dir.file("empty.png")); }), Catch::Contains("not a PNG file"));
}

TEST_CASE("png_io: truncated and corrupted PNGs are errors, not crashes", "[apps][png]") {
    TempDir dir;
    save_png(dir.file("good.png"), pattern<uint8_t>(64, 64, 3));
    const std::string good = read_bytes(dir.file("good.png"));

    // Cut inside the header chunk, then inside the image data.
    write_bytes(dir.file("short_header.png"), good.substr(0, 20));
    REQUIRE_THAT(error_of([&] { load_png(dir.file("short_header.png")); }),
                 Catch::StartsWith("load_png(\"" + dir.file("short_header.png") + "\"): corrupt PNG header: "));
    write_bytes(dir.file("short_data.png"), good.substr(0, good.size() / 2));
    REQUIRE_THAT(error_of([&] { load_png(dir.file("short_data.png")); }),
                 Catch::StartsWith("load_png(\"" + dir.file("short_data.png") +
                                   "\"): corrupt or truncated image data: "));

    // Garbage in the middle of the compressed data: a CRC or zlib error.
    std::string bad = good;
    for (size_t i = bad.size() / 2; i < bad.size() / 2 + 64; i++) bad[i] = (char)(bad[i] ^ 0x5a);
    write_bytes(dir.file("garbled.png"), bad);
    REQUIRE_THAT(error_of([&] { load_png(dir.file("garbled.png")); }),
                 Catch::StartsWith("load_png(\"" + dir.file("garbled.png") + "\"): corrupt"));

    // The reader is still usable afterwards.
    REQUIRE(load_png(dir.file("good.png")).dim(0).extent() == 64);
}

TEST_CASE("png_io: save_png rejects what a PNG cannot hold", "[apps][png]") {
    TempDir dir;
    const std::string path = dir.file("out.png");
    auto prefix = "save_png(\"" + path + "\"): ";
    REQUIRE(error_of([&] { save_png(path, Buffer<float, 3>(4, 4, 3)); }) ==
            prefix + "the buffer's element type must be uint8 or uint16 (see from_float)");
    REQUIRE(error_of([&] { save_png(path, Buffer<uint8_t, 3>(4, 4, 5)); }) ==
            prefix + "the buffer has 5 channels; a PNG has 1 to 4");
    REQUIRE(error_of([&] { save_png(path, Buffer<uint8_t, 1>(4)); }) ==
            prefix + "the buffer has 1 dimensions; give 2 (x, y) or 3 (x, y, channels)");
    const std::string nowhere = dir.file("no_such_dir/out.png");
    REQUIRE(error_of([&] { save_png(nowhere, Buffer<uint8_t, 3>(4, 4, 1)); }) ==
            "save_png(\"" + nowhere + "\"): cannot open for writing: No such file or directory");
}

TEST_CASE("png_io: the shipped test images load with their documented shapes", "[apps][png]") {
    struct Expect {
        const char *name;
        int w, h, c, bits;
    };
    for (const Expect &e : {Expect{"scene.png", 256, 256, 3, 8}, Expect{"scene_gray16.png", 192, 144, 1, 16},
                            Expect{"scene_rgba.png", 128, 128, 4, 8}}) {
        INFO(e.name);
        Buffer<void, 3> b = load_png(std::string(KILN_APPS_DATA_DIR) + "/" + e.name);
        CHECK(b.dim(0).extent() == e.w);
        CHECK(b.dim(1).extent() == e.h);
        CHECK(b.dim(2).extent() == e.c);
        CHECK(b.type().bits == e.bits);
    }
}
