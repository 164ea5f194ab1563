// propagate_adjoints() and Derivative (kiln/Derivative.h): the checks of
// what is differentiated, the seed of the backward walk (Propagate.h), and
// the lookup of adjoints by Func, image, Param or name.
#include "kiln/Derivative.h"

#include "autodiff/Propagate.h"
#include "ir/Function.h"
#include "ir/Simplify.h"
#include "ir/Util.h"

namespace kiln {

using namespace internal;

namespace {

void check_output(const Func &output, const char *form) {
    user_assert(output.defined()) << "propagate_adjoints(" << form << "): Func " << output.name()
                                  << " has no definition";
    const auto &f = *output.contents();
    user_assert(f.num_values() == 1) << "propagate_adjoints(" << form << "): Func " << output.name()
                                     << " returns a Tuple; differentiate a Func of one value";
    user_assert(f.types[0].is_float())
        << "propagate_adjoints(" << form << "): Func " << output.name() << " has type " << f.types[0].to_string()
        << "; integer outputs are not differentiable (their values do not change continuously with the inputs). "
        << "Differentiate a float Func, e.g. one that casts " << output.name() << " to float32";
}

thread_local std::vector<Func> *recording = nullptr;
thread_local std::map<std::string, std::string> *recording_images = nullptr;

Derivative run(const Func &output, Expr seed, const Box &region) {
    if (recording) {
        bool known = false;
        for (const Func &f : *recording) known |= f.contents() == output.contents();
        if (!known) recording->push_back(output);
    }
    Derivative d;
    d.adjoints = propagate(output.contents(), seed, region);
    return d;
}

Expr seed_of(const Func &output, const Func &adjoint, const char *form) {
    check_output(output, form);
    user_assert(adjoint.defined() && adjoint.outputs() == 1 && adjoint.dimensions() == output.dimensions())
        << "propagate_adjoints(" << form << "): the adjoint " << adjoint.name() << " must be a defined Func of one "
        << "value with the " << output.dimensions() << " dimension(s) of " << output.name();
    Type t = output.type();
    user_assert(adjoint.type().is_float())
        << "propagate_adjoints(" << form << "): the adjoint " << adjoint.name() << " has type "
        << adjoint.type().to_string() << "; it must be a float (" << t.to_string() << ", as " << output.name() << ")";
    std::vector<Expr> args;
    for (const auto &a : output.contents()->args) args.push_back(make_var(a));
    Expr s = adjoint(args);
    return s.type() == t ? s : cast(t, s);
}

}  // namespace

void internal::record_differentiated_outputs(std::vector<Func> *into) { recording = into; }
void internal::record_adjoint_images(std::map<std::string, std::string> *into) { recording_images = into; }

Derivative propagate_adjoints(const Func &output, const Func &adjoint, const BoundaryConditions::Region &bounds) {
    const char *form = "output, adjoint, output_bounds";
    seed_of(output, adjoint, form);  // checks
    user_assert((int)bounds.size() == output.dimensions())
        << "propagate_adjoints(" << form << "): " << bounds.size() << " {min, extent} pair(s) given for the "
        << output.dimensions() << " dimension(s) of " << output.name();
    Box box;
    Expr inside = make_bool(true);
    std::vector<Expr> clamped;
    for (int i = 0; i < output.dimensions(); i++) {
        Expr v = make_var(output.contents()->args[i]);
        Expr mn = bounds[i].first, mx = simplify(bounds[i].first + bounds[i].second - 1);
        box.push_back(Interval(mn, mx));
        inside = inside && v >= mn && v <= mx;
        clamped.push_back(clamp(v, mn, mx));
    }
    // Zero outside the region; the adjoint itself is read only inside it.
    Expr at = adjoint(clamped);
    if (at.type() != output.type()) at = cast(output.type(), at);
    return run(output, select(inside, at, make_zero(output.type())), box);
}

Derivative propagate_adjoints(const Func &output, const ImageParam &adjoint) {
    if (recording_images) (*recording_images)[output.name()] = adjoint.name();
    BoundaryConditions::Region r;
    for (int d = 0; d < adjoint.dimensions(); d++) r.push_back({adjoint.dim(d).min(), adjoint.dim(d).extent()});
    return propagate_adjoints(output, Func(adjoint), r);
}

Derivative propagate_adjoints(const Func &output, const Func &adjoint) {
    Expr seed = seed_of(output, adjoint, "output, adjoint");
    return run(output, seed, Box(output.dimensions(), Interval()));
}

Derivative propagate_adjoints(const Func &loss) {
    check_output(loss, "loss");
    user_assert(loss.dimensions() == 0)
        << "propagate_adjoints(loss): Func " << loss.name() << " has " << loss.dimensions()
        << " dimension(s); the one-argument form differentiates a scalar (0-D) loss, such as loss() = sum(...). "
        << "For a Func with dimensions, give its adjoint: propagate_adjoints(" << loss.name() << ", adjoint, region)";
    return run(loss, make_one(loss.type()), Box());
}

Func Derivative::operator()(const std::string &name) const {
    auto it = adjoints.find(name);
    user_assert(it != adjoints.end())
        << "Derivative: " << name << " has no adjoint: the differentiated output does not depend on it through "
        << "float values (integer Funcs, images and Params carry no gradient). Adjoints exist for: " << join(names());
    return it->second.back();
}

Func Derivative::operator()(const Func &f) const { return (*this)(f.name()); }
Func Derivative::operator()(const ImageParam &im) const { return (*this)(im.name()); }

Func Derivative::operator()(const Func &f, int update_id) const {
    (*this)(f.name());  // exists
    const std::vector<Func> &stages = adjoints.at(f.name());
    user_assert(update_id >= -1 && update_id + 1 < (int)stages.size())
        << "Derivative: Func " << f.name() << " has " << stages.size() - 1 << " update definition(s); update_id "
        << update_id << " is not one of them (-1 is the pure definition)";
    return stages[update_id + 1];
}

std::vector<std::string> Derivative::names() const {
    std::vector<std::string> n;
    for (const auto &kv : adjoints) n.push_back(kv.first);
    return n;
}

}  // namespace kiln
