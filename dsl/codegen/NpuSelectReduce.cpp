// Row and column reductions of a tile (pipe V): a 1-D Func updated over a
// 2-D nest, f(y) = f(y) + e(r, y) or max(f(y), e(r, y)), becomes one TROWSUM
// or TROWMAX of e's tile into f's column (TCOLSUM / TCOLMAX when f is
// indexed by x). The host adds a row left to right from f's pure value:
// TROWSUM does so from 0, TROWSUM_ACC from f's value, so a sum from
// another value, and a row split into chunks (split(r.x, ro, ri, C) with
// ro the loop directly around the tile: a row longer than a tile), adds
// in the host's order and the result is bitwise the host's. A max per
// chunk is TROWMAX into a temporary, then TMAX into f. A Tuple state
// whose update is a running maximum and a sum rescaled to it (the online
// softmax) is one short sequence per tile or chunk, below; it rescales per
// chunk where the host rescales per element, so it is not bitwise the host's.
//
//   for (y, 0, 2) for (r, 0, 1024) row_sum(y) = row_sum(y) + exps(r, y)
//   ->
//   TROWSUM(row_sum <- exps)                     V
//
//   for (ro, 0, 8) for (y, 0, 8) for (ri, 0, 2048) sum(y) = sum(y) + input(ro*2048 + ri, y)
//   ->
//   for (ro, 0, 8) { TLOAD(sum.t0 <- input window at column ro*2048)   MTE2
//                    TROWSUM_ACC(sum <- sum.t0) }                      V
//
//   for (ro, 0, 4) for (y, 0, 8) for (ri, 0, 256)
//     stats(y) = {max(m, v), l * exp(m - max(m, v)) + exp(v - max(m, v))}
//   ->
//   for (ro, 0, 4) { TLOAD(t0 <- input chunk)                          MTE2
//                    TROWMAX, TMAX, TSUB, TEXP, TMUL, TCOPY (columns)
//                    TROWEXPANDSUB, TEXP, TROWSUM_ACC (the chunk)    } V
#include <cmath>
#include <sstream>

#include "NpuSelect.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

// One reduction instruction (TROWSUM, TROWMAX, the column forms, TMATMUL)
// covers the RDom's one variable of extent above 1. An RDom
// with two such variables would put the instruction in a loop over the
// other one, where it overwrites the accumulator on each iteration (the
// host accumulates across it): refuse it. `loops` names the instruction's.
void Selector::check_one_rvar(const std::string &f, const std::string &loops, const char *op) {
    const FunctionContents &fc = func(f);
    if (fc.updates.empty() || !fc.updates[0].rdom) return;
    const ReductionDomainContents &rd = *fc.updates[0].rdom;
    int wide = 0;
    std::ostringstream vars;
    for (const auto &rv : rd.vars) {
        Expr extent = simplify(rv.extent);
        const int64_t *e = const_int(extent);
        wide += !(e && *e == 1);
        vars << (vars.tellp() ? ", " : "") << rv.name << " of extent " << rv.extent;
    }
    user_assert(wide <= 1) << "NPU target: Func " << f << " reduces over the " << rd.vars.size() << "-D RDom "
                           << rd.name << " (" << vars.str() << ") with " << op << ", which covers only its loops "
                           << loops << " in one instruction and does not accumulate across the RDom's other variables, so "
                              "the NPU would not compute the host's result; reduce over a 1-D RDom (e.g. one Func "
                              "per value of the other variable, combined by a pure Func), or compute "
                           << f << " on the host";
}

// A loop over the outer part of a split RVar around the instruction would
// restart it (TMATMUL from 0) or overwrite its partial result on each
// iteration, with no flags between those iterations' loads and it.
void Selector::check_whole_rvar(const std::string &f, const For *loop, const Expr &extent, const std::string &what,
                                const char *op, const char *fix) {
    const FunctionContents &fc = func(f);
    if (fc.updates.empty() || !fc.updates[0].rdom) return;
    for (const auto &rv : fc.updates[0].rdom->vars) {
        Expr whole = simplify(rv.extent);
        const int64_t *one = const_int(whole);
        if (one && *one == 1) continue;
        user_assert(is_zero(simplify(expand(extent) - expand(whole))))
            << "NPU target: Func " << f << ": the " << what << "'s reduction loop " << loop->name << " has extent "
            << simplify(extent) << " but its RDom variable " << rv.name << " has extent " << rv.extent
            << " (the reduction is split); one " << op << " covers the whole reduction "
            << (std::string(op) == "TMATMUL" ? "from 0 " : "") << "and does not accumulate across a loop around it, "
            << "so the NPU would not compute the host's result; do not split the " << what << "'s RVar (" << fix
            << ")";
    }
}

