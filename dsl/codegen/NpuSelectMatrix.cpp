// Matrix updates onto the matrix unit (pipe M): C(x, y) = C(x, y) +
// A(k, y) * B(x, k) over three loops of constant extents, C in L0C, is one
// TMATMUL (TMATMUL_ACC for a further update). A's M x K window and B's
// K x N window are staged GM -> L1 (TLOAD, MTE2) -> L0A / L0B (TMOV, MTE1;
// TMOV_T when B is read transposed), or UB -> L1 (TMOV, MTE3) when the
// vector unit computed the operand; vector tiles read C through the fix
// pipe (TMOV L0C -> UB).
//
// A split K (split(k, ko, ki, 64) with ko directly around the update's
// other loops) runs one TMATMUL_ACC per k-slice, a TMATMUL (from 0) for
// the first: the slices add in increasing k, the host's order. An operand
// staged in L1 by the schedule (B.in(matmul) computed at an outer loop,
// store_in(L1): a panel of all K rows) is not loaded per tile: each slice
// moves its rows L1 -> L0B (TMOV) from a row that moves with ko. The panel
// is loaded in the same slices, each by the first tile that reads it (on
// the first trip of the loops between the panel's loop and the slice
// loop), in place of one TLOAD of the whole panel before the tiles: the
// first product waits for one slice, not the panel, and the next panel's
// slice s loads once the last tile has moved slice s (NpuSync.cpp's ring
// flags order the slices one by one). When L1 has room beside it, the
// panel is an operand ring (NpuRing, make_rings): more slots than slices,
// the next panel's slices loaded into the free ones during this panel's
// row tiles, in row parts spread over its last slice iterations, so that
// the change of panel waits for nothing.
//
//   for (ko, 0, 8) for (y, 0, 64) for (x, 0, 256) for (ki, 0, 64) matmul(x, y) += A(ko*64 + ki, y) * B_in(x, ko*64 + ki)
//   ->
//   TLOAD(matmul.a1 <- A window at column ko*64)  MTE2    TMOV(matmul.a0 <- matmul.a1)  MTE1
//   if (yo == 0) TLOAD(B_in rows ko*64 .. <- B window rows ko*64 ..)   MTE2
//   TMOV(matmul.b0 <- B_in rows ko*64 ..)          MTE1
//   if (ko == 0) TMATMUL(matmul <- matmul.a0, matmul.b0) else TMATMUL_ACC(...)   M
//   with a ring of 15 slots (K = 512, 8 slices; 4 parts a slice):
//   if (xo == 0 && yo == 0) TLOAD(B_in slot (xo*8 + ko) % 15 <- B window rows ko*64 ..)
//   TMOV(matmul.b0 <- B_in slot (xo*8 + ko) % 15)
//   if (xo + 1 < panels && 0 <= j && j < 32) TLOAD(B_in slot ((xo+1)*8 + j/4) % 15, part j%4 <- B window at
//       xo + 1, rows (j/4)*64 + (j%4)*16 ..)     j = yo*8 + ko - (tiles - 4)*8
//
//   for (y, 0, 32) for (x, 0, 128) for (k, 0, 128) matmul(x, y) += A(k, y) * B(x, k)
//   ->
//   TLOAD(matmul.a1 <- A window)  MTE2    TMOV(matmul.a0 <- matmul.a1)  MTE1
//   TMATMUL(matmul <- matmul.a0, matmul.b0)                            M
#include <cmath>
#include <sstream>

#include "NpuSelect.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

const Call *matrix_read_of(const Expr &e) {
    // Any widening of an int8 read: cast<int32_t> is the matrix unit's; another type is refused with the
    // accumulator's type (select_matmul).
    if (const Cast *cv = e.as<Cast>())
        if (cv->value.type() == Int(8)) {
            const Call *c = cv->value.as<Call>();
            return c && (c->call_type == Call::Func || c->call_type == Call::Image) ? c : nullptr;
        }
    return read_of(e);
}

