// Helpers of the error tier: every misuse must surface as a CompileError
// (never an InternalError or a crash) whose message names what is wrong and
// how to fix it; every rejected kernel argument as a RuntimeError with its
// code and a message naming the buffer or parameter.
#pragma once
#include <kiln/kiln.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

using Catch::Contains;

// expr throws a kiln::CompileError whose message satisfies the matcher
// (e.g. Contains("f") && Contains("compute_at")). expr is evaluated twice.
#define REQUIRE_COMPILE_ERROR(expr, matcher)            \
    do {                                                \
        REQUIRE_THROWS_AS(expr, kiln::CompileError);    \
        REQUIRE_THROWS_WITH(expr, matcher);             \
    } while (0)

// This process's own directory under the temporary directory
// (kiln-error-PID), for the files a test writes (.sched files, kiln-gen's
// output): created on first use, removed with its contents when the
// process exits, so that test runs leave nothing behind.
inline std::filesystem::path scratch_directory() {
    struct Scratch {
        std::filesystem::path path;
        ~Scratch() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    };
    static Scratch scratch{std::filesystem::temp_directory_path() / ("kiln-error-" + std::to_string(::getpid()))};
    std::filesystem::create_directories(scratch.path);
    return scratch.path;
}

// A buffer of the given sizes holding v everywhere.
template<typename T, typename... Sizes>
kiln::Buffer<T> filled(T v, Sizes... sizes) {
    kiln::Buffer<T> b(sizes...);
    b.fill(v);
    return b;
}

// The code of the kiln::RuntimeError that fn() throws (0 if none).
template<typename Fn>
int runtime_error_code(Fn fn) {
    try {
        fn();
    } catch (const kiln::RuntimeError &e) {
        return e.code;
    }
    return 0;
}

// expr throws a kiln::RuntimeError with this code whose message satisfies
// the matcher. Kernels also print the message through the runtime's error
// handler; that is expected here.
#define REQUIRE_RUNTIME_ERROR(expr, error_code, matcher)          \
    do {                                                          \
        REQUIRE(runtime_error_code([&] { expr; }) == error_code); \
        REQUIRE_THROWS_WITH(expr, matcher);                       \
    } while (0)
