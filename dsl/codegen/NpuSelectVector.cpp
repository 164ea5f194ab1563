// The value of a tile as vector instructions on UB (pipe V): the Selector's
// select() and its helpers (NpuSelect.h). Each IR operation becomes one
// instruction on R x C f32 tiles, a tile-scalar form when one side is a
// scalar, TCMP + TSEL for a select; reads of Funcs and images become TLOADs
// (or views of UB buffers, widened by TROWEXPAND / TCOLEXPAND when 1-D).
//
//   output(x, y) = log(stage2(x, y)) + a         (stage2 in UB, a a Param)
//   ->
//   TLOG(output.t0 <- stage2)                    V
//   TADDS(output.t0 <- output.t0, a)             V
#include <cmath>
#include <sstream>

#include "NpuSelect.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

// A window of shape `s` in buffer b, widened to the R x C tile by TROWEXPAND / TCOLEXPAND when it is 1-D.
Operand Selector::expand_to(int b, Shape s, int dst, int R, int C, std::vector<NpuItem> &out) {
    auto [r, c] = window_shape(s, R, C);
    Operand src = tile_operand(b, r, c, false);
    if (r == R && c == C) {
        if (dst < 0) return src;
        instr(out, NpuPipe::V, "core.TCOPY(" + tile_code(dst, R, C) + ", " + src.code + ");", {b}, {dst});
        return tile_operand(dst, R, C, false);
    }
    // One expansion per buffer and loop body; of a hoisted load, one before the loop.
    std::string key = std::to_string(b) + "|" + std::to_string((int)s) + "|" + std::to_string(R) + "x" + std::to_string(C);
    bool hoist = dst < 0 && hoisted_buffers.count(b);
    std::map<std::string, int> &cache = hoist ? hoisted_loaded : expanded;
    auto hit = cache.find(key);
    if (dst < 0 && hit != cache.end()) return tile_operand(hit->second, R, C, false);
    int t = dst >= 0 ? dst : hoist ? add_buffer(k.buffers[b].name + ".x", current, R, C, false) : temp(R, C);
    instr(hoist ? hoisted : out, NpuPipe::V,
          std::string("core.") + (s == Shape::Column ? "TROWEXPAND(" : "TCOLEXPAND(") + tile_code(t, R, C) + ", " +
              src.code + ");",
          {b}, {t});
    if (dst >= 0) return tile_operand(t, R, C, false);
    if (hoist) hoisted_buffers.insert(t);
    cache[key] = t;
    return tile_operand(t, R, C, false);
}