Operand Selector::from_l0c(int b, int dst, int R, int C, std::vector<NpuItem> &out) {
    user_assert(k.buffers[b].dtype == npu::DType::F32)
        << "NPU target: Func " << current << " reads the int32 accumulator " << k.buffers[b].name
        << " in a form the fix pipe cannot apply on the way out of L0C, and the vector unit computes float "
        << "tiles only; write " << current << " as an epilogue the fix pipe applies as it stores the tile: "
        << "saturating_cast<int8_t>(round(cast<float>(max(" << k.buffers[b].name << "(x, y) + bias(x), 0)) * "
        << "scale)) (each step optional; or a cast to float16 / bfloat16 / float32), stored in GM (an output or "
        << "compute_root Func) and computed over " << k.buffers[b].name << "'s tile";
    std::string key = std::to_string(b) + "|fix";
    auto hit = expanded.find(key);
    if (dst < 0 && hit != expanded.end()) return tile_operand(hit->second, R, C, false);
    int t = dst >= 0 ? dst : temp(R, C);
    instr(out, npu::Op::TMOV, {tile_operand(t, R, C, false), tile_operand(b, R, C, false)});
    if (dst < 0) expanded[key] = t;
    return tile_operand(t, R, C, false);
}

int Selector::stage_operand(const Call *c, const Nest &n, npu::Mem l0, std::vector<NpuItem> &out) {
    std::string base = current + (l0 == npu::Mem::L0A ? ".a" : ".b");
    auto ub = ub_buffer.find(c->name);
    if (ub != ub_buffer.end() && k.buffers[ub->second].memory == npu::Mem::UB) {
        // A Func the vector unit computed (attention's P): UB -> L1 (TMOV, MTE3) -> L0A/L0B (TMOV, MTE1).
        Window w = window(c->name, c->args, n);
        const NpuBuffer &buf = k.buffers[ub->second];
        Expr offset = ub_offset(c->name, w);
        const int64_t *o = const_int(offset);
        user_assert(w.shape == Shape::Full && o && *o == 0 && buf.rows == n.R && buf.cols == padded_cols(n.C, buf.dtype))
            << "NPU target: Func " << current << " multiplies " << c->name << ", which is in UB as "
            << buf.rows << " x " << buf.cols << "; the matrix unit takes a UB operand through L1 whole, so "
            << "compute " << c->name << " at the loop of " << current << "'s tiles (compute_at), over exactly its "
            << n.R << " x " << n.C << " window";
        int l1 = add_buffer(base + "1", current, n.R, n.C, current_double, npu::Mem::L1, buf.dtype);
        int t = add_buffer(base + "0", current, n.R, n.C, current_double, l0, buf.dtype);
        instr(out, npu::Op::TMOV, {tile_operand(l1, n.R, n.C, false), tile_operand(ub->second, n.R, n.C, false)});
        instr(out, npu::Op::TMOV, {tile_operand(t, n.R, n.C, false), tile_operand(l1, n.R, n.C, false)});
        return t;
    }
    if (ub != ub_buffer.end() && k.buffers[ub->second].memory == npu::Mem::L1) {
        // An operand panel staged in L1 (B.in(matmul) computed at an outer loop, store_in(L1)): the
        // window is whole rows of it from a row that moves with the k-slice loop, moved into L0 (TMOV).
        Window w = window(c->name, c->args, n);
        const NpuBuffer &buf = k.buffers[ub->second];
        const std::vector<Expr> &mins = ub_mins[c->name];
        Expr col = simplify(expand(w.x0) - expand(mins[0])), row = simplify(expand(w.y0) - expand(mins[1]));
        const int64_t *c0 = const_int(col);
        user_assert(c0 && *c0 == 0 && n.C <= buf.cols && w.shape == Shape::Full && !w.clamped())
            << "NPU target: Func " << current << " multiplies " << c->name << ", an operand panel in L1 of "
            << buf.rows << " x " << buf.cols << ", by windows " << n.R << " x " << n.C << " at column " << col
            << "; a k-slice is moved L1 -> " << npu::mem_name(l0) << " as whole rows of the panel (tiles have no "
            << "row stride of their own), so stage in L1 the operand whose rows run along k (B(x, k), N columns: "
            << c->name << " must span the columns of " << current << "'s tile) and load the other from GM per "
            << "k-slice, or do not split k";
        Expr last = simplify(expand(row) + n.R);
        const int64_t *r0 = const_int(row), *r1 = const_int(last);
        user_assert(!(r0 && (*r0 < 0 || *r1 > buf.rows)))
            << "NPU target: Func " << current << " multiplies rows " << row << " to " << last << " of " << c->name
            << ", which holds " << buf.rows << " rows in L1; compute " << c->name << " at a loop outside the "
            << "k-slices so that it spans the whole reduction";
        int t = add_buffer(base + "0", current, n.R, n.C, current_double, l0, buf.dtype);
        NpuArg src = tile_operand(ub->second, n.R, n.C, false);
        if (!r0) src.row0_code = scalar(row);
        else src.row0 = (int)*r0;
        const int slices = r0 ? 0 : sliced_load(ub->second, row, n, out);
        instr(out, npu::Op::TMOV, {tile_operand(t, n.R, n.C, false), src});
        if (slices) out.back().slices = slices, out.back().slice_var = c_name(slice_loop->name);
        else whole_panel_reads.insert(ub->second);
        return t;
    }
    user_assert(c->call_type == Call::Image || gm_funcs.count(c->name))
        << "NPU target: Func " << current << " multiplies " << c->name << ", which is "
        << (ub != ub_buffer.end() ? std::string("in ") + npu::mem_name(k.buffers[ub->second].memory) : std::string("not in GM here"))
        << "; the NPU loads matrix operands from GM (inputs or compute_root Funcs) or takes them from UB, through "
           "L1 into "
        << npu::mem_name(l0) << ", so read " << c->name << " through a Func stored in UB (e.g. f(x, y) = " << c->name
        << "(x, y), compute_at the same loop, store_in(UB)) or compute_root() it in GM";
    // A window read transposed (B(x, k) written K(k, x), as in Q Kᵀ): loaded as the N x K window it is in
    // GM and transposed by the move into L0 (TMOV_T).
    bool transposed = false;
    if (c->args.size() == 2 && n.fx && n.fy) {
        Expr a0 = expand(substitute(n.lets, c->args[0])), a1 = expand(substitute(n.lets, c->args[1]));
        transposed = expr_uses_var(a0, n.fy->name) && expr_uses_var(a1, n.fx->name);
    }
    const Nest nt{n.fx, n.fy, n.C, n.R, n.lets};
    const Nest &gm_nest = transposed ? nt : n;
    Window w = window(c->name, c->args, gm_nest);
    bool invariant = !loop_vars.empty();
    for (const std::string &v : loop_vars)
        invariant &= !expr_uses_var(expand(w.x0), v) && !expr_uses_var(expand(w.y0), v);
    std::ostringstream key;
    key << c->name << "|" << npu::mem_name(l0) << "|" << expand(w.x0) << "|" << expand(w.y0) << "|" << n.R << "x" << n.C
        << (transposed ? "|T" : "");
    if (invariant && hoisted_loaded.count(key.str())) return hoisted_loaded[key.str()];
    std::vector<NpuItem> &dst = invariant ? hoisted : out;
    const int gr = gm_nest.R, gc = gm_nest.C;
    // A 16-bit operand stays 16-bit: the matrix unit multiplies f16 and bf16 and sums in f32.
    const npu::DType dt = npu_dtype(c->type);
    int l1 = add_buffer(base + "1", current, gr, gc, !invariant && current_double, npu::Mem::L1, dt);
    int t = add_buffer(base + "0", current, n.R, n.C, !invariant && current_double, l0, dt);
    Window we = w;
    we.x0 = expand(w.x0), we.y0 = expand(w.y0);
    instr(dst, npu::Op::TLOAD, {tile_operand(l1, gr, gc, false), gm_arg(gm_code(c->name, invariant ? we : w))});
    instr(dst, npu::Op::TMOV, {tile_operand(t, n.R, n.C, false), tile_operand(l1, gr, gc, false)}, npu::Cmp::EQ,
          transposed);
    if (invariant) hoisted_loaded[key.str()] = t;
    return t;
}

