// libpng reports errors by calling an error function that must not return;
// ours copies the message and longjmps back to the setjmp of the function
// that made the libpng call. Every setjmp is in a small function (read_header,
// read_rows, write_all) whose own locals are not touched after it: all state
// lives in a Session reached through a pointer, so nothing is left
// indeterminate by the jump, and no C++ destructor is skipped (only libpng's
// C frames are unwound). The C++ callers then clean up with RAII and throw.
#include "png_io.h"

#include <png.h>

#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace kiln_apps {

namespace {

using Halide::Runtime::Buffer;

// One libpng read or write: the handles, the file and the last error.
struct Session {
    FILE *file = nullptr;
    png_structp png = nullptr;
    png_infop info = nullptr;
    bool writing = false;
    char error[256] = "";
    // Header fields, after read_header (or before write_all).
    png_uint_32 width = 0, height = 0;
    int channels = 0, bit_depth = 0;

    ~Session() {
        if (png) {
            if (writing) png_destroy_write_struct(&png, &info);
            else png_destroy_read_struct(&png, &info, nullptr);
        }
        if (file) std::fclose(file);
    }
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
    Session *s = static_cast<Session *>(png_get_error_ptr(png));
    std::snprintf(s->error, sizeof(s->error), "%s", message ? message : "unknown libpng error");
    png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // warnings are not failures

[[noreturn]] void fail(const char *what, const std::string &path, const std::string &reason) {
    throw std::runtime_error(std::string(what) + "(\"" + path + "\"): " + reason);
}

// Set up the transformations to 8/16-bit gray, gray+alpha, RGB or RGBA and
// read the header. False on a libpng error (message in s->error).
bool read_header(Session *s) {
    if (setjmp(png_jmpbuf(s->png))) return false;
    png_init_io(s->png, s->file);
    png_set_sig_bytes(s->png, 8);
    png_read_info(s->png, s->info);
    int color = png_get_color_type(s->png, s->info);
    int depth = png_get_bit_depth(s->png, s->info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(s->png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(s->png);
    if (png_get_valid(s->png, s->info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(s->png);
    if (depth == 16) png_set_swap(s->png);  // PNG is big-endian; our uint16_t is native (x86, ARM: little)
    png_set_interlace_handling(s->png);
    png_read_update_info(s->png, s->info);
    s->width = png_get_image_width(s->png, s->info);
    s->height = png_get_image_height(s->png, s->info);
    s->channels = png_get_channels(s->png, s->info);
    s->bit_depth = png_get_bit_depth(s->png, s->info);
    return true;
}

// Read every row into rows[y]. False on a libpng error.
bool read_rows(Session *s, png_bytep *rows) {
    if (setjmp(png_jmpbuf(s->png))) return false;
    png_read_image(s->png, rows);
    png_read_end(s->png, nullptr);
    return true;
}

// Write the header from s and the rows. False on a libpng error.
bool write_all(Session *s, png_bytep *rows) {
    if (setjmp(png_jmpbuf(s->png))) return false;
    static const int kColor[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                  PNG_COLOR_TYPE_RGB_ALPHA};
    png_init_io(s->png, s->file);
    png_set_IHDR(s->png, s->info, s->width, s->height, s->bit_depth, kColor[s->channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(s->png, s->info);
    if (s->bit_depth == 16) png_set_swap(s->png);
    png_write_image(s->png, rows);
    png_write_end(s->png, nullptr);
    return true;
}

// Copy between the interleaved rows of a PNG and a planar buffer.
template<typename T>
void interleaved_to_planar(const std::vector<uint8_t> &data, Buffer<T, 3> &out) {
    const int w = out.dim(0).extent(), h = out.dim(1).extent(), c = out.dim(2).extent();
    const T *p = reinterpret_cast<const T *>(data.data());
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) out(x, y, k) = p[((size_t)y * w + x) * c + k];
}

template<typename T>
void planar_to_interleaved(const Buffer<const T, 3> &in, std::vector<uint8_t> &data) {
    const int w = in.dim(0).extent(), h = in.dim(1).extent(), c = in.dim(2).extent();
    const int x0 = in.dim(0).min(), y0 = in.dim(1).min(), c0 = in.dim(2).min();
    T *p = reinterpret_cast<T *>(data.data());
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < c; k++) p[((size_t)y * w + x) * c + k] = in(x0 + x, y0 + y, c0 + k);
}

std::vector<png_bytep> row_pointers(std::vector<uint8_t> &data, size_t row_bytes, png_uint_32 height) {
    std::vector<png_bytep> rows(height);
    for (png_uint_32 y = 0; y < height; y++) rows[y] = data.data() + y * row_bytes;
    return rows;
}

}  // namespace

Buffer<void, 3> load_png(const std::string &path) {
    Session s;
    s.file = std::fopen(path.c_str(), "rb");
    if (!s.file) fail("load_png", path, std::string("cannot open: ") + std::strerror(errno));
    png_byte signature[8];
    size_t got = std::fread(signature, 1, 8, s.file);
    if (got != 8 || png_sig_cmp(signature, 0, 8))
        fail("load_png", path, "not a PNG file (the first 8 bytes are not the PNG signature)");
    s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, on_error, on_warning);
    if (s.png) s.info = png_create_info_struct(s.png);
    if (!s.png || !s.info) fail("load_png", path, "out of memory creating the libpng reader");
    if (!read_header(&s)) fail("load_png", path, std::string("corrupt PNG header: ") + s.error);

    const size_t sample = s.bit_depth == 16 ? 2 : 1;
    const size_t row_bytes = (size_t)s.width * s.channels * sample;
    if (row_bytes != png_get_rowbytes(s.png, s.info))
        fail("load_png", path, "unexpected row size after conversion (unsupported PNG variant)");
    std::vector<uint8_t> data(row_bytes * s.height);
    std::vector<png_bytep> rows = row_pointers(data, row_bytes, s.height);
    if (!read_rows(&s, rows.data())) fail("load_png", path, std::string("corrupt or truncated image data: ") + s.error);

    const int w = (int)s.width, h = (int)s.height, c = s.channels;
    if (s.bit_depth == 16) {
        Buffer<uint16_t, 3> out(w, h, c);
        interleaved_to_planar(data, out);
        return out;
    }
    Buffer<uint8_t, 3> out(w, h, c);
    interleaved_to_planar(data, out);
    return out;
}

void save_png(const std::string &path, const Buffer<const void> &image) {
    if (!image.data()) fail("save_png", path, "the buffer has no data");
    if (image.dimensions() != 2 && image.dimensions() != 3)
        fail("save_png", path, "the buffer has " + std::to_string(image.dimensions()) +
                                   " dimensions; give 2 (x, y) or 3 (x, y, channels)");
    Buffer<const void, 3> im(image.dimensions() == 3 ? image : image.embedded(2, 0));
    const bool u8 = im.type() == halide_type_of<uint8_t>(), u16 = im.type() == halide_type_of<uint16_t>();
    if (!u8 && !u16) fail("save_png", path, "the buffer's element type must be uint8 or uint16 (see from_float)");
    const int c = im.dim(2).extent();
    if (c < 1 || c > 4)
        fail("save_png", path, "the buffer has " + std::to_string(c) + " channels; a PNG has 1 to 4");
    if (im.dim(0).extent() < 1 || im.dim(1).extent() < 1) fail("save_png", path, "the image is empty");

    Session s;
    s.writing = true;
    s.width = im.dim(0).extent();
    s.height = im.dim(1).extent();
    s.channels = c;
    s.bit_depth = u16 ? 16 : 8;
    const size_t row_bytes = (size_t)s.width * c * (u16 ? 2 : 1);
    std::vector<uint8_t> data(row_bytes * s.height);
    if (u16) planar_to_interleaved(im.as<const uint16_t>(), data);
    else planar_to_interleaved(im.as<const uint8_t>(), data);
    std::vector<png_bytep> rows = row_pointers(data, row_bytes, s.height);

    s.file = std::fopen(path.c_str(), "wb");
    if (!s.file) fail("save_png", path, std::string("cannot open for writing: ") + std::strerror(errno));
    s.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s, on_error, on_warning);
    if (s.png) s.info = png_create_info_struct(s.png);
    if (!s.png || !s.info) fail("save_png", path, "out of memory creating the libpng writer");
    if (!write_all(&s, rows.data())) fail("save_png", path, std::string("libpng error: ") + s.error);
    FILE *f = s.file;
    s.file = nullptr;
    if (std::fclose(f) != 0) fail("save_png", path, std::string("cannot finish writing: ") + std::strerror(errno));
}

Buffer<float, 3> to_float(const Buffer<const void, 3> &image) {
    Buffer<float, 3> out(image.dim(0).extent(), image.dim(1).extent(), image.dim(2).extent());
    out.set_min(image.dim(0).min(), image.dim(1).min(), image.dim(2).min());
    if (image.type() == halide_type_of<uint8_t>()) {
        Buffer<const uint8_t, 3> in = image.as<const uint8_t>();
        out.for_each_element([&](int x, int y, int c) { out(x, y, c) = in(x, y, c) / 255.0f; });
    } else if (image.type() == halide_type_of<uint16_t>()) {
        Buffer<const uint16_t, 3> in = image.as<const uint16_t>();
        out.for_each_element([&](int x, int y, int c) { out(x, y, c) = in(x, y, c) / 65535.0f; });
    } else {
        throw std::runtime_error("to_float: the buffer's element type must be uint8 or uint16");
    }
    return out;
}

Buffer<void, 3> from_float(const Buffer<const float, 3> &image, int bits) {
    if (bits != 8 && bits != 16)
        throw std::runtime_error("from_float: bits must be 8 or 16, not " + std::to_string(bits));
    const double top = bits == 8 ? 255.0 : 65535.0;
    auto quantize = [top](float v) {
        double d = std::nearbyint((double)v * top);
        return d > 0 ? (d < top ? d : top) : 0.0;  // NaN compares false: 0
    };
    const int w = image.dim(0).extent(), h = image.dim(1).extent(), c = image.dim(2).extent();
    auto fill = [&](auto out) {
        out.set_min(image.dim(0).min(), image.dim(1).min(), image.dim(2).min());
        using T = typename decltype(out)::ElemType;
        out.for_each_element([&](int x, int y, int k) { out(x, y, k) = (T)quantize(image(x, y, k)); });
        return Buffer<void, 3>(out);
    };
    return bits == 8 ? fill(Buffer<uint8_t, 3>(w, h, c)) : fill(Buffer<uint16_t, 3>(w, h, c));
}

}  // namespace kiln_apps
