// Epilogues of int32 accumulators onto the fix pipe: the tile of an output
// (or GM Func) whose value is bias, ReLU and requantization of an int32
// matrix accumulator in L0C over the same tile is one TSTORE from L0C
// whose fix-pipe epilogue applies them on the way to GM, with no vector
// pass and no UB tile. The bias (one int32 per column) is loaded GM -> L1
// (TLOAD, MTE2), before the outermost loop when it does not move with any
// loop. The fix pipe computes each step as the host does (int32 add and
// max, then float32 multiply, round to nearest even, saturate), so the
// output is bitwise the host's.
//
//   for (y, 0, 32) for (x, 0, 128)
//     output(x, y) = int8(max(min(round(float32(max(matmul(x, y) + bias(x), 0)) * 0.02f), 127.99999f), -128.0f))
//   ->
//   TLOAD(output.bias <- bias window)                                           MTE2 (hoisted)
//   TSTORE(output window <- matmul, Fix().bias(output.bias).relu().scale(0.02f))   FIX
#include "NpuSelect.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

namespace {

// The epilogue's parts, outermost last: acc (+ bias), max(., 0), cast<float>(.) * scale, conversion.
struct FixForm {
    const Call *acc = nullptr, *bias = nullptr;
    bool relu = false;
    Expr scale;
};

bool float_const_in(const Expr &e, double lo, double hi) {
    const FloatImm *f = e.as<FloatImm>();
    return f && f->value >= lo && f->value < hi;
}

}  // namespace