// A read of a Func or image inside the tile.
Operand Selector::select_call(const Call *c, int dst, const Nest &n, std::vector<NpuItem> &out) {
    const int R = n.R, C = n.C;
    Window w = window(c->name, c->args, n);
    auto ub = ub_buffer.find(c->name);
    if (ub != ub_buffer.end()) {
        Expr off = ub_offset(c->name, w);
        const int64_t *o = const_int(off);
        const NpuBuffer &buf = k.buffers[ub->second];
        // A window whole rows down a 2-D buffer (a stencil's y offset) is an aligned tile at that row.
        int row0 = o && w.shape == Shape::Full && buf.memory == "UB" && *o > 0 && *o % buf.cols == 0 &&
                           *o / buf.cols + R <= buf.rows
                       ? (int)(*o / buf.cols)
                       : 0;
        // Why a window is not a tile of the buffer, for the message below.
        const char *why = !o ? "an offset that changes from one iteration to the next of a loop inside the one "
                               "where it is computed (a tile instruction's UB operand sits at a fixed address)"
                          : w.clamped()               ? "a clamped window (an edge that repeats is loaded from GM only)"
                          : w.shape != Shape::Full    ? "an offset along a 1-D buffer (a row or column of values is "
                                                        "read whole, from its start)"
                          : *o % buf.cols != 0        ? "a column offset (a window shifted by less than a row is not "
                                                        "32-byte aligned)"
                          : buf.memory != "UB"        ? "a row offset into a buffer outside UB"
                          : *o < 0                    ? "a row offset before the start of the buffer"
                                                      : "a row offset that runs past the end of the buffer";
        user_assert(o && (*o == 0 || row0 > 0) && !w.clamped())
            << "NPU target: Func " << current << " reads " << c->name << " at an offset of " << off
            << " elements from the start of its UB buffer: " << why
            << "; tile instructions read whole aligned tiles at a constant place, so compute " << c->name
            << " over exactly the tile that reads it (same tile sizes, compute_at the same loop)";
        if (buf.memory == "L0C") return from_l0c(ub->second, dst, R, C, out);
        if (row0) {
            Operand src = tile_operand(ub->second, R, C, false);
            src.code = tile_code(ub->second, R, C, row0);
            if (dst < 0) return src;
            instr(out, NpuPipe::V, "core.TCOPY(" + tile_code(dst, R, C) + ", " + src.code + ");", {ub->second}, {dst});
            return tile_operand(dst, R, C, false);
        }
        return expand_to(ub->second, w.shape, dst, R, C, out);
    }
    bool gm = c->call_type == Call::Image || gm_funcs.count(c->name);
    user_assert(!is_output(c->name))
        << "NPU target: Func " << current << " reads " << c->name << ", the pipeline's output, while computing it; "
        << "the NPU code generator reads inputs and compute_root Funcs from GM but never reads an output back, so "
        << "compute the value in a Func of its own (compute_at in UB) and give the output one definition that "
           "reads it";
    // Not reachable from a schedule: every Func other than the outputs is realized before its readers run,
    // into UB or L0C (ub_buffer) or GM (gm_funcs); realize() rejects the other memories.
    internal_assert(gm) << "NPU target: Func " << current << " reads Func " << c->name
                        << ", which is neither in UB nor in GM here";
    auto [r, cc] = window_shape(w.shape, R, C);
    // A window loaded earlier in this loop body is loaded once (inputs are never written, GM Funcs not
    // in the loop nests that read them).
    std::ostringstream key;
    key << c->name << "|" << (int)w.shape << "|" << expand(w.x0) << "|" << expand(w.y0) << "|" << r << "x" << cc;
    for (int d = 0; d < 2; d++)
        if (w.lo[d].defined()) key << "|" << expand(w.lo[d]) << ".." << expand(w.hi[d]);
    int t;
    auto hit = loaded.find(key.str());
    bool invariant = c->call_type == Call::Image && !loop_vars.empty();
    for (const std::string &v : loop_vars)
        invariant &= !expr_uses_var(expand(w.x0), v) && !expr_uses_var(expand(w.y0), v);
    auto hhit = hoisted_loaded.find(key.str());
    if (invariant && hhit != hoisted_loaded.end()) {
        t = hhit->second;
    } else if (invariant) {  // loaded once, before the outermost loop
        t = add_buffer(c->name + ".in", current, r, cc, false);
        Window we = w;
        we.x0 = expand(w.x0), we.y0 = expand(w.y0);
        instr(hoisted, NpuPipe::MTE2, "core.TLOAD(" + tile_code(t, r, cc) + ", " + gm_code(c->name, we) + ");", {}, {t});
        hoisted_buffers.insert(t);
        hoisted_loaded[key.str()] = t;
    } else if (hit != loaded.end()) {
        t = hit->second;
    } else {
        bool full = r == R && cc == C;
        t = full && dst >= 0 ? dst : temp(r, cc);
        instr(out, NpuPipe::MTE2, "core.TLOAD(" + tile_code(t, r, cc) + ", " + gm_code(c->name, w) + ");", {}, {t});
        loaded[key.str()] = t;
        if (full && t == dst) return tile_operand(t, R, C, false);
    }
    return expand_to(t, w.shape, dst, R, C, out);
}

