// Scalar parameters (Param<T>) and input images (ImageParam) of a pipeline.
#pragma once
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Buffer.h"
#include "Expr.h"
#include "Type.h"

namespace kiln {

class Func;

namespace internal {
struct FunctionContents;
// What Dimension::set_min / set_extent / set_stride said about one
// dimension of a buffer: each field the generated kernel asserts on entry
// and lowering then takes as known. Undefined: not constrained.
struct DimConstraint {
    Expr min, extent, stride;
};
// The shared state behind a Param or ImageParam: its name, type and, for
// JIT realization, its current value or buffer.
struct ParameterContents {
    std::string name;
    Type type;
    bool is_buffer = false;
    // The buffer of an output Func (Func::output_buffer()): not an argument
    // of its own; its fields are those of the output's halide_buffer_t.
    bool is_output = false;
    int dimensions = 0;
    std::vector<DimConstraint> constraints;  // per dimension once one is set
    uint64_t scalar_bits = 0;            // current scalar value, bit pattern
    const halide_buffer_t *buffer = nullptr;  // current bound buffer (JIT)
    Halide::Runtime::Buffer<const void> held;  // keeps a buffer given to set() alive
    Expr min_value, max_value;           // optional range for scalars
    // Wrappers made by image.in(...): consumer name ("" for every consumer) -> wrapper.
    std::map<std::string, std::shared_ptr<FunctionContents>> wrappers;
    // How many Funcs were derived from this image per base name (derived_name()).
    std::map<std::string, int> derived_names;
    // A saved residual (Func::save()): the forward Func whose values it holds.
    std::string saved_func;
};
Expr param_variable(const std::shared_ptr<ParameterContents> &p, const std::string &name, Type t);
// Throws CompileError when a Param's range is empty (both ends constant, lo > hi).
void check_param_range(const std::string &name, const Expr &lo, const Expr &hi);
std::string unique_name(char prefix);
// The name of a Func made without one: of `kind` "f", f0, f1, ... (a
// `Func f;`); of another kind, kind, kind_1, kind_2, ... (an inline
// reduction's "sum", a "lambda"). Counted per FuncNameScope while one lives
// on this thread, else per process.
std::string anonymous_func_name(const std::string &kind);
// A generator's build opens one, so its anonymous Funcs get the same names
// in every build in one process and a .sched file naming them works for
// each (kiln-lab builds a generator once per schedule). A name met twice in
// a pipeline is made unique there (lower/UniqueNames.h). Only Funcs: a Var
// or RDom is known by its name, so two of one name would be one.
class FuncNameScope {
public:
    FuncNameScope();
    ~FuncNameScope();
    FuncNameScope(const FuncNameScope &) = delete;
    FuncNameScope &operator=(const FuncNameScope &) = delete;

private:
    friend std::string anonymous_func_name(const std::string &kind);
    std::map<std::string, int> uses;
    FuncNameScope *outer;
};
// The name of a Func derived from another Func or an image (a boundary
// condition, an image's Func, a wrapper, an rfactor intermediate): base the
// first time `uses` (the parent's count) sees it, then base_1, base_2, ...
// Counted per parent, so the same algorithm built twice in one process gets
// the same names (a .sched file naming them works for every build).
std::string derived_name(std::map<std::string, int> &uses, const std::string &base);
void bump_definition_epoch();
// Implicit arguments (`_`, Var.h): "_0", "_1", ... are implicit Vars; `e` is
// the placeholder `_`; a call's `_` replaced by the implicit Vars of the
// dimensions the other arguments leave (`who` names the callee in errors).
bool is_implicit_var(const std::string &name);
bool is_placeholder(const Expr &e);
std::vector<Expr> expand_placeholder(const std::vector<Expr> &args, int dims, const std::string &who);
}  // namespace internal

template<typename T>
class Param {
public:
    explicit Param(const std::string &name = internal::unique_name('p'))
        : contents(std::make_shared<internal::ParameterContents>()) {
        contents->name = name;
        contents->type = type_of<T>();
    }
    Param(const std::string &name, T value) : Param(name) { set(value); }
    void set(T v) {
        contents->scalar_bits = 0;
        std::memcpy(&contents->scalar_bits, &v, sizeof(T));
    }
    T get() const {
        T v;
        std::memcpy(&v, &contents->scalar_bits, sizeof(T));
        return v;
    }
    void set_range(Expr lo, Expr hi) {
        internal::bump_definition_epoch();  // the range is checked by the compiled kernel
        internal::check_param_range(contents->name, lo, hi);
        contents->min_value = lo;
        contents->max_value = hi;
    }
    const std::string &name() const { return contents->name; }
    Type type() const { return contents->type; }
    operator Expr() const { return internal::param_variable(contents, contents->name, contents->type); }
    const std::shared_ptr<internal::ParameterContents> &parameter() const { return contents; }

private:
    std::shared_ptr<internal::ParameterContents> contents;
};

// One dimension of an input image or an output buffer, as symbolic
// expressions of the bound buffer, and constraints on it (as Halide's
// Internal::Dimension). A constraint is checked by the generated kernel on
// entry (a buffer that breaks it is refused with
// kiln_error_constraint_violated and a message) and lets lowering use the
// value: known strides, constant mins and extents.
//
//   input.dim(0).set_min(0).dim(1).set_stride(input.dim(0).extent());
//   f.output_buffer().dim(0).set_bounds(0, 256);   // out.min.0 == 0, out.extent.0 == 256
//
// A constraint is an integer Expr of constants, Params and buffer fields;
// an undefined Expr removes it. Kiln's kernels need dimension 0 dense, so
// set_stride on dimension 0 accepts only 1.
class Dimension {
public:
    Dimension(std::shared_ptr<internal::ParameterContents> p, int d) : param(std::move(p)), dim_(d) {}
    Expr min() const;
    Expr extent() const;
    Expr max() const;
    Expr stride() const;
    Dimension set_min(Expr min);
    Dimension set_extent(Expr extent);
    Dimension set_stride(Expr stride);
    Dimension set_bounds(Expr min, Expr extent);
    Dimension dim(int d) const;  // another dimension of the same buffer, for chaining

private:
    Dimension set(Expr internal::DimConstraint::*field, const char *method, Expr value);
    std::shared_ptr<internal::ParameterContents> param;
    int dim_;
};

// A buffer of the pipeline seen from the algorithm: an input (ImageParam)
// or the buffer an output Func is realized into (Func::output_buffer()).
//   f.bound(x, 0, f.output_buffer().width());   f.split(x, xo, xi, f.output_buffer().width() / 4);
class OutputImageParam {
public:
    OutputImageParam() = default;
    explicit OutputImageParam(std::shared_ptr<internal::ParameterContents> p) : contents(std::move(p)) {}
    const std::string &name() const { return contents->name; }
    Type type() const { return contents->type; }
    int dimensions() const { return contents->dimensions; }
    Dimension dim(int d) const;
    Expr width() const { return dim(0).extent(); }
    Expr height() const { return dim(1).extent(); }
    Expr channels() const { return dim(2).extent(); }
    Expr left() const { return dim(0).min(); }
    Expr right() const { return dim(0).max(); }
    Expr top() const { return dim(1).min(); }
    Expr bottom() const { return dim(1).max(); }
    const std::shared_ptr<internal::ParameterContents> &parameter() const { return contents; }
    bool defined() const { return contents != nullptr; }

protected:
    std::shared_ptr<internal::ParameterContents> contents;
};

class ImageParam : public OutputImageParam {
public:
    ImageParam() = default;
    ImageParam(Type t, int dims, const std::string &name = internal::unique_name('i'));
    // A handle to an existing ImageParam (e.g. found by name in a pipeline).
    explicit ImageParam(std::shared_ptr<internal::ParameterContents> p) : OutputImageParam(std::move(p)) {}
    // Bind a buffer for realize(); the ImageParam keeps a reference to it
    // (temporaries such as b.cropped(...) stay valid).
    template<typename T, int D> void set(const Halide::Runtime::Buffer<T, D> &b) {
        contents->held = Halide::Runtime::Buffer<const void>(b);
        contents->buffer = contents->held.raw_buffer();
    }
    // Bind a raw buffer; the caller keeps it alive while it is bound.
    void set_raw(const halide_buffer_t *b);
    Expr operator()(std::vector<Expr> args) const;
    template<typename... Args> Expr operator()(Expr a, Args &&...rest) const {
        return (*this)(std::vector<Expr>{a, Expr(rest)...});
    }
    operator Func() const;  // a Func that reads the image (f(x, y) = image(x, y))
    // Wrappers staging the image into a Func that can be scheduled (compute_at,
    // store_at, vectorize, ...), as Func::in(): image.in(g) for g's reads,
    // image.in() for every read. Their pure Vars are named _0, _1, ...
    Func in();
    Func in(const Func &consumer);
    Func in(const std::vector<Func> &consumers);
};

}  // namespace kiln