void Selector::select_matmul(const For *l0, const For *l1, const For *l2, std::vector<NpuItem> &out) {
    std::map<std::string, Expr> inner;
    const Provide *p = begin_stage({l0, l1, l2}, inner);
    auto shape_error = [&]() {
        check_slice_loop_place(p->name, {l0, l1, l2});
        user_error << "NPU target: Func " << p->name << " is computed over a 3-D loop nest (" << l0->name << ", "
                   << l1->name << ", " << l2->name << "); the NPU maps only matrix updates C(x, y) = C(x, y) + "
                   << "A(k, y) * B(x, k) onto TMATMUL, with C stored in L0C (store_in(L0C)), not " << p->values[0];
    };
    auto ub = ub_buffer.find(p->name);
    if (tile_dims(p->name, p->args.size()) != 2 || ub == ub_buffer.end() ||
        k.buffers[ub->second].memory != npu::Mem::L0C)
        shape_error();
    const For *loops[3] = {l0, l1, l2};
    auto loop_of = [&](const Expr &e) -> const For * {
        Expr x = expand(substitute(inner, e));
        const For *found = nullptr;
        for (const For *l : loops)
            if (expr_uses_var(x, l->name)) {
                if (found) return nullptr;
                found = l;
            }
        return found;
    };
    const For *fx = loop_of(p->args[0]), *fy = loop_of(p->args[1]), *fk = nullptr;
    for (const For *l : loops) if (l != fx && l != fy) fk = l;
    const Add *add = p->values[0].as<Add>();
    const Mul *mul = add ? (add->b.as<Mul>() ? add->b.as<Mul>() : add->a.as<Mul>()) : nullptr;
    const Call *self = add ? (add->b.as<Mul>() ? add->a.as<Call>() : add->b.as<Call>()) : nullptr;
    if (!fx || !fy || fx == fy || !mul || !self || self->name != p->name) shape_error();
    // cast<float>(A(k, y)) of a 16-bit A, cast<int32_t>(A(k, y)) of an int8 A: A itself.
    const Call *a = matrix_read_of(mul->a), *b = matrix_read_of(mul->b);
    if (!a || !b || tile_dims(a->name, a->args.size()) != 2 || tile_dims(b->name, b->args.size()) != 2) shape_error();
    // C, A and B may be planes of 3-D Funcs (attention's block_pv(c, i, kb) += probs(j, i, kb) * V(c, j)):
    // their coordinates from 2 on are fixed within the nest.
    for (const Call *o : {a, b})
        for (size_t d = 2; d < o->args.size(); d++)
            if (loop_of(o->args[d])) shape_error();
    for (size_t d = 2; d < p->args.size(); d++)
        if (loop_of(p->args[d])) shape_error();
    if (loop_of(a->args[1]) != fy) std::swap(a, b);  // A(k, y), B(x, k) or transposed B(k, x)
    if (loop_of(a->args[0]) != fk || loop_of(a->args[1]) != fy ||
        !((loop_of(b->args[0]) == fx && loop_of(b->args[1]) == fk) ||
          (loop_of(b->args[0]) == fk && loop_of(b->args[1]) == fx)))
        shape_error();
    // With the enclosing lets expanded: an extent of lets that are constants is constant.
    auto extent = [&](const For *l) { return expand(substitute(inner, l->extent)); };
    Expr m = extent(fy), n_ = extent(fx), k_ = extent(fk);
    const int64_t *M = const_int(m), *N = const_int(n_), *K = const_int(k_);
    user_assert(M && N && K) << "NPU target: Func " << p->name << ": the matrix update's loops " << fy->name << ", "
                             << fx->name << " and " << fk->name << " have extents " << extent(fy) << ", "
                             << extent(fx) << " and " << extent(fk)
                             << "; TMATMUL has a constant shape, so tile C by constants and give the reduction a "
                                "constant extent";
    for (const For *l : loops)
        user_assert(l->for_type == ForType::Serial) << "NPU target: Func " << p->name << ": loop " << l->name
                                                    << " forms a TMATMUL and must stay serial";
    check_one_rvar(p->name, fy->name + ", " + fx->name + " and " + fk->name, "TMATMUL");
    // A split K: the loop directly around the nest runs over the k-slices
    // (the outer part of the split RVar, in increasing k): its first
    // iteration's TMATMUL starts C from 0 and the others add to it
    // (TMATMUL_ACC), which sums over k in the host's order.
    const For *slices = split_rvar_loop(p->name, fk, *K, "matrix update's k-slice");
    if (!slices)
        check_whole_rvar(p->name, fk, Expr((int)*K), "matrix update", "TMATMUL",
                         "tile only C's loops, or split it with the k-slice loop directly around the update's "
                         "other loops: split(k, ko, ki, 64) reorder(ki, x, y, ko)");
    Nest na{fy, fk, (int)*M, (int)*K, inner}, nb{fk, fx, (int)*K, (int)*N, inner}, nc{fy, fx, (int)*M, (int)*N, inner};
    Window w = window(p->name, p->args, nc);
    Expr offset = ub_offset(p->name, w);
    const int64_t *o = const_int(offset);
    user_assert(o && *o == 0 && k.buffers[ub->second].rows == *M && k.buffers[ub->second].cols == (*N + 7) / 8 * 8)
        << "NPU target: Func " << p->name << " is updated in " << *M << " x " << *N << " tiles of its L0C buffer of "
        << k.buffers[ub->second].rows << " x " << k.buffers[ub->second].cols
        << "; a matrix update covers the whole accumulator: compute_at it at the loop of its consumer's tiles";
    slice_loop = slices;
    int ta = stage_operand(a, na, npu::Mem::L0A, out), tb = stage_operand(b, nb, npu::Mem::L0B, out);
    slice_loop = nullptr;
    const npu::DType da = k.buffers[ta].dtype, db = k.buffers[tb].dtype;
    user_assert(da == db) << "NPU target: Func " << p->name << " multiplies " << a->name << " (" << npu::dtype_name(da)
                          << ") by " << b->name << " (" << npu::dtype_name(db)
                          << "); the matrix unit takes two operands of one type (f16, bf16 or f32, summed in f32), "
                             "so give both the same type (cast one where it is computed)";
    user_assert(da != npu::DType::U8 && da != npu::DType::I32)
        << "NPU target: Func " << p->name << " multiplies " << a->name << " by " << b->name << " ("
        << npu::dtype_name(da) << "); the matrix unit takes f16, bf16 or f32 operands (summed in float32) or int8 "
        << "operands (summed in int32)";
    const npu::DType dc = k.buffers[ub->second].dtype, want = da == npu::DType::I8 ? npu::DType::I32 : npu::DType::F32;
    user_assert(dc == want) << "NPU target: Func " << p->name << " accumulates " << npu::dtype_name(da)
                            << " products in " << npu::dtype_name(dc) << "; the matrix unit sums "
                            << (want == npu::DType::I32 ? "int8 products in int32, so give " + p->name +
                                                              " type int32 (cast<int32_t>(A(k, y)) * "
                                                              "cast<int32_t>(B(x, k)))"
                                                        : "float products in float32, so give " + p->name +
                                                              " type float32");
    bool first = zeroed.erase(ub->second) > 0;
    instr(out, first && !slices ? npu::Op::TMATMUL : npu::Op::TMATMUL_ACC,
          {tile_operand(ub->second, (int)*M, (int)*N, false), tile_operand(ta, (int)*M, (int)*K, false),
           tile_operand(tb, (int)*K, (int)*N, false)});
    if (first && slices) out.back().first_if = c_name(slices->name) + " == " + scalar(slices->min);
}