// Selects e into buffer `dst` (or a temporary when dst < 0) over the R x C tile; returns the operand.
Operand Selector::select(const Expr &e, int dst, const Nest &n, std::vector<NpuItem> &out) {
    const int R = n.R, C = n.C;
    Expr full = expand(substitute(n.lets, e));
    bool varies = false;
    for (const For *l : {n.fx, n.fy}) varies |= l && expr_uses_var(full, l->name);
    struct FindCall : IRVisitor {
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *c) override {
            found |= c->call_type != Call::PureExtern;
            IRVisitor::visit(c);
        }
    } fc;
    fc.include(e);
    if (!varies && !fc.found) {
        Operand s{-1, scalar(full)};
        if (dst < 0) return s;
        instr(out, NpuPipe::V, "core.TDUP(" + tile_code(dst, R, C) + ", " + s.code + ");", {}, {dst});
        return tile_operand(dst, R, C, false);
    }
    user_assert(e.type() == Float(32)) << "NPU target: Func " << current << ": " << e << " has type " << e.type().to_string()
                                       << "; the vector instructions Kiln selects work on float32";
    if (const Call *c = e.as<Call>()) {
        if (c->call_type == Call::Func || c->call_type == Call::Image) return select_call(c, dst, n, out);
        static const std::map<std::string, std::string> unary = {
            {"exp", "TEXP"}, {"log", "TLOG"}, {"sqrt", "TSQRT"}, {"tanh", "TTANH"}, {"abs", "TABS"}};
        auto u = unary.find(c->name);
        user_assert(u != unary.end() && c->args.size() == 1)
            << "NPU target: Func " << current << " calls " << c->name
            << ", which has no NPU vector instruction; the vector unit has exp, log, sqrt, tanh, abs (and "
               "+, -, *, /, min, max); compute it on the host or rewrite it";
        Operand a = select(c->args[0], -1, n, out);
        int t = result(dst, R, C, {&a});
        instr(out, NpuPipe::V, "core." + u->second + "(" + tile_code(t, R, C) + ", " + a.code + ");", {a.buffer}, {t});
        release(a, t);
        return tile_operand(t, R, C, dst < 0);
    }
    if (const Select *sel = e.as<Select>()) return select_select(sel, dst, n, out);
    const char *tt = nullptr, *ts = nullptr;
    bool commutes = false;
    Expr x, y;
    if (const Add *o = e.as<Add>()) { tt = "TADD"; ts = "TADDS"; commutes = true; x = o->a; y = o->b; }
    else if (const Sub *o = e.as<Sub>()) { tt = "TSUB"; ts = "TSUBS"; x = o->a; y = o->b; }
    else if (const Mul *o = e.as<Mul>()) { tt = "TMUL"; ts = "TMULS"; commutes = true; x = o->a; y = o->b; }
    else if (const Div *o = e.as<Div>()) { tt = "TDIV"; ts = "TDIVS"; x = o->a; y = o->b; }
    else if (const Max *o = e.as<Max>()) { tt = "TMAX"; ts = "TMAXS"; commutes = true; x = o->a; y = o->b; }
    else if (const Min *o = e.as<Min>()) { tt = "TMIN"; ts = "TMINS"; commutes = true; x = o->a; y = o->b; }
    user_assert(tt) << "NPU target: Func " << current << ": " << e
                    << " has no NPU vector instruction (the vector unit has +, -, *, /, min, max, exp, log, "
                       "sqrt, tanh, abs on float32 tiles)";
    Operand a = select(x, -1, n, out);
    Operand b = equal(x, y) ? Operand{a.buffer, a.code, false} : select(y, -1, n, out);  // d * d: d once
    int t = result(dst, R, C, {&a, &b});
    std::string d = tile_code(t, R, C);
    if (a.buffer >= 0 && b.buffer >= 0) {
        instr(out, NpuPipe::V, "core." + std::string(tt) + "(" + d + ", " + a.code + ", " + b.code + ");",
              {a.buffer, b.buffer}, {t});
    } else if (a.buffer >= 0) {
        instr(out, NpuPipe::V, "core." + std::string(ts) + "(" + d + ", " + a.code + ", " + b.code + ");", {a.buffer}, {t});
    } else if (commutes) {
        instr(out, NpuPipe::V, "core." + std::string(ts) + "(" + d + ", " + b.code + ", " + a.code + ");", {b.buffer}, {t});
    } else if (e.as<Sub>()) {  // s - t == (-t) + s exactly
        instr(out, NpuPipe::V, "core.TNEG(" + d + ", " + b.code + ");", {b.buffer}, {t});
        instr(out, NpuPipe::V, "core.TADDS(" + d + ", " + d + ", " + a.code + ");", {t}, {t});
    } else if (is_const(x, 1) || (x.as<FloatImm>() && x.as<FloatImm>()->value == 1.0)) {  // 1 / t
        instr(out, NpuPipe::V, "core.TRECIP(" + d + ", " + b.code + ");", {b.buffer}, {t});
    } else {  // s / t: the scalar spread over a tile, then a tile division
        int s = temp(R, C);
        instr(out, NpuPipe::V, "core.TDUP(" + tile_code(s, R, C) + ", " + a.code + ");", {}, {s});
        instr(out, NpuPipe::V, "core.TDIV(" + d + ", " + tile_code(s, R, C) + ", " + b.code + ");", {s, b.buffer}, {t});
        release(Operand{s, "", true}, t);
    }
    release(a, t);
    release(b, t);
    return tile_operand(t, R, C, dst < 0);
}

