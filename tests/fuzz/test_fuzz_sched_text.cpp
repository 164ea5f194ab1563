// Mutation fuzzing of schedule files: the project's .sched files, cut,
// spliced and sprinkled with tokens and stray bytes. Whatever the text,
// parse() either succeeds — and then print/parse round-trips, and applying
// the schedule to its generator's pipeline and lowering it either works or
// throws a CompileError — or throws a CompileError that starts with
// file:line:col. Any other exception, or a crash, is a bug. (The same
// property under libFuzzer: scripts/fuzz.sh.)
#include <kiln/Generator.h>
#include <kiln/ScheduleFile.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "fuzz.h"
#include "random_pipeline.h"

using namespace kiln;

namespace {

struct Seed {
    std::string generator, text;
};

std::vector<Seed> seeds() {
    std::vector<Seed> s;
    for (const auto &dir : std::filesystem::directory_iterator(std::string(KILN_SOURCE_DIR) + "/schedules")) {
        for (const auto &f : std::filesystem::directory_iterator(dir.path())) {
            std::ifstream in(f.path());
            std::stringstream text;
            text << in.rdbuf();
            s.push_back({dir.path().filename().string(), text.str()});
        }
    }
    std::sort(s.begin(), s.end(), [](const Seed &a, const Seed &b) { return a.text < b.text; });
    return s;
}

std::string mutate(const std::vector<Seed> &all, std::string t, kiln_fuzz::Rng &r) {
    static const char *const tokens[] = {"(", ")", ",", ":", "#", "\n", "\\\n", " ", "compute_at(", "store_at(",
                                         "split(", "tile(", "vectorize(", "update(", ".update(0):", "root", "x", "y",
                                         "xo", "99999999999", "-", "*", "/ 0", "natural_vector_size(", "float32", "0",
                                         "-8", "RoundUp", "output:", "blur_x:", "\t", "\"", "\xff"};
    int edits = r.pick(1, 4);
    for (int e = 0; e < edits; e++) {
        size_t at = t.empty() ? 0 : (size_t)r.pick(0, (int)t.size());
        switch (r.pick(0, 4)) {
        case 0: t.insert(at, tokens[r.pick(0, (int)(sizeof(tokens) / sizeof(tokens[0])) - 1)]); break;
        case 1: t.erase(at, (size_t)r.pick(1, 12)); break;
        case 2: t.insert(at, 1, (char)r.pick(1, 255)); break;
        case 3: {
            const std::string &o = all[r.pick(0, (int)all.size() - 1)].text;
            size_t from = (size_t)r.pick(0, (int)o.size());
            t.insert(at, o.substr(from, (size_t)r.pick(1, 40)));
            break;
        }
        default:
            if (!t.empty()) t[std::min(at, t.size() - 1)] = (char)r.pick(32, 126);
        }
    }
    return t;
}

}  // namespace

TEST_CASE("fuzz: mutated schedule files are parsed or rejected with a position", "[fuzz][sched]") {
    std::vector<Seed> all = seeds();
    REQUIRE(all.size() >= 4);
    const std::regex position("^fuzz\\.sched:[0-9]+:[0-9]+: .+");
    int iters = kiln_fuzz::iterations(600, 100);
    kiln_fuzz::Rng r(kiln_fuzz::seed(31337));
    int parsed = 0, rejected = 0, lowered = 0, failures = 0;
    for (int n = 0; n < iters && failures < 5; n++) {
        const Seed &s = all[r.pick(0, (int)all.size() - 1)];
        std::string text = mutate(all, s.text, r);
        INFO("mutated " << s.generator << " schedule:\n" << text);
        ScheduleFile f;
        try {
            f = ScheduleFile::parse(text, "fuzz.sched");
        } catch (const CompileError &e) {
            rejected++;
            if (!std::regex_match(std::string(e.what()), position)) {
                failures++;
                FAIL_CHECK("rejection without file:line:col: " << e.what());
            }
            continue;
        } catch (const std::exception &e) {
            failures++;
            FAIL_CHECK("parse threw something other than a CompileError: " << e.what());
            continue;
        }
        parsed++;
        CHECK(ScheduleFile::parse(f.to_string(), "fuzz.sched").stanzas() == f.stanzas());
        // Apply to a fresh copy of the generator's pipeline and lower it
        // (harris is left out: its bounds inference takes seconds when tiled).
        if (s.generator == "harris") continue;
        auto g = GeneratorRegistry::create(s.generator);
        Pipeline p = g->build_pipeline();
        try {
            f.apply(p);
            p.lowered_stmt();
            lowered++;
        } catch (const CompileError &) {
        } catch (const std::exception &e) {
            failures++;
            FAIL_CHECK("apply/lower threw something other than a CompileError: " << e.what());
        }
    }
    WARN(parsed << " parsed (" << lowered << " lowered), " << rejected << " rejected with a position");
    CHECK(parsed > 0);
    CHECK(rejected > 0);
}