bool Selector::select_fix_store(const Provide *p, const Window &w, const Nest &n, std::vector<NpuItem> &out) {
    const Expr v = substitute(n.lets, p->values[0]);
    // Does the value read an int32 accumulator in L0C at all?
    struct FindAcc : IRVisitor {
        const Selector &s;
        std::string name;
        explicit FindAcc(const Selector &s) : s(s) {}
        using IRVisitor::visit;
        void visit(const Call *c) override {
            if (s.is_int_accumulator(c->name)) name = c->name;
            IRVisitor::visit(c);
        }
    } find(*this);
    find.include(v);
    if (find.name.empty()) return false;
    const NpuBuffer &accb = k.buffers[ub_buffer.at(find.name)];
    auto refuse = [&](const std::string &why) {
        user_error << "NPU target: Func " << p->name << " reads the int32 accumulator " << find.name << " in L0C; "
                   << why << ". The vector unit computes float tiles only, so an int32 accumulator leaves L0C "
                   << "through the fix pipe, whose epilogue is, each step optional: saturating_cast<int8_t>("
                   << "round(cast<float>(max(" << find.name << "(x, y) + bias(x), 0)) * scale)) (bias an int32 "
                   << "input or GM Func indexed by x, scale a float constant or scalar Param), or the float part "
                   << "cast to float16, bfloat16 or kept float32, or the int32 value itself; write " << p->name
                   << " in that form, computed over " << find.name << "'s tile and stored in GM (an output or "
                   << "compute_root Func)";
    };
    FixForm f;
    const npu::DType out_t = npu_dtype(v.type());
    Expr g, h;  // the float part (before the conversion) and the int part (before cast<float>)
    if (out_t == npu::DType::I8) {
        // saturating_cast<int8_t>(round(g)): int8(max(min(round(g), 127.99999f), -128.0f))
        const Cast *c = v.as<Cast>();
        const Max *mx = c ? c->value.as<Max>() : nullptr;
        const Min *mn = mx ? mx->a.as<Min>() : nullptr;
        const Call *rd = mn ? mn->a.as<Call>() : nullptr;
        if (!(rd && rd->name == "round" && rd->args.size() == 1 && float_const_in(mn->b, 127.0, 128.0) &&
              float_const_in(mx->b, -128.0, -127.0)))
            refuse("its int8 value " + to_string(v) + " is not saturating_cast<int8_t>(round(...)) of a float32");
        g = rd->args[0];
    } else if (out_t == npu::DType::F16 || out_t == npu::DType::BF16) {
        const Cast *c = v.as<Cast>();
        if (!c || c->value.type() != Float(32)) refuse("its " + v.type().to_string() + " value is not a cast of a float32");
        g = c->value;
    } else if (out_t == npu::DType::F32) {
        g = v;
    } else if (out_t == npu::DType::I32) {
        h = v;
    } else {
        refuse("its type " + v.type().to_string() + " is none the fix pipe writes (int8, int32, float32, float16, "
               "bfloat16)");
    }
    if (g.defined()) {
        if (const Mul *m = g.as<Mul>()) {
            if (scalar_only(m->b, n)) f.scale = m->b, g = m->a;
            else if (scalar_only(m->a, n)) f.scale = m->a, g = m->b;
        }
        const Cast *c = g.as<Cast>();
        if (!c || c->value.type() != Int(32))
            refuse("its float part " + to_string(g) + " is not cast<float>(an int32 value)" +
                   (f.scale.defined() ? "" : " times a scalar"));
        h = c->value;
    }
    if (const Max *mx = h.as<Max>()) {
        if (is_zero(mx->b)) f.relu = true, h = mx->a;
        else if (is_zero(mx->a)) f.relu = true, h = mx->b;
    }
    if (const Add *ad = h.as<Add>()) {
        const Call *a = ad->a.as<Call>(), *b = ad->b.as<Call>();
        if (b && is_int_accumulator(b->name)) std::swap(a, b);
        f.acc = a && is_int_accumulator(a->name) ? a : nullptr;
        f.bias = b;
        if (!f.acc || !b || b->args.size() != 1 || b->type != Int(32) || shape_of(b->name, 1) != Shape::Row ||
            !(b->call_type == Call::Image || gm_funcs.count(b->name)))
            refuse("its int32 sum " + to_string(h) + " is not " + find.name + "(x, y) + bias(x) with bias an int32 "
                   "input or GM Func indexed by x");
    } else {
        f.acc = h.as<Call>();
        if (!f.acc || !is_int_accumulator(f.acc->name)) refuse("its int32 part " + to_string(h) + " is not " +
                                                               find.name + "(x, y) or " + find.name + "(x, y) + bias(x)");
    }
    if (f.scale.defined() && f.scale.type() != Float(32)) refuse("its scale " + to_string(f.scale) + " is not a float32");
    // The accumulator's tile is the output's tile.
    const int acc = ub_buffer.at(f.acc->name);
    Window wa = window(f.acc->name, f.acc->args, n);
    Expr offset = ub_offset(f.acc->name, wa);
    const int64_t *o = const_int(offset);
    if (!(wa.shape == Shape::Full && o && *o == 0 && accb.rows == n.R && accb.cols == padded_cols(n.C, accb.dtype)))
        refuse("its " + std::to_string(n.R) + " x " + std::to_string(n.C) + " tile is not the accumulator's " +
               std::to_string(accb.rows) + " x " + std::to_string(accb.cols) + " tile at its origin (compute_at " +
               f.acc->name + " at the loop of " + p->name + "'s tiles)");
    std::vector<NpuArg> args{gm_arg(gm_code(p->name, w)), tile_operand(acc, n.R, n.C, false)};
    if (f.bias) {
        // One int32 per column, GM -> L1; loaded once before the loops when it does not move with them.
        Window wb = window(f.bias->name, f.bias->args, n);
        bool invariant = !loop_vars.empty();
        for (const std::string &lv : loop_vars) invariant &= !expr_uses_var(expand(wb.x0), lv);
        const std::string key = f.bias->name + "|fixbias|" + to_string(expand(wb.x0)) + "|" + std::to_string(n.C);
        int t;
        if (invariant && hoisted_loaded.count(key)) {
            t = hoisted_loaded[key];
        } else {
            t = add_buffer(p->name + ".bias", p->name, 1, n.C, !invariant && current_double, npu::Mem::L1,
                           npu::DType::I32);
            Window we = wb;
            we.x0 = expand(wb.x0);
            instr(invariant ? hoisted : out, npu::Op::TLOAD,
                  {tile_operand(t, 1, n.C, false), gm_arg(gm_code(f.bias->name, invariant ? we : wb))});
            if (invariant) hoisted_loaded[key] = t;
        }
        args.push_back(tile_operand(t, 1, n.C, false));
    }
    instr(out, npu::Op::TSTORE, args);
    NpuItem &st = out.back();
    st.fix = true;
    st.relu = f.relu;
    st.gm_type = out_t;
    if (f.scale.defined()) st.scale = scalar(f.scale);
    return true;
}

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