// A scalar operand spread over an R x C temporary (TDUP); tiles unchanged.
Operand Selector::as_tile(Operand o, const Nest &n, std::vector<NpuItem> &out) {
    if (o.buffer >= 0) return o;
    int t = temp(n.R, n.C);
    instr(out, NpuPipe::V, "core.TDUP(" + tile_code(t, n.R, n.C) + ", " + o.code + ");", {}, {t});
    return tile_operand(t, n.R, n.C, true);
}

// select(a cmp b, t, f): TCMP into a u8 mask, then TSEL.
Operand Selector::select_select(const Select *sel, int dst, const Nest &n, std::vector<NpuItem> &out) {
    const Expr &c = sel->condition;
    Expr ca, cb;
    const char *cmp = nullptr;
    if (const LT *o = c.as<LT>()) ca = o->a, cb = o->b, cmp = "LT";
    else if (const LE *o = c.as<LE>()) ca = o->a, cb = o->b, cmp = "LE";
    else if (const GT *o = c.as<GT>()) ca = o->a, cb = o->b, cmp = "GT";
    else if (const GE *o = c.as<GE>()) ca = o->a, cb = o->b, cmp = "GE";
    else if (const EQ *o = c.as<EQ>()) ca = o->a, cb = o->b, cmp = "EQ";
    else if (const NE *o = c.as<NE>()) ca = o->a, cb = o->b, cmp = "NE";
    user_assert(cmp && ca.type() == Float(32))
        << "NPU target: Func " << current << ": the condition " << c << " of a select has no NPU instruction; "
        << "TCMP compares two float32 tiles (<, <=, >, >=, ==, !=), so write the condition as one comparison of "
           "float32 values (nest selects instead of using && or ||)";
    Operand a = as_tile(select(ca, -1, n, out), n, out);
    Operand b = equal(ca, cb) ? Operand{a.buffer, a.code, false} : as_tile(select(cb, -1, n, out), n, out);
    int m = add_buffer(current + ".m" + std::to_string(temps++), current, n.R, n.C, current_double, "UB", "U8");
    instr(out, NpuPipe::V, "core.TCMP(" + tile_code(m, n.R, n.C) + ", " + a.code + ", " + b.code + ", Cmp::" + cmp + ");",
          {a.buffer, b.buffer}, {m});
    release(a, -1);
    release(b, -1);
    Operand t = as_tile(select(sel->true_value, -1, n, out), n, out);
    Operand f = equal(sel->true_value, sel->false_value) ? Operand{t.buffer, t.code, false}
                                                         : as_tile(select(sel->false_value, -1, n, out), n, out);
    int d = result(dst, n.R, n.C, {&t, &f});
    instr(out, NpuPipe::V,
          "core.TSEL(" + tile_code(d, n.R, n.C) + ", " + tile_code(m, n.R, n.C) + ", " + t.code + ", " + f.code + ");",
          {m, t.buffer, f.buffer}, {d});
    release(t, d);
    release(f, d);
    return tile_operand(d, n.R, n.C, dst < 0);
}

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
