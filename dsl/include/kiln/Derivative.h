// Reverse-mode automatic differentiation of a pipeline, as Halide's
// propagate_adjoints(): the adjoint (the gradient of a scalar loss, or the
// vector-Jacobian product with a given output adjoint) of every Func, input
// image and Param the output depends on, each an ordinary Func that is
// scheduled and realized like any other.
//
//   Func loss("loss");  RDom r(0, w, 0, h);
//   loss() = 0.0;  loss() += blur_y(r.x, r.y) * blur_y(r.x, r.y);
//   Derivative d = propagate_adjoints(loss);
//   Func d_in = d(input);                      // "input_adjoint", 2-D, d loss / d input(x, y)
//   d(blur_x).compute_at(d_in, y);             // "blur_x_adjoint", scheduled like any Func
//   d_in.realize(grad);
//
// Names are stable: the adjoint of Func f (of its final value, what its
// consumers read) is "<f>_adjoint"; of an image or Param p, "<p>_adjoint".
// A Func with update definitions also has one adjoint per earlier stage,
// "<f>_<s>_adjoint" for stage s (0 the pure definition), which
// d(f, update_id) returns with Halide's numbering (-1 the pure definition).
// What is differentiated, and how, is in docs/autodiff.md.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "BoundaryConditions.h"
#include "Func.h"
#include "Param.h"
#include "Pipeline.h"

namespace kiln {

class Derivative {
public:
    Derivative() = default;
    // The adjoint of f's final value ("<f>_adjoint").
    Func operator()(const Func &f) const;
    // The adjoint of f after update update_id (-1: after the pure
    // definition), as Halide's Derivative::operator()(func, update_id).
    Func operator()(const Func &f, int update_id) const;
    Func operator()(const ImageParam &im) const;
    template<typename T> Func operator()(const Param<T> &p) const { return (*this)(p.name()); }
    // A generator's Input (kiln/Generator.h), by its ImageParam or Param:
    // d(input) rather than d(input.param()).
    template<typename In, typename = decltype(std::declval<const In &>().param())>
    Func operator()(const In &input) const {
        return (*this)(input.param());
    }
    // By name: a Func's final adjoint, an image's or a Param's.
    Func operator()(const std::string &name) const;
    // Every Func, image and Param that has an adjoint, sorted by name.
    std::vector<std::string> names() const;

    // One Func per stage (a single one for images and Params), filled by
    // propagate_adjoints().
    std::map<std::string, std::vector<Func>> adjoints;
};

// Propagate `adjoint` (a Func with output's dimensions and type) backward
// from `output`, whose region of interest is output_bounds ({min, extent}
// per dimension): the adjoint is taken as zero outside it.
Derivative propagate_adjoints(const Func &output, const Func &adjoint,
                              const BoundaryConditions::Region &output_bounds);
// The same with the adjoint read from an image, zero outside the image's
// region (which is the output's region of interest).
Derivative propagate_adjoints(const Func &output, const ImageParam &adjoint);
// The same with the adjoint a generator's buffer Input (kiln/Generator.h).
template<typename In, typename = decltype(ImageParam(std::declval<const In &>().param()))>
Derivative propagate_adjoints(const Func &output, const In &adjoint) {
    return propagate_adjoints(output, adjoint.param());
}
// The same with no region: `adjoint` must itself be zero wherever it should
// not contribute. Differentiating a read that needs the output's region (a
// clamped or data-dependent access, a Func read at fewer dimensions than it
// has, a Param) is then an error asking for output_bounds.
Derivative propagate_adjoints(const Func &output, const Func &adjoint);
// The gradient of a scalar loss: a 0-D Func (typically a sum over an RDom),
// seeded with 1.
Derivative propagate_adjoints(const Func &loss);

// The forward pass of a backward pipeline that saves forward Funcs
// (Func::save(), docs/autodiff.md): a Pipeline whose outputs are `forward`
// (the Funcs differentiated) and then each saved Func the `backward` outputs
// read, in name order: the Func itself (save()), or its encoding "<f>_bits"
// (save(bits)), a uint8 Func over f's dimensions with dimension 0 divided by
// 8, whose bit i at x is the comparison the backward pass reads at 8 x + i.
// Realize it, bind each output to the saved Func's saved_buffer(), then
// realize the backward outputs. A Func saved as bits must have the
// dimensions of a forward output, whose buffer bounds dimension 0.
//
//   bias_add.save(Residual::Bits);
//   Pipeline fwd = forward_with_residuals({output}, {d_A});
//   fwd.realize(outs);   bias_add.saved_buffer().set(outs[1]);   d_A.realize(grad);
Pipeline forward_with_residuals(const std::vector<Func> &forward, const std::vector<Func> &backward);

// The buffers a backward pipeline reads its saved Funcs from, for whoever
// runs its forward pass (kiln-lab, a training loop): one per residual of
// forward_with_residuals(forward, backward), in the order of its outputs
// after `forward`. `sizes` gives buffer extents by name (as the fusion
// report takes them) and must size `forward`'s outputs (a backward
// generator: its adjoint images', GeneratorBase::adjoint_images()); a
// residual is as large as the box the backward pipeline reads of it (for
// bits, in bytes of 8 points along dimension 0) where `sizes` gives the
// backward outputs' extents and the box is constant there, else the size of
// the forward output of as many dimensions.
//   for (const SavedBuffer &b : saved_buffers({output}, {d_input}, sizes))
//       b.buffer.set(b.forward_output ? out : Buffer<void>(b.buffer.type(), b.extents));
struct SavedBuffer {
    std::string func;          // the saved Func
    ImageParam buffer;         // its saved_buffer(), which the backward pipeline reads
    std::vector<int> extents;  // for `sizes`; empty if they do not tell
    bool forward_output;       // the buffer is the forward output `func` itself: no output of its own
};
std::vector<SavedBuffer> saved_buffers(const std::vector<Func> &forward, const std::vector<Func> &backward,
                                       const std::map<std::string, std::vector<int>> &sizes,
                                       const Target &t = Target::host());

namespace internal {
// Collects the output of every propagate_adjoints() call while `into` is set
// (a generator's forward outputs); nullptr stops.
void record_differentiated_outputs(std::vector<Func> *into);
// Collects, while `into` is set, the input image each differentiated output's
// adjoint came from (propagate_adjoints(output, image)): output -> image name.
void record_adjoint_images(std::map<std::string, std::string> *into);
}  // namespace internal

}  // namespace kiln