void Selector::select_reduction(const Provide *p, const Nest &n, std::vector<NpuItem> &out) {
    const std::string &f = p->name;
    if (p->values.size() > 1) {  // a Tuple state: the online form's running maximum and rescaled sum
        check_one_rvar(f, n.fy->name + " and " + n.fx->name, "TROWMAX and TROWSUM_ACC");
        const bool rows = shape_of(f, 1) == Shape::Column;
        const For *chunks = rows ? split_rvar_loop(f, n.fx, n.C, "online reduction's chunk") : nullptr;
        if (rows && !chunks)
            check_whole_rvar(f, n.fx, substitute(n.lets, n.fx->extent), "online reduction", "TROWMAX",
                             "tile only the loops of the Funcs that read it, or split it with the chunk loop directly "
                             "around the reduction's tile: split(r.x, ro, ri, 2048) reorder(ri, y, ro)");
        select_online_reduction(p, n, rows, out);
        return;
    }
    Expr value, x, y;
    {
        const char *op = p->values[0].as<Max>() ? "TROWMAX / TCOLMAX" : "TROWSUM / TCOLSUM";
        check_one_rvar(f, n.fy->name + " and " + n.fx->name, op);
    }
    auto is_self = [&](const Expr &e) {
        const Call *c = e.as<Call>();
        if (!c || c->name != f || c->args.size() != p->args.size()) return false;
        for (size_t d = 0; d < c->args.size(); d++)  // a planar Func's plane too
            if (!equal(c->args[d], p->args[d])) return false;
        return true;
    };
    const NpuOpRule *rule = npu_op_rule(p->values[0]);
    if (rule && npu::op_kind(rule->row) == npu::Kind::Reduce && binary_operands(p->values[0], x, y))
        value = is_self(x) ? y : is_self(y) ? x : Expr();
    const bool sum = rule && rule->tile == npu::Op::TADD;
    user_assert(value.defined())
        << "NPU target: Func " << f << " is 1-D and computed over a 2-D loop nest (" << n.fy->name << ", "
        << n.fx->name << "), which the NPU maps onto a row reduction; its update must be " << f << "(y) = " << f
        << "(y) + e or max(" << f << "(y), e) (TROWSUM, TROWMAX), not " << p->values[0];
    auto ub = ub_buffer.find(f);
    user_assert(ub != ub_buffer.end()) << "NPU target: Func " << f
                                       << " is a reduction stored in GM; the NPU keeps reductions in UB, so "
                                          "compute_at it inside the loop of its consumer's tiles";
    bool rows = shape_of(f, 1) == Shape::Column;  // one result per row: reduce along x
    const npu::Op op = rows ? rule->row : rule->col;
    const For *rl = rows ? n.fx : n.fy;
    // A split RVar (a row longer than a tile): the loop directly around
    // the tile runs over its chunks in increasing order, each one
    // instruction that continues from the chunks before it.
    const For *chunks = split_rvar_loop(f, rl, rows ? n.C : n.R, rows ? "row reduction's chunk" : "column reduction's chunk");
    if (!chunks)
        check_whole_rvar(f, rl, substitute(n.lets, rl->extent), rows ? "row reduction" : "column reduction",
                         npu::op_name(op),
                         "tile only the loops of the Funcs that read it, or split it with the chunk loop directly "
                         "around the reduction's tile: split(r.x, ro, ri, 2048) reorder(ri, y, ro)");
    Window w = window(f, p->args, n);
    Expr offset = ub_offset(f, w);
    const int64_t *o = const_int(offset);
    user_assert(o && *o == 0) << "NPU target: Func " << f << " is reduced into its UB buffer at an offset of "
                              << offset << " elements (its update's tile covers " << n.R << " x " << n.C
                              << " of it, e.g. after a split of the update's loops); a reduction writes its whole "
                              << "buffer in one instruction, so do not split the update's pure loops and compute_at "
                              << f << " at the loop of the tiles that read it, over the same rows";
    const FunctionContents &fc = func(f);
    Expr init = fc.init.values.empty() ? Expr() : fc.init.values[0];
    bool identity = init.defined() && (sum ? is_zero(init)
                                           : init.as<FloatImm>() && std::isinf(init.as<FloatImm>()->value) &&
                                                 init.as<FloatImm>()->value < 0);
    count_repeats(value, n);
    Operand v = select(value, -1, n, out);
    auto [r, c] = window_shape(w.shape, n.R, n.C);
    Operand d = tile_operand(ub->second, r, c, false);
    if (identity && !chunks) {  // the instruction computes the Func's final value
        instr(out, op, {d, v});
        release(v, -1);
        return;
    }
    // The host adds to the pure definition's value (or the chunks before)
    // left to right: so does the accumulating form, from f's value.
    if (sum) {
        instr(out, rows ? npu::Op::TROWSUM_ACC : npu::Op::TCOLSUM_ACC, {d, v});
        release(v, -1);
        return;
    }
    int t = temp(r, c);
    instr(out, op, {tile_operand(t, r, c, false), v});
    instr(out, rule->tile, {d, d, tile_operand(t, r, c, false)});
}