int Selector::sliced_load(int b, const Expr &row, const Nest &n, std::vector<NpuItem> &out) {
    // A single panel whose load sits outside the slice loop, whose slices
    // are its rows in order: row = (ko - min) * R, the loop's trips x R
    // its rows.
    auto pl = panel_loads.find(b);
    const For *sl = slice_loop;
    if (pl == panel_loads.end() || !sl || k.buffers[b].copies != 1 || loop_stack.empty() || loop_stack.back() != sl ||
        pl->second.depth >= loop_stack.size() || pl->second.window.clamped() || pl->second.window.fill.defined())
        return 0;
    const int64_t *trips = as_const_int(simplify(expand(sl->extent)));
    const Expr v = Variable::make(Int(32), sl->name);
    if (!trips || *trips < 2 || *trips * n.R != k.buffers[b].rows ||
        !is_zero(simplify(expand(row) - (v - expand(sl->min)) * n.R)))
        return 0;
    // The loops between the panel's and the slice loop: the load runs on their first trips.
    const std::vector<const For *> between(loop_stack.begin() + pl->second.depth, loop_stack.end() - 1);
    for (const For *l : between)
        if (l->for_type != ForType::Serial) return 0;
    Window w = pl->second.window;
    w.y0 = simplify(w.y0 + expand(row));
    NpuArg dst = tile_operand(b, n.R, pl->second.cols, false);
    dst.row0_code = scalar(row);
    instr(out, npu::Op::TLOAD, {dst, gm_arg(gm_code(pl->second.source, w))});
    NpuItem &load = out.back();
    load.slices = (int)*trips;
    load.slice_var = c_name(sl->name);
    for (const For *l : between) {
        load.first_trip.push_back(c_name(l->name));
        load.guard += (load.guard.empty() ? "" : " && ") + c_name(l->name) + " == " + scalar(l->min);
    }
    sliced_panels.insert(b);
    // A ring (ring_panels) when the panel loop is the nest's outermost and
    // serial, with one loop, the row tiles, between it and the slices: the
    // next panel's slice ko is then this window at the panel loop's next trip.
    const For *panel = loop_stack.front();
    if (pl->second.depth == 1 && between.size() == 1 && panel->for_type == ForType::Serial) {
        RingPanel r;
        r.ring.slices = (int)*trips;
        r.ring.panel = c_name(panel->name), r.ring.tile = c_name(between[0]->name), r.ring.slice = c_name(sl->name);
        r.ring.panel_min = scalar(panel->min), r.ring.panel_extent = scalar(panel->extent);
        r.ring.tile_min = scalar(between[0]->min), r.ring.tile_extent = scalar(between[0]->extent);
        r.ring.slice_min = scalar(sl->min);
        const Expr next = Variable::make(Int(32), panel->name) + 1;
        Window wn = w;
        wn.x0 = simplify(substitute(panel->name, next, w.x0)), wn.y0 = simplify(substitute(panel->name, next, w.y0));
        for (Expr &o : wn.outer) o = simplify(substitute(panel->name, next, o));
        r.rows = n.R;
        r.panel_loop = panel, r.tile_loop = between[0], r.slice_loop = sl;
        r.next = wn, r.source = pl->second.source;
        ring_panels[b] = r;
    }
    return (int)*trips;
}

