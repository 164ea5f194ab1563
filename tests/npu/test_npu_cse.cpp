// Common subexpressions in the NPU's instruction selection: a tile-valued
// subexpression that a tile's value computes more than once is computed
// once into a UB tile kept until the tile is done (NpuSelectVector.cpp),
// unless the kept tiles overflow UB, when the kernel is selected again
// recomputing them (npu_select_and_place, NpuSelect.cpp).
#include <catch2/catch.hpp>

#include <regex>

#include "codegen/NpuKernel.h"
#include "lower/Lower.h"
#include "lower/RealizationOrder.h"
#include "npu_pipelines.h"

using namespace npu_pipelines;

namespace {

// exp(x) / (exp(x) + 1), the derivative of softplus (elementwise_chain_grad),
// in 128 x 32 tiles.
struct SoftplusDerivative {
    ImageParam input{Float(32), 2, "input"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func output{"output"};
    explicit SoftplusDerivative(bool double_buffer = true) {
        Expr e = exp(input(x, y));
        output(x, y) = e / (e + 1.0f);
        output.tile(x, y, xo, yo, xi, yi, 128, 32);
        if (double_buffer) output.double_buffer();
    }
};

// (exp(x) * 2) * (x * x * (x + 1) + exp(x) + x): the first exp(x) is
// consumed early, and x is live to the end anyway, so keeping exp(x) for
// its second read keeps one more tile alive while x * x * (x + 1) is
// computed than recomputing it from x does.
struct LongLived {
    ImageParam input{Float(32), 2, "input"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func output{"output"};
    LongLived() {
        Expr v = input(x, y), e = exp(v);
        output(x, y) = (e * 2.0f) * (v * v * (v + 1.0f) + e + v);
        output.tile(x, y, xo, yo, xi, yi, 128, 32);
    }
};

// The loop nest of `f` as the NPU's passes get it.
Stmt npu_nest(const Func &f) {
    internal::LowerOptions nest_only;
    nest_only.stop = internal::LowerStop::LoopNest;
    return internal::lower({f.contents()}, "cse", {}, Target("npu"), nest_only).body;
}

internal::NpuKernel select(const Func &f, bool share) {
    return internal::npu_select_kernel("cse", npu_nest(f), internal::find_environment({f.contents()}), {f.name()},
                                       Target("npu"), share);
}

// The tile instructions of `items`, in program order (each loop body once).
void instructions(const std::vector<internal::NpuItem> &items, std::vector<const internal::NpuItem *> &out) {
    for (const internal::NpuItem &i : items) {
        if (i.kind == internal::NpuItem::Instr) out.push_back(&i);
        instructions(i.body, out);
    }
}

int count(const internal::NpuKernel &k, npu::Op op) {
    std::vector<const internal::NpuItem *> is;
    instructions(k.body, is);
    return (int)std::count_if(is.begin(), is.end(), [&](const internal::NpuItem *i) { return i->op == op; });
}

}  // namespace

TEST_CASE("NPU selection computes a repeated subexpression of a tile once and keeps its tile until its last read",
          "[npu][select][cse]") {
    SoftplusDerivative s;
    const internal::NpuKernel shared = select(s.output, true), recomputed = select(s.output, false);
    CHECK(count(shared, npu::Op::TEXP) == 1);
    CHECK(count(recomputed, npu::Op::TEXP) == 2);
    CHECK(shared.shared_subexpressions == 1);
    CHECK(recomputed.shared_subexpressions == 0);
    // Otherwise the same instructions: TADDS, TDIV, the load and the store.
    for (npu::Op op : {npu::Op::TADDS, npu::Op::TDIV, npu::Op::TLOAD, npu::Op::TSTORE}) {
        INFO(npu::op_name(op));
        CHECK(count(shared, op) == 1);
        CHECK(count(recomputed, op) == 1);
    }
    // No instruction writes the TEXP's tile between it and its last read.
    std::vector<const internal::NpuItem *> is;
    instructions(shared.body, is);
    size_t at = 0;
    while (at < is.size() && is[at]->op != npu::Op::TEXP) at++;
    REQUIRE(at < is.size());
    const int e = is[at]->writes.at(0);
    size_t last = at;
    for (size_t i = at + 1; i < is.size(); i++)
        if (std::count(is[i]->reads.begin(), is[i]->reads.end(), e)) last = i;
    CHECK(last > at + 1);  // read by the TADDS and by the TDIV after it
    for (size_t i = at + 1; i <= last; i++) {
        INFO(npu::op_name(is[i]->op));
        CHECK(std::count(is[i]->writes.begin(), is[i]->writes.end(), e) == 0);
    }
}

TEST_CASE("NPU kernels with shared subexpressions equal the host's bit for bit, one TEXP per tile",
          "[npu][codegen][cse]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    SoftplusDerivative s;
    s.input.set(in);
    s.output.realize(host);
    json r = run_npu(Pipeline(s.output), in, npu, "softplus_derivative");
    check_same(host, npu);
    CHECK(r["race_count"] == 0);
    const int tiles = (W / 128) * (H / 32);
    CHECK(r["instructions_by_op"]["TEXP"] == tiles);  // two per tile before
    CHECK(r["instructions_by_op"]["TADDS"] == tiles);
    CHECK(r["instructions_by_op"]["TDIV"] == tiles);
}

TEST_CASE("NPU selection recomputes repeated subexpressions when their kept tiles would overflow UB",
          "[npu][select][cse][reuse]") {
    LongLived l;
    // The least UB each kernel needs: placed on a machine where nothing fits,
    // placement tries its every rule and reports the peak of the last, the
    // one that shares most (NpuPlaceBuffers.cpp).
    auto least = [&](bool share) {
        internal::NpuKernel k = internal::npu_place_buffers(select(l.output, share), false);
        CHECK(!k.overflow.empty());
        return k.placement.at("UB").peak;
    };
    const std::string ub = "\"UB\":  {\"bytes\": ";
    uint64_t sharing = 0, recomputing = 0;
    {
        EditedMachine tiny(ub + "196608", ub + "32", "npu_cse_machine.json");
        sharing = least(true);
        recomputing = least(false);
    }
    INFO("UB needed sharing " << sharing << ", recomputing " << recomputing);
    REQUIRE(sharing > recomputing);
    const uint64_t between = (sharing + recomputing) / 2 / 32 * 32;
    const std::string cap = std::to_string(between);
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    l.input.set(in);
    l.output.realize(host);
    {
        // UB between the two peaks: the kernel recomputes exp(x) and says so.
        EditedMachine m(ub + "196608", ub + cap, "npu_cse_machine.json");
        const std::string src = Pipeline(l.output).compile_to_cpp_source("long_lived", Target("npu"));
        CHECK_THAT(src, Catch::Contains("// UB: repeated subexpressions recomputed: computed once, their tiles kept "
                                        "until their last readers, they needed " +
                                        std::to_string(sharing) + " bytes at once, over the machine's " + cap));
        std::smatch placed;
        REQUIRE(std::regex_search(src, placed, std::regex("// UB: ([0-9]+) bytes at once")));
        CHECK(std::stoull(placed[1]) <= between);
        json r = run_npu(Pipeline(l.output), in, npu, "long_lived");
        check_same(host, npu);
        CHECK(r["race_count"] == 0);
        CHECK(r["instructions_by_op"]["TEXP"] == 2 * (W / 128) * (H / 32));
    }
    {
        // Room for the shared tiles: one TEXP per tile, the same output.
        json r = run_npu(Pipeline(l.output), in, npu, "long_lived_shared");
        check_same(host, npu);
        CHECK(r["instructions_by_op"]["TEXP"] == (W / 128) * (H / 32));
    }
    {
        // Room for neither: the overflow error of the kernel that recomputes.
        EditedMachine m(ub + "196608", ub + std::to_string(recomputing - 32), "npu_cse_machine.json");
        std::string error;
        try {
            Pipeline(l.output).compile_to_cpp_source("long_lived", Target("npu"));
        } catch (const CompileError &e) {
            error = e.what();
        }
        CHECK_THAT(error, Catch::Contains("the buffers of this schedule need " + std::to_string(recomputing) +
                                          " bytes of UB at once"));
        CHECK_THAT(error, Catch::Contains("(over by 32)"));
    }
}