// The online form's update, recognized by its algebra:
//   f(y) = {max(f(y)[0], v), f(y)[1] * exp(f(y)[0] - M) + exp(v - M)}
// with M the first value (max(f(y)[0], v)), v any tile expression. Per
// tile (a chunk of the row when the RVar is split), with m = f[0], l = f[1]:
//   TROWMAX(t <- v); TMAX(t <- t, m)          t = m', the new maximum
//   TSUB(s <- m, t); TEXP(s <- s)             s = exp(m - m')
//   TMUL(l <- l, s); TCOPY(m <- t)            l rescaled once per chunk
//   TROWEXPANDSUB(e <- v, m); TEXP(e <- e); TROWSUM_ACC(l <- e)
// v is loaded once and read twice. The host rescales l per element; here
// it is rescaled per chunk, so l rounds differently (m is the same).
void Selector::select_online_reduction(const Provide *p, const Nest &n, bool rows, std::vector<NpuItem> &out) {
    const std::string &f = p->name;
    auto self = [&](const Expr &e, int i) {
        const Call *c = e.as<Call>();
        return c && c->name == f && c->value_index == i && c->args.size() == 1 && equal(c->args[0], p->args[0]);
    };
    Expr v;
    const Expr &m2 = p->values[0];
    if (const Max *mx = m2.as<Max>()) v = self(mx->a, 0) ? mx->b : self(mx->b, 0) ? mx->a : Expr();
    auto exp_minus_max = [&](const Expr &e) {  // a, from exp(a - m2)
        const Call *c = e.as<Call>();
        const Sub *d = c && c->name == "exp" && c->args.size() == 1 ? c->args[0].as<Sub>() : nullptr;
        return d && equal(d->b, m2) ? d->a : Expr();
    };
    auto is_exp_of = [&](const Expr &e, const Expr &a) {
        Expr x = exp_minus_max(e);
        return x.defined() && equal(x, a);
    };
    auto is_rescaled = [&](const Expr &e) {  // f[1] * exp(f[0] - m2), either order
        const Mul *mu = e.as<Mul>();
        return mu && ((self(mu->a, 1) && self(exp_minus_max(mu->b), 0)) ||
                      (self(mu->b, 1) && self(exp_minus_max(mu->a), 0)));
    };
    const Add *ad = p->values.size() == 2 && v.defined() ? p->values[1].as<Add>() : nullptr;
    const bool online = rows && ad && ((is_rescaled(ad->a) && is_exp_of(ad->b, v)) || (is_rescaled(ad->b) && is_exp_of(ad->a, v)));
    user_assert(online)
        << "NPU target: Func " << f << " returns a Tuple of " << p->values.size() << " values (computed at "
        << func(f).schedule.compute_level.to_string() << ") whose update the NPU has no instruction sequence for: a "
        << "Tuple update over a row tile must be the online softmax's running maximum and rescaled sum, " << f
        << "(y) = {max(m, v), l * exp(m - max(m, v)) + exp(v - max(m, v))} with m = " << f << "(y)[0] and l = " << f
        << "(y)[1], reduced along the row; it is {" << p->values[0] << ", "
        << (p->values.size() > 1 ? p->values[1] : Expr()) << "}. Give each value its own Func if no value's update "
        << "reads another's; otherwise write the state as reductions the NPU runs one after another (a max, then a "
           "sum of exp(v - max): the two-pass form, which reads the input once more, split into chunks for rows "
           "longer than UB), or compute "
        << f << " on the host";
    const int mb = ub_buffer.at(value_key(f, 0)), lb = ub_buffer.at(value_key(f, 1));
    Window w = window(f, p->args, n);
    Expr offset = ub_offset(f, w);
    const int64_t *o = const_int(offset);
    user_assert(o && *o == 0) << "NPU target: Func " << f << " is reduced into its UB buffers at an offset of "
                              << offset << " elements; a reduction writes its whole buffer in one instruction, so "
                              << "compute_at " << f << " at the loop of the tiles that read it, over the same rows";
    const int R = n.R, C = n.C;
    count_repeats(v, n);
    Operand x = select(v, -1, n, out);
    Operand m = tile_operand(mb, R, 1, false), l = tile_operand(lb, R, 1, false);
    const int t = temp(R, 1), s = temp(R, 1), e = temp(R, C);
    Operand T = tile_operand(t, R, 1, false), S = tile_operand(s, R, 1, false), E = tile_operand(e, R, C, false);
    instr(out, npu::Op::TROWMAX, {T, again(x)});
    instr(out, npu::Op::TMAX, {T, T, m});
    instr(out, npu::Op::TSUB, {S, m, T});
    instr(out, npu::Op::TEXP, {S, S});
    instr(out, npu::Op::TMUL, {l, l, S});
    instr(out, npu::Op::TCOPY, {m, T});
    instr(out, npu::Op::TROWEXPANDSUB, {E, again(x), m});
    release(x, -1);
    instr(out, npu::Op::TEXP, {E, E});
    instr(out, npu::Op::TROWSUM_ACC, {l, E});
}

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