void Selector::make_rings(std::vector<NpuItem> &items) {
    if (!k.pipelined.empty()) return;  // a rotated loop orders its buffers as wholes (NpuSync.cpp)
    const npu::Machine m = npu_target_machine();
    for (auto &[b, r] : ring_panels) {
        NpuBuffer &buf = k.buffers[b];
        if (whole_panel_reads.count(b) || buf.ring_slots) continue;
        // The slots L1 has beside the other L1 buffers (each copy of them): the panel's own and up to as many more.
        uint64_t others = 0;
        for (const NpuBuffer &o : k.buffers)
            if (&o != &buf && o.memory == npu::Mem::L1) others += (uint64_t)o.bytes() * o.copies;
        const uint64_t slot_bytes = (uint64_t)r.rows * buf.cols * npu::dtype_size(buf.dtype);
        const uint64_t cap = m.capacity(npu::Mem::L1);
        const int fit = cap > others ? (int)((cap - others) / slot_bytes) : 0;
        const int extra = std::min(r.ring.slices, fit - r.ring.slices);
        if (extra < 1) continue;
        r.ring.slots = r.ring.slices + extra;
        // Parts of a slice: as many as keep each part's first slice iteration after the last tile's move of
        // the slot's slice before ((slices - extra) * (parts - 1) <= extra: the parts are the stream's last),
        // up to 4, whole rows.
        for (int q : {4, 2})
            if (r.rows % q == 0 && (r.ring.slices - extra) * (q - 1) <= extra) {
                r.ring.parts = q;
                break;
            }
        buf.rows = r.ring.slots * r.rows;
        buf.ring_slots = r.ring.slots;
        ring_items(items, b, r);
    }
}

