// Epilogues of matrix accumulators onto the fix pipe: the tile of an output
// (or GM Func) whose value is bias, ReLU, a scale and a conversion of a
// matrix accumulator in L0C over the same tile is one TSTORE from L0C whose
// fix-pipe epilogue applies them on the way to GM, with no vector pass and
// no UB tile. The bias (one value per column: int32 for an int32
// accumulator; float32, float16 or bfloat16 for a float32 one, widened by
// the fix pipe) is loaded GM -> L1 (TLOAD, MTE2), before the outermost
// loop when it does not move with any loop. The fix pipe computes each
// step as the host does (int32 add and max, then float32 multiply, round
// to nearest even, saturate; or float32 add, max and multiply, then round
// to f16 / bf16), so the output is bitwise the host's.
//
// An int32 accumulator has no other way out of L0C (the vector unit
// computes float tiles), so any other epilogue of it is a user error; a
// float32 accumulator's other epilogues (GELU, a second input) stay on the
// vector unit (the tile moved L0C -> UB by the fix pipe, then vector
// instructions and an MTE3 store).
//
//   for (y, 0, 32) for (x, 0, 128)
//     output(x, y) = int8(max(min(round(float32(max(matmul(x, y) + bias(x), 0)) * 0.02f), 127.99999f), -128.0f))
//   ->
//   TLOAD(output.bias <- bias window)                                           MTE2 (hoisted)
//   TSTORE(output window <- matmul, Fix().bias(output.bias).relu().scale(0.02f))   FIX
//
//   for (y, 0, 64) for (x, 0, 256)
//     output(x, y) = bfloat16(max(matmul(x, y) + float32(bias(x)), 0.0f))      matmul float32, bias bfloat16
//   ->
//   TLOAD(output.bias <- bias window)                                           MTE2, 1 x 256 bf16 in L1
//   TSTORE(output window <- matmul, Fix().bias(output.bias).relu())             FIX, f32 -> bf16
#include "NpuSelect.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

// The epilogue's parts, outermost last: acc (+ bias), max(., 0), cast<float>(.) * scale, conversion.
struct FixForm {
    const Call *acc = nullptr, *bias = nullptr;
    bool relu = false;
    Expr scale;
};

namespace {

bool float_const_in(const Expr &e, double lo, double hi) {
    const FloatImm *f = e.as<FloatImm>();
    return f && f->value >= lo && f->value < hi;
}

}  // namespace

std::string Selector::fix_form(const std::string &func, const Expr &v, const std::string &acc, const Nest &n,
                               FixForm &f) {
    const bool int_acc = is_int_accumulator(acc);
    const npu::DType out_t = npu_dtype(v.type());
    Expr g, h;  // the float part (before the conversion) and the int part (before cast<float>)
    if (out_t == npu::DType::I8 && int_acc) {
        // saturating_cast<int8_t>(round(g)): int8(max(min(round(g), 127.99999f), -128.0f))
        const Cast *c = v.as<Cast>();
        const Max *mx = c ? c->value.as<Max>() : nullptr;
        const Min *mn = mx ? mx->a.as<Min>() : nullptr;
        const Call *rd = mn ? mn->a.as<Call>() : nullptr;
        if (!(rd && rd->name == "round" && rd->args.size() == 1 && float_const_in(mn->b, 127.0, 128.0) &&
              float_const_in(mx->b, -128.0, -127.0)))
            return "its int8 value " + to_string(v) + " is not saturating_cast<int8_t>(round(...)) of a float32";
        g = rd->args[0];
    } else if (out_t == npu::DType::F16 || out_t == npu::DType::BF16) {
        const Cast *c = v.as<Cast>();
        if (!c || c->value.type() != Float(32)) return "its " + v.type().to_string() + " value is not a cast of a float32";
        g = c->value;
    } else if (out_t == npu::DType::F32) {
        g = v;
    } else if (out_t == npu::DType::I32 && int_acc) {
        h = v;
    } else {
        return "its type " + v.type().to_string() + " is none the fix pipe writes (" +
               (int_acc ? "int8, int32, float32, float16, bfloat16)" : "float32, float16, bfloat16)");
    }
    if (g.defined()) {
        if (const Mul *m = g.as<Mul>()) {
            if (scalar_only(m->b, n)) f.scale = m->b, g = m->a;
            else if (scalar_only(m->a, n)) f.scale = m->a, g = m->b;
        }
        if (f.scale.defined() && f.scale.type() != Float(32)) return "its scale " + to_string(f.scale) + " is not a float32";
        if (int_acc) {
            const Cast *c = g.as<Cast>();
            if (!c || c->value.type() != Int(32))
                return "its float part " + to_string(g) + " is not cast<float>(an int32 value)" +
                       (f.scale.defined() ? "" : " times a scalar");
            h = c->value;
        } else {
            h = g;
        }
    }
    // max(v, 0): the fix pipe's ReLU (v > 0 ? v : 0, the IR's max with 0 second; max(0, v) keeps a NaN).
    if (const Max *mx = h.as<Max>()) {
        if (is_zero(mx->b)) f.relu = true, h = mx->a;
        else if (int_acc && is_zero(mx->a)) f.relu = true, h = mx->b;
    }
    const Type acc_t = int_acc ? Int(32) : Float(32);
    const std::string bias_form = int_acc ? "an int32 input or GM Func indexed by x"
                                          : "a float32 input or GM Func indexed by x, or cast<float> of a float16 "
                                            "or bfloat16 one";
    if (const Add *ad = h.as<Add>()) {
        Expr a = ad->a, b = ad->b;
        if (b.as<Call>() && b.as<Call>()->name == acc) std::swap(a, b);
        const Call *ac = a.as<Call>(), *bc = b.as<Call>();
        if (!int_acc && !bc)  // cast<float>(a 16-bit bias): the fix pipe widens it exactly
            if (const Cast *cb = b.as<Cast>())
                if (cb->value.type() == Float(16) || cb->value.type() == BFloat(16)) bc = cb->value.as<Call>();
        f.acc = ac && ac->name == acc ? ac : nullptr;
        f.bias = bc;
        if (!f.acc || !bc || bc->args.size() != 1 || (bc->type != acc_t && (int_acc || bc->type.bits() != 16)) ||
            shape_of(bc->name, 1) != Shape::Row || !(bc->call_type == Call::Image || gm_funcs.count(bc->name)))
            return "its " + acc_t.to_string() + " sum " + to_string(h) + " is not " + acc + "(x, y) + bias(x) with bias " +
                   bias_form;
    } else {
        f.acc = h.as<Call>();
        if (!f.acc || f.acc->name != acc)
            return "its " + acc_t.to_string() + " part " + to_string(h) + " is not " + acc + "(x, y) or " + acc +
                   "(x, y) + bias(x)";
    }
    // The accumulator's tile is the output's tile.
    const NpuBuffer &accb = k.buffers[ub_buffer.at(acc)];
    Window wa = window(acc, f.acc->args, n);
    Expr offset = ub_offset(acc, wa);
    const int64_t *o = const_int(offset);
    if (!(wa.shape == Shape::Full && o && *o == 0 && accb.rows == n.R && accb.cols == padded_cols(n.C, accb.dtype)))
        return "its " + std::to_string(n.R) + " x " + std::to_string(n.C) + " tile is not the accumulator's " +
               std::to_string(accb.rows) + " x " + std::to_string(accb.cols) + " tile at its origin (compute_at " + acc +
               " at the loop of " + func + "'s tiles)";
    return "";
}

