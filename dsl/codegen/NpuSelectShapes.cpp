// How 1-D Funcs and images lie in the NPU's tiles (see NpuSelect.h,
// find_shapes): a visit of the loop nest before instruction selection.
//
//   for (y) for (x) output(x, y) = e(x, y) - row_max(y)     row_max: Column (R x 1)
//   for (y) for (x) output(x, y) = e(x, y) * gamma(x)       gamma: Row (1 x C)
#include "NpuSelect.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

namespace {

// Records, for every 1-D Func and image, whether tiles read or write it
// along y (Column) or along x (Row). A 1-D Func read only inside another 1-D
// Func's tile takes that Func's orientation (propagate(), after the visit):
// in g(x) = h(x) * 2 with g read along x of a 2-D tile, h is a row too.
class FindShapes : public IRVisitor {
public:
    std::map<std::string, Shape> shape;
    // Funcs of 2 or more dimensions realized over one value of each
    // dimension from 1 on, and more than one of dimension 0: a per-row
    // statistic of one plane (block_max(i, kb) computed at the loop over kb).
    std::set<std::string> planar;

    void propagate() {
        for (bool changed = true; changed;) {
            changed = false;
            for (const auto &[writer, reads] : reads_1d) {
                auto w = shape.find(writer);
                if (w == shape.end()) continue;
                for (const std::string &r : reads)
                    if (shape.emplace(r, w->second).second) changed = true;
            }
        }
    }

private:
    std::map<std::string, std::set<std::string>> reads_1d;  // a 1-D tile's Func -> the 1-D Funcs it reads

    void visit_1d_tile(const Provide *p, const std::string &var) {
        struct Reads : IRVisitor {
            std::string var;
            const std::set<std::string> *planar = nullptr;
            std::set<std::string> names;
            using IRVisitor::visit;
            void visit(const Call *c) override {
                if ((c->call_type == Call::Func || c->call_type == Call::Image) &&
                    (c->args.size() == 1 || planar->count(c->name)) && expr_uses_var(c->args[0], var))
                    names.insert(c->name);
                IRVisitor::visit(c);
            }
        } reads;
        reads.var = var;
        reads.planar = &planar;
        for (const Expr &v : p->values) reads.include(v);
        reads_1d[p->name].insert(reads.names.begin(), reads.names.end());
    }

    using IRVisitor::visit;
    const For *fy = nullptr, *fx = nullptr;
    std::map<std::string, Expr> lets;

    void note(const std::string &name, const Expr &arg) {
        Expr a = substitute(lets, arg);
        Shape s = fx && expr_uses_var(a, fx->name) ? Shape::Row : Shape::Column;
        auto it = shape.find(name);
        user_assert(it == shape.end() || it->second == s)
            << "NPU target: the 1-D Func " << name << " is read both along the rows and along the columns of tiles; "
            << "its UB buffer is either a column (one value per row) or a row (one value per column), so give each "
               "use its own Func";
        shape[name] = s;
    }
    void visit(const For *f) override {
        const Stmt *b = &f->body;
        std::map<std::string, Expr> l;
        while (const LetStmt *ls = b->as<LetStmt>()) l[ls->name] = ls->value, b = &ls->body;
        const For *inner = b->as<For>();
        if (inner) {
            const Stmt *c = &inner->body;
            while (const LetStmt *ls = c->as<LetStmt>()) l[ls->name] = ls->value, c = &ls->body;
            if (const Provide *p = c->as<Provide>()) {
                fy = f, fx = inner;
                lets.clear();
                for (auto &kv : l) lets[kv.first] = substitute(lets, kv.second);
                if (one_d(p->name, p->args)) note(p->name, p->args[0]);
                for (const Expr &v : p->values) include(v);
                fy = fx = nullptr;
                return;
            }
        } else {
            const Provide *p = b->as<Provide>();
            if (p && one_d(p->name, p->args)) visit_1d_tile(p, f->name);
        }
        IRVisitor::visit(f);
    }
    void visit(const Call *c) override {
        if (fy && (c->call_type == Call::Func || c->call_type == Call::Image) && one_d(c->name, c->args))
            note(c->name, c->args[0]);
        IRVisitor::visit(c);
    }
    void visit(const Realize *r) override {
        bool one_plane = r->bounds.size() >= 2 && !is_one(simplify(r->bounds[0].extent));
        for (size_t d = 1; d < r->bounds.size(); d++) one_plane &= is_one(simplify(r->bounds[d].extent));
        if (one_plane) planar.insert(r->name);
        IRVisitor::visit(r);
    }
    bool one_d(const std::string &name, const std::vector<Expr> &args) const {
        return args.size() == 1 || planar.count(name);
    }
};

}  // namespace

void find_shapes(const Stmt &loop_nest, std::map<std::string, Shape> &shapes, std::set<std::string> &planar) {
    FindShapes f;
    f.include(loop_nest);
    f.propagate();
    shapes = std::move(f.shape);
    planar = std::move(f.planar);
}

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
