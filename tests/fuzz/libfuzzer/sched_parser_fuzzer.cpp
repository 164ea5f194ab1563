// libFuzzer target for the schedule-file parser (built and run by
// scripts/fuzz.sh, not by the default test build). Whatever the bytes,
// ScheduleFile::parse() either succeeds, and then its canonical text parses
// to the same stanzas, or throws a CompileError whose message starts with
// "fuzz.sched:LINE:COL: ". Anything else aborts, which libFuzzer reports
// with the input that caused it.
#include <kiln/ScheduleFile.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const std::regex position("^fuzz\\.sched:[0-9]+:[0-9]+: [^\\n]+");
    std::string text((const char *)data, size);
    kiln::ScheduleFile f;
    try {
        f = kiln::ScheduleFile::parse(text, "fuzz.sched");
    } catch (const kiln::CompileError &e) {
        if (std::regex_match(std::string(e.what()), position)) return 0;
        std::fprintf(stderr, "rejection without file:line:col (or on several lines): %s\n", e.what());
        std::abort();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "parse threw something other than a CompileError: %s\n", e.what());
        std::abort();
    }
    std::string canonical = f.to_string();
    try {
        if (kiln::ScheduleFile::parse(canonical, "fuzz.sched").stanzas() == f.stanzas()) return 0;
        std::fprintf(stderr, "the canonical text parses differently:\n%s\n", canonical.c_str());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "the canonical text does not parse: %s\n%s\n", e.what(), canonical.c_str());
    }
    std::abort();
}
