// apps/common/image_ops: channel fitting, mirrored tiling and the synthetic photo.
#include <catch2/catch.hpp>

#include "image_ops.h"

using Halide::Runtime::Buffer;

TEST_CASE("image_ops: with_channels takes the luma, repeats gray and drops alpha", "[apps]") {
    Buffer<float, 3> rgba(2, 1, 4);
    rgba.fill(0.0f);
    rgba(0, 0, 0) = 1.0f;  // red
    rgba(1, 0, 2) = 1.0f;  // blue
    rgba(0, 0, 3) = 0.25f;
    Buffer<float, 3> luma = kiln_apps::with_channels(rgba, 1);
    CHECK(luma(0, 0, 0) == Approx(0.299f));
    CHECK(luma(1, 0, 0) == Approx(0.114f));
    Buffer<float, 3> rgb = kiln_apps::with_channels(rgba, 3);
    REQUIRE(rgb.channels() == 3);
    CHECK(rgb(0, 0, 0) == 1.0f);
    CHECK(rgb(1, 0, 2) == 1.0f);

    Buffer<float, 3> gray_alpha(1, 1, 2);
    gray_alpha(0, 0, 0) = 0.5f;
    gray_alpha(0, 0, 1) = 1.0f;
    Buffer<float, 3> from_gray = kiln_apps::with_channels(gray_alpha, 3);
    for (int c = 0; c < 3; c++) CHECK(from_gray(0, 0, c) == 0.5f);
}

TEST_CASE("image_ops: mirror_tile repeats the image mirrored at its edges", "[apps]") {
    Buffer<float, 3> row(3, 1, 1);
    for (int x = 0; x < 3; x++) row(x, 0, 0) = (float)x;
    Buffer<float, 3> wide = kiln_apps::mirror_tile(row, 8, 2);
    const float expect[8] = {0, 1, 2, 2, 1, 0, 0, 1};
    for (int x = 0; x < 8; x++) {
        CHECK(wide(x, 0, 0) == expect[x]);
        CHECK(wide(x, 1, 0) == expect[x]);
    }
}

TEST_CASE("image_ops: synthetic_photo is deterministic and in [0, 1]", "[apps]") {
    Buffer<float, 3> a = kiln_apps::synthetic_photo(64, 48, 3, 7), b = kiln_apps::synthetic_photo(64, 48, 3, 7);
    Buffer<float, 3> c = kiln_apps::synthetic_photo(64, 48, 3, 8);
    int same = 0, differs = 0;
    a.for_each_element([&](int x, int y, int k) {
        REQUIRE((a(x, y, k) >= 0.0f && a(x, y, k) <= 1.0f));
        same += a(x, y, k) == b(x, y, k);
        differs += a(x, y, k) != c(x, y, k);
    });
    CHECK(same == 64 * 48 * 3);
    CHECK(differs > 0);
    REQUIRE(kiln_apps::synthetic_photo(8, 8, 4).channels() == 4);
    REQUIRE_THROWS_WITH(kiln_apps::synthetic_photo(8, 8, 2), "synthetic_photo: channels must be 1, 3 or 4, not 2");
}
