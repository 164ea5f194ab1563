// Stencil halos (pipe MTE2, then V): the windows a vector tile reads from
// one input (or GM Func) at constant offsets from each other are one TLOAD
// of their union, the tile plus its halo, into UB; each window is then the
// sub-tile at its offset. A row offset is a view whole rows down the halo
// tile (rows are multiples of 32 bytes: free); a column offset is one
// TEXTRACT into a tile of its own (a vector operand starts on a 32-byte
// boundary, a window shifted by an element does not). A later tile of the
// same loop body whose window the halo holds reads it from there too.
// Each plane of a 3-D input (a channel) has its own halo.
//
//   for (y, blur_x.y.min, 34) for (x, blur_x.x.min, 64)
//     blur_x(x, y) = (input(x - 1, y) + input(x, y) + input(x + 1, y)) / 3
//   ->
//   TLOAD(blur_x.t0 34x72 valid 34x66 <- input window at (x.min - 1, y.min))   MTE2
//   TEXTRACT(blur_x.t1 <- blur_x.t0 at (0, 1))                                 V
//   TADD(blur_x.t2 <- blur_x.t0 valid 34x64, blur_x.t1)                        V
//   TEXTRACT(blur_x.t1 <- blur_x.t0 at (0, 2))  ...                            V
//
// instead of three TLOADs of 34 x 64 windows shifted by one element in GM.
#include <sstream>

#include "NpuSelect.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

std::string Selector::clamp_key(const Window &w) const {
    std::ostringstream s;
    for (int d = 0; d < 2; d++)
        if (w.lo[d].defined()) s << d << ":" << expand(w.lo[d]) << ".." << expand(w.hi[d]) << ";";
    if (w.fill.defined()) s << "pad:" << w.fill << ";";  // never shares a halo with replicated edges
    return s.str() + w.plane_key();  // a 3-D input's planes are loaded apart
}

void Selector::plan_halos(const Expr &value, const Nest &n) {
    planned.clear();
    if (!n.fx || !n.fy) return;
    // The 2-D reads of inputs and GM Funcs in the value, each with the
    // constant it is padded with, if it is (a constant_exterior read).
    struct Reads : IRVisitor {
        Selector &self;
        const Nest &n;
        std::vector<std::pair<const Call *, Expr>> calls;
        Reads(Selector &self, const Nest &n) : self(self), n(n) {}
        using IRVisitor::visit;
        void visit(const Call *c) override {
            if ((c->call_type == Call::Image || c->call_type == Call::Func) && c->args.size() >= 2)
                calls.push_back({c, Expr()});
            IRVisitor::visit(c);
        }
        void visit(const Select *sel) override {
            Expr fill;
            if (const Call *c = self.padded_read(sel, n, fill)) calls.push_back({c, fill});
            else IRVisitor::visit(sel);
        }
    } reads(*this, n);
    reads.include(value);
    struct Group {
        Window base;
        int64_t lo[2] = {0, 0}, hi[2] = {0, 0};  // offsets from base (x, y)
        bool constant = true;
        int windows = 0;
    };
    std::map<std::string, Group> groups;  // name | clamp key -> its windows
    std::vector<std::string> order;
    for (const auto &[c, fill] : reads.calls) {
        if (ub_buffer.count(c->name) || is_output(c->name) || !(c->call_type == Call::Image || gm_funcs.count(c->name)))
            continue;
        Window w = window(c->name, c->args, n);
        w.fill = fill;
        bool invariant = c->call_type == Call::Image && !loop_vars.empty();  // hoisted by select_call
        for (const std::string &v : loop_vars)
            invariant &= !expr_uses_var(expand(w.x0), v) && !expr_uses_var(expand(w.y0), v) && !w.moves_with(v);
        if (invariant || w.shape != Shape::Full) continue;
        const std::string key = c->name + "|" + clamp_key(w);
        auto it = groups.find(key);
        if (it == groups.end()) {
            Group g;
            g.base = w;
            g.windows = 1;
            groups.emplace(key, g);
            order.push_back(key);
            continue;
        }
        Group &g = it->second;
        Expr d[2] = {simplify(expand(w.x0) - expand(g.base.x0)), simplify(expand(w.y0) - expand(g.base.y0))};
        for (int i = 0; i < 2; i++) {
            const int64_t *o = const_int(d[i]);
            if (!o) {
                g.constant = false;
                continue;
            }
            g.lo[i] = std::min(g.lo[i], *o), g.hi[i] = std::max(g.hi[i], *o);
        }
        g.windows++;
    }
    for (const std::string &key : order) {
        const Group &g = groups[key];
        // One window, or offsets that are not constants: loaded as they are (select_call).
        if (g.windows < 2 || !g.constant || (g.lo[0] == g.hi[0] && g.lo[1] == g.hi[1])) continue;
        Halo h;
        h.name = key.substr(0, key.find('|'));
        h.clamp = clamp_key(g.base);
        h.w = g.base;
        h.w.x0 = simplify(g.base.x0 + (int)g.lo[0]);
        h.w.y0 = simplify(g.base.y0 + (int)g.lo[1]);
        h.cols = n.C + (int)(g.hi[0] - g.lo[0]);
        h.rows = n.R + (int)(g.hi[1] - g.lo[1]);
        planned.push_back(h);
    }
}