bool Selector::select_fix_store(const Provide *p, const Window &w, const Nest &n, std::vector<NpuItem> &out) {
    const Expr v = substitute(n.lets, p->values[0]);
    // Does the value read a matrix accumulator in L0C at all?
    struct FindAcc : IRVisitor {
        const Selector &s;
        std::string name;
        explicit FindAcc(const Selector &s) : s(s) {}
        using IRVisitor::visit;
        void visit(const Call *c) override {
            if (s.is_accumulator(c->name)) name = c->name;
            IRVisitor::visit(c);
        }
    } find(*this);
    find.include(v);
    if (find.name.empty()) return false;
    FixForm f;
    const std::string why = fix_form(p->name, v, find.name, n, f);
    if (!why.empty()) {
        // A float32 accumulator has the vector unit too (through a TMOV L0C -> UB); an int32 one only the fix pipe.
        if (!is_int_accumulator(find.name)) return false;
        user_error << "NPU target: Func " << p->name << " reads the int32 accumulator " << find.name << " in L0C; "
                   << why << ". The vector unit computes float tiles only, so an int32 accumulator leaves L0C "
                   << "through the fix pipe, whose epilogue is, each step optional: saturating_cast<int8_t>("
                   << "round(cast<float>(max(" << find.name << "(x, y) + bias(x), 0)) * scale)) (bias an int32 "
                   << "input or GM Func indexed by x, scale a float constant or scalar Param), or the float part "
                   << "cast to float16, bfloat16 or kept float32, or the int32 value itself; write " << p->name
                   << " in that form, computed over " << find.name << "'s tile and stored in GM (an output or "
                   << "compute_root Func)";
    }
    std::vector<NpuArg> args{gm_arg(gm_code(p->name, w)), tile_operand(ub_buffer.at(find.name), n.R, n.C, false)};
    if (f.bias) {
        // One value per column, GM -> L1; loaded once before the loops when it does not move with them.
        Window wb = window(f.bias->name, f.bias->args, n);
        bool invariant = !loop_vars.empty();
        for (const std::string &lv : loop_vars) invariant &= !expr_uses_var(expand(wb.x0), lv);
        const std::string key = f.bias->name + "|fixbias|" + to_string(expand(wb.x0)) + "|" + std::to_string(n.C);
        int t;
        if (invariant && hoisted_loaded.count(key)) {
            t = hoisted_loaded[key];
        } else {
            t = add_buffer(p->name + ".bias", p->name, 1, n.C, !invariant && current_double, npu::Mem::L1,
                           npu_dtype(f.bias->type));
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
    st.gm_type = npu_dtype(v.type());
    if (f.scale.defined()) st.scale = scalar(f.scale);
    return true;
}

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
