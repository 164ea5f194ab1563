#include "random_pipeline.h"

#include <algorithm>

#include "unit/ir_helpers.h"

namespace kiln_fuzz {

using namespace kiln;

std::string PipelineSpec::to_string() const {
    std::ostringstream s;
    s << "input " << in_w << "x" << in_h << ", output " << out_w << "x" << out_h << "\n";
    static const char *const posts[] = {"v",          "v / 3",       "v % 7",
                                        "min(v, 40)", "max(v, -40)", "select(v > 10, v - 5, v + 3)",
                                        "(v >> 1) ^ (v & 6)", "(v << 1) | (v & 3)"};
    for (size_t k = 0; k < stages.size(); k++) {
        const StageSpec &st = stages[k];
        s << "f" << k << ": v = ";
        for (size_t i = 0; i < st.taps.size(); i++) {
            const Tap &t = st.taps[i];
            s << (i ? " + " : "") << t.coef << " * " << (t.src < 0 ? std::string("in") : "f" + std::to_string(t.src))
              << "(x" << (st.kind == 1 ? " + r" : "") << (t.dx >= 0 ? " + " : " - ") << std::abs(t.dx) << ", y"
              << (t.dy >= 0 ? " + " : " - ") << std::abs(t.dy) << ")";
        }
        s << "; value " << posts[st.post]
          << (st.kind == 1 ? "; f = 0, f += value over r in [0, 3)" : st.kind == 2 ? "; then f = f * 2 + 1" : "")
          << "\n";
    }
    return s.str();
}

PipelineSpec random_pipeline(Rng &r) {
    PipelineSpec p;
    int n = r.pick(2, 5);
    for (int k = 0; k < n; k++) {
        StageSpec st;
        int taps = r.pick(1, 3);
        for (int i = 0; i < taps; i++) {
            int coef = r.pick(-2, 3);
            st.taps.push_back({i == 0 ? k - 1 : r.pick(-1, k - 1), r.pick(-2, 2), r.pick(-2, 2), coef ? coef : 1});
        }
        st.post = r.pick(0, 7);
        int kind = r.pick(0, 9);
        st.kind = kind < 6 ? 0 : kind < 8 ? 1 : 2;
        p.stages.push_back(st);
    }
    p.in_w = r.pick(5, 30), p.in_h = r.pick(5, 20);
    p.out_w = r.pick(9, 40), p.out_h = r.pick(3, 20);
    return p;
}

namespace {

int64_t post(int which, int64_t v) {
    switch (which) {
    case 1: return kiln_test::euclid_div(v, 3);
    case 2: return kiln_test::euclid_mod(v, 7);
    case 3: return std::min<int64_t>(v, 40);
    case 4: return std::max<int64_t>(v, -40);
    case 5: return v > 10 ? v - 5 : v + 3;
    case 6: return (v >> 1) ^ (v & 6);  // >> of a negative int64 is arithmetic, as in the IR
    case 7: return (int64_t)((uint64_t)v << 1) | (v & 3);
    default: return v;
    }
}

}  // namespace

std::vector<int32_t> reference(const PipelineSpec &p, const std::vector<int32_t> &input) {
    std::vector<std::map<std::pair<int, int>, int64_t>> memo(p.stages.size());
    std::function<int64_t(int, int, int)> eval = [&](int k, int x, int y) -> int64_t {
        if (k < 0) {
            int cx = std::min(std::max(x, 0), p.in_w - 1), cy = std::min(std::max(y, 0), p.in_h - 1);
            return input[cy * p.in_w + cx];
        }
        auto it = memo[k].find({x, y});
        if (it != memo[k].end()) return it->second;
        const StageSpec &st = p.stages[k];
        auto value = [&](int rx) {
            int64_t v = 0;
            for (const Tap &t : st.taps) v += t.coef * eval(t.src, x + t.dx + rx, y + t.dy);
            return post(st.post, v);
        };
        int64_t v = 0;
        if (st.kind == 1) {
            for (int rx = 0; rx < 3; rx++) v += value(rx);
        } else {
            v = value(0);
            if (st.kind == 2) v = v * 2 + 1;
        }
        memo[k][{x, y}] = v;
        return v;
    };
    std::vector<int32_t> out(p.out_w * p.out_h);
    for (int y = 0; y < p.out_h; y++)
        for (int x = 0; x < p.out_w; x++) out[y * p.out_w + x] = (int32_t)eval((int)p.stages.size() - 1, x, y);
    return out;
}

namespace {

// Kiln's names for build_stages().
struct KilnNames {
    using Func = kiln::Func;
    using Expr = kiln::Expr;
    using RDom = kiln::RDom;
    static Func repeat_edge(const ImageParam &im) { return BoundaryConditions::repeat_edge(im); }
};

}  // namespace

void build(const PipelineSpec &p, Built &b) { b.stages = build_stages<KilnNames>(p, b.in, b.x, b.y); }

namespace {

// Random loop shaping of a Func's pure stage; returns its loops, outermost
// first, and appends the directives to `text`.
std::vector<std::string> shape_loops(Func f, const PipelineSpec &p, bool is_output, Rng &r, std::ostringstream &text) {
    // An output split ShiftInwards needs at least one whole tile.
    auto tail_for = [&](int factor, int extent, int t) { return is_output && factor > extent ? 0 : t; };
    Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
    std::vector<std::string> loops = {"y", "x"};
    static const int factors[] = {2, 3, 4, 5, 7, 8};
    TailStrategy tails[] = {TailStrategy::GuardWithIf, TailStrategy::ShiftInwards, TailStrategy::RoundUp};
    static const char *const tail_names[] = {"GuardWithIf", "ShiftInwards", "RoundUp"};
    // RoundUp only for an intermediate of a pipeline that asks for it (the
    // draws of the other pipelines stay as they were).
    const int last_tail = !is_output && p.direct_input ? 2 : 1;
    if (r.chance(60)) {
        int fx = factors[r.pick(0, 5)], tx = tail_for(fx, is_output ? p.out_w : 0, r.pick(0, last_tail));
        if (r.chance(40)) {
            int fy = factors[r.pick(0, 5)], ty = tail_for(fy, is_output ? p.out_h : 0, r.pick(0, last_tail));
            f.split(x, xo, xi, fx, tails[tx]).split(y, yo, yi, fy, tails[ty]).reorder(xi, yi, xo, yo);
            text << " split(x, xo, xi, " << fx << ", " << tail_names[tx] << ") split(y, yo, yi, " << fy << ", "
                 << tail_names[ty] << ") reorder(xi, yi, xo, yo)";
            loops = {"yo", "xo", "yi", "xi"};
        } else {
            f.split(x, xo, xi, fx, tails[tx]);
            text << " split(x, xo, xi, " << fx << ", " << tail_names[tx] << ")";
            loops = {"y", "xo", "xi"};
        }
        if (fx == 4 || fx == 8 ? r.chance(60) : false) {
            f.vectorize(xi);
            text << " vectorize(xi)";
            loops.pop_back();  // a vectorized loop is not a compute_at site
        } else if (r.chance(30)) {
            f.unroll(xi);
            text << " unroll(xi)";
        }
    } else if (r.chance(40)) {
        f.reorder(y, x);
        text << " reorder(y, x)";
        loops = {"x", "y"};
    }
    if (r.chance(is_output ? 50 : 20)) {
        f.parallel(Var(loops[0]));
        text << " parallel(" << loops[0] << ")";
    }
    return loops;
}

}  // namespace

std::string random_schedule(const PipelineSpec &p, Built &b, Rng &r) {
    std::ostringstream text;
    int n = (int)p.stages.size();
    std::vector<std::vector<std::string>> loops(n);
    std::vector<int> level(n, 0);  // 0 inline, 1 root, 2 compute_at, 3 store_root + compute_at
    for (int k = 0; k < n; k++) {
        if (k == n - 1) {
            level[k] = 1;
        } else {
            level[k] = r.pick(0, 3);
            if (level[k] == 0 && p.stages[k].kind != 0) level[k] = 1;  // updates cannot be inlined
        }
    }
    for (int k = 0; k < n; k++) {
        if (level[k] == 0) {
            text << "# f" << k << " is inlined\n";
            continue;
        }
        std::ostringstream loop_text;
        loops[k] = shape_loops(b.stages[k], p, k == n - 1, r, loop_text);
        if (!loop_text.str().empty()) text << "f" << k << ":" << loop_text.str() << "\n";
        if (p.stages[k].kind == 1 && r.chance(40)) {
            b.stages[k].update(0).vectorize(b.x, 4);
            text << "f" << k << ".update(0): vectorize(x, 4)\n";
        }
    }
    for (int k = 0; k < n - 1; k++) {
        Func f = b.stages[k];
        if (level[k] == 1) {
            f.compute_root();
            text << "f" << k << ": compute_root()\n";
        } else if (level[k] >= 2) {
            // A random loop of a random later stage that is not inlined.
            std::vector<int> hosts;
            for (int j = k + 1; j < n; j++)
                if (level[j] != 0 && !loops[j].empty()) hosts.push_back(j);
            if (hosts.empty()) {
                f.compute_root();
                text << "f" << k << ": compute_root()\n";
                continue;
            }
            int j = hosts[r.pick(0, (int)hosts.size() - 1)];
            const std::string &v = loops[j][r.pick(0, (int)loops[j].size() - 1)];
            f.compute_at(b.stages[j], Var(v));
            text << "f" << k << ": compute_at(f" << j << ", " << v << ")";
            if (level[k] == 3) {
                f.store_root();
                text << " store_root()";
            }
            text << "\n";
        }
    }
    return text.str();
}

}  // namespace kiln_fuzz