void Selector::ring_items(std::vector<NpuItem> &items, int b, const RingPanel &r) {
    const int S = r.ring.slices, q = r.ring.parts, part_rows = r.rows / q;
    const For *tl = r.tile_loop, *sl = r.slice_loop, *pl = r.panel_loop;
    auto var = [](const For *l) { return Variable::make(Int(32), l->name) - l->min; };
    // The first row of slice s (part p) of this panel or the next in the ring (C++).
    auto slot_row = [&](bool next, const Expr &s, const Expr &p) {
        return scalar(simplify(((var(pl) + (next ? 1 : 0)) * S + s) % r.ring.slots * r.rows + p * part_rows));
    };
    // A load of the next panel's slice (or part) into dst, after item i.
    auto prefetch = [&](size_t i, NpuArg dst, const Window &w, NpuRing::Point point) {
        std::vector<NpuItem> load;
        instr(load, npu::Op::TLOAD, {dst, gm_arg(gm_code(r.source, w))});
        load[0].ring = r.ring;
        load[0].ring.point = point;
        load[0].guard = npu_ring_guard(r.ring, point);
        load[0].slices = S, load[0].slice_var = c_name(sl->name);
        items.insert(items.begin() + (long)i + 1, std::move(load[0]));
    };
    for (size_t i = 0; i < items.size(); i++) {
        NpuItem &it = items[i];
        ring_items(it.body, b, r);
        if (it.kind != NpuItem::Instr || !it.slices) continue;
        if (it.op == npu::Op::TLOAD && it.writes == std::vector<int>{b}) {  // the first panel's slice
            it.ring = r.ring;
            it.ring.point = NpuRing::FirstLoad;
            it.guard = npu_ring_guard(it.ring, NpuRing::FirstLoad);
            it.first_trip.clear();
            it.args[0].row0_code = slot_row(false, var(sl), 0);
        } else if (it.op == npu::Op::TMOV && it.reads == std::vector<int>{b}) {
            // The move of this panel's slice; then the next panel's slice into its slot, whole or in parts.
            it.ring = r.ring;
            it.args[1].row0_code = slot_row(false, var(sl), 0);
            NpuArg dst = it.args[1];
            dst.row0_code = slot_row(true, var(sl), 0);
            prefetch(i++, dst, r.next, NpuRing::Prefetch);
            if (q == 1) continue;
            // Part j of the stream at slice iteration yo * S + ko, over the panel's last S * q.
            const Expr j = var(tl) * S + var(sl) - (tl->extent - q) * S, s = j / q, p = j % q;
            Window w = r.next;
            w.y0 = simplify(substitute(sl->name, sl->min + s, w.y0) + p * part_rows);
            dst.rows = part_rows;
            dst.row0_code = slot_row(true, s, p);
            prefetch(i++, dst, w, NpuRing::Part);
        }
    }
}

