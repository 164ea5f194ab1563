// Boundary conditions as ordinary Funcs (inlined by default): each maps a
// coordinate into the valid region and then clamps it, so the wrapped
// input is never read outside [min, min + extent).
#include "kiln/BoundaryConditions.h"

#include "ir/Function.h"

namespace kiln {
namespace BoundaryConditions {

namespace {

Region image_region(const ImageParam &im) {
    Region r;
    for (int d = 0; d < im.dimensions(); d++) r.push_back({im.dim(d).min(), im.dim(d).extent()});
    return r;
}

std::vector<Var> make_vars(int n) {
    std::vector<Var> v;
    for (int i = 0; i < n; i++) v.emplace_back("_" + std::to_string(i));
    return v;
}

void check(const Func &f, const Region &bounds, const char *what) {
    user_assert(f.defined()) << "BoundaryConditions::" << what << ": Func " << f.name() << " is not defined";
    user_assert((int)bounds.size() == f.dimensions())
        << "BoundaryConditions::" << what << ": Func " << f.name() << " has " << f.dimensions()
        << " dimensions but " << bounds.size() << " bounds were given";
}

// Map each coordinate with `fn(x, min, extent)`; keep the value otherwise.
template<typename Fn>
Func remap(const Func &f, const Region &bounds, const char *what, Fn fn) {
    check(f, bounds, what);
    Func g(internal::derived_name(f.contents()->derived_names, f.name() + "_" + what));
    std::vector<Var> vars = make_vars(f.dimensions());
    std::vector<Expr> args, coords;
    for (size_t d = 0; d < vars.size(); d++) {
        args.push_back(vars[d]);
        if (!bounds[d].first.defined()) {
            coords.push_back(vars[d]);
            continue;
        }
        Expr mn = bounds[d].first, ex = bounds[d].second;
        coords.push_back(clamp(fn(Expr(vars[d]), mn, ex), mn, mn + ex - 1));
    }
    g(args) = f(coords);
    g.contents()->boundary_condition = what;
    return g;
}

Expr mirror_image_coord(Expr x, Expr mn, Expr ex) {
    // ... 2 1 0 | 0 1 2 ... : period 2*ex; reflect the upper half.
    Expr m = (x - mn) % (2 * ex);
    return mn + select(m < ex, m, 2 * ex - 1 - m);
}
Expr mirror_interior_coord(Expr x, Expr mn, Expr ex) {
    // ... 2 1 | 0 1 2 ... : period 2*ex - 2 (at least 1).
    Expr period = max(2 * ex - 2, 1);
    Expr m = (x - mn) % period;
    return mn + select(m < ex, m, period - m);
}

}  // namespace

Func repeat_edge(const Func &f, const Region &bounds) {
    return remap(f, bounds, "repeat_edge", [](Expr x, Expr, Expr) { return x; });
}
Func mirror_image(const Func &f, const Region &bounds) { return remap(f, bounds, "mirror_image", mirror_image_coord); }
Func mirror_interior(const Func &f, const Region &bounds) {
    return remap(f, bounds, "mirror_interior", mirror_interior_coord);
}
Func constant_exterior(const Func &f, Expr value, const Region &bounds) {
    check(f, bounds, "constant_exterior");
    user_assert(value.defined()) << "BoundaryConditions::constant_exterior: the value is undefined";
    Func clamped = repeat_edge(f, bounds);
    Func g(internal::derived_name(f.contents()->derived_names, f.name() + "_constant_exterior"));
    std::vector<Var> vars = make_vars(f.dimensions());
    std::vector<Expr> args;
    Expr inside = make_bool(true);
    for (size_t d = 0; d < vars.size(); d++) {
        args.push_back(vars[d]);
        if (!bounds[d].first.defined()) continue;
        Expr mn = bounds[d].first, ex = bounds[d].second;
        inside = inside && vars[d] >= mn && vars[d] < mn + ex;
    }
    if (value.type() != f.type()) value = cast(f.type(), value);
    g(args) = select(inside, clamped(args), value);
    g.contents()->boundary_condition = "constant_exterior";
    return g;
}

Func repeat_edge(const ImageParam &im) { return repeat_edge(Func(im), image_region(im)); }
Func constant_exterior(const ImageParam &im, Expr value) {
    return constant_exterior(Func(im), value, image_region(im));
}
Func mirror_image(const ImageParam &im) { return mirror_image(Func(im), image_region(im)); }
Func mirror_interior(const ImageParam &im) { return mirror_interior(Func(im), image_region(im)); }

}  // namespace BoundaryConditions
}  // namespace kiln