Operand Selector::halo_read(const std::string &name, const Window &w, npu::DType dt, int dst, int R, int C,
                            std::vector<NpuItem> &out) {
    Operand none;
    if (!halo_reads || w.shape != Shape::Full) return none;
    const std::string clamp = clamp_key(w);
    // Window w's place in h, if h holds it.
    auto place = [&](const Halo &h, int &r0, int &c0) {
        if (h.name != name || h.clamp != clamp) return false;
        Expr dx = simplify(expand(w.x0) - expand(h.w.x0)), dy = simplify(expand(w.y0) - expand(h.w.y0));
        const int64_t *x = const_int(dx), *y = const_int(dy);
        if (!x || !y || *x < 0 || *y < 0 || *x + C > h.cols || *y + R > h.rows) return false;
        r0 = (int)*y, c0 = (int)*x;
        return true;
    };
    int r0 = 0, c0 = 0, found = -1;
    for (size_t i = 0; i < halos.size() && found < 0; i++)
        if (place(halos[i], r0, c0)) found = (int)i;
    for (size_t i = 0; i < planned.size() && found < 0; i++) {
        if (!place(planned[i], r0, c0)) continue;
        Halo h = planned[i];
        planned.erase(planned.begin() + (long)i);
        const bool small = dt != npu::DType::F32;  // a 16-bit input: loaded as it is, widened once
        h.buffer = small ? temp(h.rows, h.cols) : load_temp(h.rows, h.cols);
        int l = small ? temp16(h.rows, h.cols, dt) : h.buffer;
        instr(out, npu::Op::TLOAD, {tile_operand(l, h.rows, h.cols, false), gm_arg(gm_code(name, h.w))});
        if (small)
            instr(out, npu::Op::TCVT, {tile_operand(h.buffer, h.rows, h.cols, false), tile_operand(l, h.rows, h.cols, false)});
        halos.push_back(h);
        found = (int)halos.size() - 1;
    }
    if (found < 0) return none;
    const Halo &h = halos[found];
    if (c0 == 0) {  // whole rows down the halo tile: an aligned view
        Operand src = tile_operand(h.buffer, R, C, false, r0);
        if (dst < 0) return src;
        instr(out, npu::Op::TCOPY, {tile_operand(dst, R, C, false), src});
        return tile_operand(dst, R, C, false);
    }
    // A column offset: one TEXTRACT per loop body (into dst, or a temporary read again by later tiles).
    const std::string key = "extract|" + std::to_string(h.buffer) + "|" + std::to_string(r0) + "|" +
                            std::to_string(c0) + "|" + std::to_string(R) + "x" + std::to_string(C);
    auto hit = loaded.find(key);
    if (dst < 0 && hit != loaded.end()) return tile_operand(hit->second, R, C, false);
    int t = dst >= 0 ? dst : temp(R, C);
    instr(out, npu::Op::TEXTRACT, {tile_operand(t, R, C, false), tile_operand(h.buffer, h.rows, h.cols, false),
                                   gm_arg(std::to_string(r0)), gm_arg(std::to_string(c0))});
    if (dst < 0) loaded[key] = t;
    return tile_operand(t, R, C, false);
}

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