void Selector::drop_sliced_panel_loads(std::vector<NpuItem> &items) {
    items.erase(std::remove_if(items.begin(), items.end(),
                               [&](const NpuItem &i) {
                                   return i.kind == NpuItem::Instr && i.op == npu::Op::TLOAD && !i.slices &&
                                          i.writes.size() == 1 && sliced_panels.count(i.writes[0]) &&
                                          !whole_panel_reads.count(i.writes[0]);
                               }),
                items.end());
    for (NpuItem &i : items) drop_sliced_panel_loads(i.body);
}

void Selector::check_slice_loop_place(const std::string &f, const std::vector<const For *> &loops) {
    const FunctionContents &fc = func(f);
    if (fc.updates.empty() || !fc.updates[0].rdom) return;
    const std::string &any = loops[0]->name;
    const std::string stage = any.substr(0, any.find('.', f.size() + 2) + 1);
    for (const auto &rv : fc.updates[0].rdom->vars) {
        const std::string prefix = stage + rv.name + ".";
        std::vector<std::string> parts;
        for (const For *l : loops)
            if (l->name.rfind(prefix, 0) == 0) parts.push_back(l->name);
        user_assert(parts.size() < 2)
            << "NPU target: Func " << f << ": the matrix update's RDom variable " << rv.name << " is split into "
            << "loops " << parts[0] << " and " << parts[1] << ", and both are among the three innermost loops ("
            << loops[0]->name << ", " << loops[1]->name << ", " << loops[2]->name << "), which form one TMATMUL; "
            << "the k-slice loop (the outer part of the split) must be directly around the update's other loops, "
            << "outermost: reorder(ki, x, y, ko)";
    }
}

const For *Selector::split_rvar_loop(const std::string &f, const For *fk, int64_t K, const char *what) {
    const FunctionContents &fc = func(f);
    if (fc.updates.empty() || !fc.updates[0].rdom || loop_stack.empty()) return nullptr;
    const For *outer = loop_stack.back();
    // Loops of a split RVar r: f.sN.r.<inner> and f.sN.r.<outer>, N the stage.
    const std::string stage = fk->name.substr(0, fk->name.find('.', f.size() + 2) + 1);
    for (const auto &rv : fc.updates[0].rdom->vars) {
        const std::string prefix = stage + rv.name + ".";
        if (fk->name.rfind(prefix, 0) != 0 || outer->name.rfind(prefix, 0) != 0) continue;
        Expr slices = simplify(expand(outer->extent)), extent = simplify(rv.extent);
        const int64_t *n = const_int(slices), *whole = const_int(extent);
        user_assert(n && whole && *n * K == *whole)
            << "NPU target: Func " << f << ": the " << what << " loop " << outer->name << " runs "
            << outer->extent << " parts of " << K << " but its RDom variable " << rv.name << " has extent "
            << rv.extent << "; the parts must cover the reduction exactly, so split " << rv.name
            << " by a constant that divides its extent";
        user_assert(outer->for_type == ForType::Serial)
            << "NPU target: Func " << f << ": the " << what << " loop " << outer->name << " accumulates into "
            << f << " in order and must stay serial";
        return outer;
    }
    return nullptr;
}

}  // namespace npu_select

std::string npu_ring_guard(const NpuRing &r, NpuRing::Point p) {
    const std::string tile = "(" + r.tile + " - (" + r.tile_min + "))", tiles = "(" + r.tile_extent + ")";
    const std::string first = r.panel + " == " + r.panel_min, S = std::to_string(r.slices), q = std::to_string(r.parts);
    const std::string next = r.panel + " + 1 < " + r.panel_min + " + " + r.panel_extent;
    const std::string parted = tiles + " >= " + std::to_string(r.parts + 1);
    const std::string j = "(" + tile + " * " + S + " + " + r.slice + " - (" + r.slice_min + ") - (" + tiles + " - " + q +
                          ") * " + S + ")";
    const std::string part = next + " && " + parted + " && " + j + " >= 0 && " + j + " < " + std::to_string(r.slices * r.parts);
    switch (p) {
    case NpuRing::FirstLoad: return first + " && " + r.tile + " == " + r.tile_min;
    case NpuRing::Prefetch:
        return next + (r.parts > 1 ? " && !(" + parted + ")" : "") + " && " + tile + " == kiln_npu_min(" + tiles +
               " - 1, 1 + (" + r.slice + " - (" + r.slice_min + ")) * (" + tiles + " - 1) / " +
               std::to_string(r.slots - r.slices) + ")";
    case NpuRing::Part: return part;
    case NpuRing::PartStart: return part + " && " + j + " % " + q + " == 0";
    case NpuRing::PartEnd: return part + " && " + j + " % " + q + " == " + std::to_string(r.parts - 1);
    case NpuRing::FirstUse: return first + " && " + r.tile + " == " + r.tile_min;
    case NpuRing::PrefetchedUse: return r.panel + " != " + r.panel_min + " && " + r.tile + " == " + r.tile_min;
    case NpuRing::LastUse: return tile + " == " + tiles + " - 1";
    default: return "";
    }
}

bool npu_ring_runs(const NpuRing &r, NpuRing::Point p, int64_t panel, int64_t panels, int64_t tile, int64_t tiles,
                   int64_t slice) {
    const bool parted = r.parts > 1 && tiles >= r.parts + 1;
    const int64_t j = tile * r.slices + slice - (tiles - r.parts) * r.slices;
    const bool part = panel + 1 < panels && parted && j >= 0 && j < r.slices * r.parts;
    switch (p) {
    case NpuRing::FirstLoad:
    case NpuRing::FirstUse: return panel == 0 && tile == 0;
    case NpuRing::Prefetch:
        return panel + 1 < panels && !parted &&
               tile == std::min(tiles - 1, 1 + slice * (tiles - 1) / (r.slots - r.slices));
    case NpuRing::Part: return part;
    case NpuRing::PartStart: return part && j % r.parts == 0;
    case NpuRing::PartEnd: return part && j % r.parts == r.parts - 1;
    case NpuRing::PrefetchedUse: return panel != 0 && tile == 0;
    case NpuRing::LastUse: return tile == tiles - 1;
    default: return true;
    }
}

}  // namespace internal
}  // namespace kiln
