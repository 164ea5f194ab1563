// Generators: an algorithm packaged for ahead-of-time compilation by
// kiln-gen and kiln_add_library() (docs/generators.md), as Halide's GenGen.
//
//   class Brighten : public Generator<Brighten> {
//   public:
//       GeneratorParam<float> gain{"gain", 2.0f};           // fixed at generation time (kiln-gen gain=3)
//       Input<Buffer<uint8_t, 2>> input{"input"};          // halide_buffer_t *input
//       Input<float> offset{"offset", 0.0f, -1.0f, 1.0f};   // float offset, checked against [-1, 1]
//       Output<Buffer<float, 2>> output{"output"};          // halide_buffer_t *output
//       void generate() {
//           Var x("x"), y("y");
//           output(x, y) = cast<float>(input(x, y)) * gain.value() + offset;
//       }
//   };
//   KILN_REGISTER_GENERATOR(Brighten, brighten)
//
// compiles to `extern "C" int brighten(halide_buffer_t *input, float offset,
// halide_buffer_t *output)`: the Inputs in declaration order, then the
// Outputs. generate() writes the algorithm only; the schedule comes from a
// .sched file that names the Funcs (kiln-gen -s). Inputs, Outputs and
// GeneratorParams must be data members of the generator class.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "BoundaryConditions.h"
#include "Error.h"
#include "Func.h"
#include "Param.h"
#include "Pipeline.h"
#include "Target.h"

namespace kiln {

class GeneratorBase;
class GeneratorParamBase;
class GeneratorInputBase;
class GeneratorOutputBase;

namespace internal {

// Register a member with the generator whose object contains it; a
// CompileError if it is not inside one (see GeneratorBase).
void register_generator_member(GeneratorParamBase *param);
void register_generator_member(GeneratorInputBase *input);
void register_generator_member(GeneratorOutputBase *output);

// Text -> value for GeneratorParams: false if s is not one ("1" and "true"
// are bools, "float32" and "uint8" Types).
bool parse_generator_value(const std::string &s, int64_t &v);
bool parse_generator_value(const std::string &s, double &v);
bool parse_generator_value(const std::string &s, bool &v);
bool parse_generator_value(const std::string &s, Type &v);
// The element types a GeneratorParam<Type> accepts, comma-separated.
std::string generator_type_names();

template<typename T> std::string value_string(const T &v) {
    if constexpr (std::is_same<T, bool>::value) {
        return v ? "true" : "false";
    } else if constexpr (std::is_same<T, Type>::value) {
        return v.to_string();
    } else {
        std::ostringstream s;
        s << +v;  // int8_t/uint8_t as numbers
        return s.str();
    }
}

// An Expr of type T with value v.
template<typename T> Expr const_expr(T v) {
    if constexpr (std::is_floating_point<T>::value) return make_const(type_of<T>(), (double)v);
    else return make_const(type_of<T>(), (int64_t)v);
}

}  // namespace internal

// ---- GeneratorParam ----

// A compile-time parameter of a generator, set by name from text
// ("name=value" on the kiln-gen command line, PARAMS in kiln_add_library).
class GeneratorParamBase {
public:
    GeneratorParamBase(const GeneratorParamBase &) = delete;
    GeneratorParamBase &operator=(const GeneratorParamBase &) = delete;
    virtual ~GeneratorParamBase() = default;

    const std::string &name() const { return name_; }
    // "" on success, else what a value must look like ("an integer in [1, 8]").
    virtual std::string set_from_string(const std::string &s) = 0;
    virtual std::string value_string() const = 0;
    // What the value may be, for --list: "an integer in [1, 8]", "a number", "one of a, b".
    virtual std::string kind() const = 0;

protected:
    explicit GeneratorParamBase(const std::string &name);

private:
    std::string name_;
};

// GeneratorParam<T> for T = an arithmetic type (int, float, bool, ...), an
// enum (with a map from names to values) or Type (an element type, written
// "float32", "uint8", ...).
//
//   GeneratorParam<int> radius{"radius", 2, 1, 8};                // value and range
//   GeneratorParam<Type> type{"type", Float(32)};
//   enum class Mode { Fast, Exact };
//   GeneratorParam<Mode> mode{"mode", Mode::Fast, {{"fast", Mode::Fast}, {"exact", Mode::Exact}}};
template<typename T>
class GeneratorParam : public GeneratorParamBase {
    static_assert(std::is_arithmetic<T>::value || std::is_enum<T>::value || std::is_same<T, Type>::value,
                  "GeneratorParam<T>: T must be an arithmetic type, an enum or kiln::Type");

public:
    GeneratorParam(const std::string &name, T value) : GeneratorParamBase(name), value_(value) {
        static_assert(!std::is_enum<T>::value, "an enum GeneratorParam needs its names: {{\"name\", value}, ...}");
    }
    GeneratorParam(const std::string &name, T value, T min, T max)
        : GeneratorParamBase(name), value_(value), min_(min), max_(max), has_range_(true) {
        static_assert(std::is_arithmetic<T>::value && !std::is_same<T, bool>::value,
                      "only a numeric GeneratorParam has a range");
        if (value < min || max < value)
            throw CompileError("GeneratorParam '" + name + "': the default " + internal::value_string(value) +
                               " is outside its range " + range_string());
    }
    GeneratorParam(const std::string &name, T value, const std::map<std::string, T> &names)
        : GeneratorParamBase(name), value_(value), names_(names) {
        static_assert(std::is_enum<T>::value, "only an enum GeneratorParam takes a map of names");
        bool found = false;
        for (const auto &kv : names) found |= kv.second == value;
        if (!found) throw CompileError("GeneratorParam '" + name + "': the default value has no name in the map");
    }

    T value() const { return value_; }
    operator T() const { return value_; }

    std::string set_from_string(const std::string &s) override {
        T v{};
        if constexpr (std::is_enum<T>::value) {
            auto it = names_.find(s);
            if (it == names_.end()) return kind();
            v = it->second;
        } else if constexpr (std::is_same<T, Type>::value || std::is_same<T, bool>::value) {
            if (!internal::parse_generator_value(s, v)) return kind();
        } else {
            using Wide = std::conditional_t<std::is_floating_point<T>::value, double, int64_t>;
            Wide w{};
            if (!internal::parse_generator_value(s, w)) return kind();
            if (std::is_integral<T>::value && (Wide)(T)w != w) return kind();
            v = (T)w;
            if (has_range_ && (v < min_ || max_ < v)) return kind();
        }
        value_ = v;
        return "";
    }
    std::string value_string() const override {
        if constexpr (std::is_enum<T>::value) {
            for (const auto &kv : names_)
                if (kv.second == value_) return kv.first;
            return "?";
        } else {
            return internal::value_string(value_);
        }
    }
    std::string kind() const override {
        if constexpr (std::is_enum<T>::value) {
            std::string s = "one of ";
            for (auto it = names_.begin(); it != names_.end(); ++it) s += (it == names_.begin() ? "" : ", ") + it->first;
            return s;
        } else if constexpr (std::is_same<T, Type>::value) {
            return "a type: one of " + internal::generator_type_names();
        } else if constexpr (std::is_same<T, bool>::value) {
            return "true or false";
        } else {
            std::string s = std::is_floating_point<T>::value ? "a number" : "an integer";
            if (!std::is_floating_point<T>::value && !std::is_same<T, int>::value) s += " of type " + type_of<T>().to_string();
            return has_range_ ? s + " in " + range_string() : s;
        }
    }

private:
    std::string range_string() const {
        return "[" + internal::value_string(min_) + ", " + internal::value_string(max_) + "]";
    }
    T value_;
    T min_{}, max_{};
    bool has_range_ = false;
    std::map<std::string, T> names_;
};

// ---- Inputs and outputs ----

// An Input or Output: its name and its place in the signature.
class GeneratorIOBase {
public:
    GeneratorIOBase(const GeneratorIOBase &) = delete;
    GeneratorIOBase &operator=(const GeneratorIOBase &) = delete;
    virtual ~GeneratorIOBase() = default;

    const std::string &name() const { return name_; }
    // The argument of the generated function (valid once GeneratorParams are set).
    virtual Argument argument() const = 0;
    // For --list: "float32 buffer, 2-D", "float32 scalar = 1, range [0, 8]".
    virtual std::string describe() const = 0;

    // A buffer's size for `kiln-gen -s auto` and the reports when --estimate
    // gives none (docs/generators.md, "Estimates"): {min, extent} per
    // dimension, constants once the GeneratorParams are set, as in Halide.
    //
    //   processed.set_estimates({{0, 2560}, {0, 1920}, {0, 3}});   // in generate()
    void set_estimates(const BoundaryConditions::Region &estimates);
    // The extents set_estimates() gave (empty if it was not called).
    const std::vector<int> &estimates() const { return estimates_; }

protected:
    explicit GeneratorIOBase(const std::string &name) : name_(name) {}
    std::string name_;

private:
    std::vector<int> estimates_;
};

class GeneratorInputBase : public GeneratorIOBase {
protected:
    explicit GeneratorInputBase(const std::string &name);
};

class GeneratorOutputBase : public GeneratorIOBase {
public:
    // The Func that generate() defines, named after the Output.
    const Func &func() const { return func_; }
    operator Func() const { return func_; }
    FuncRef operator()(std::vector<Expr> args) const { return func_(std::move(args)); }
    template<typename... Args> FuncRef operator()(Expr a, Args &&...rest) const {
        return func_(std::vector<Expr>{a, Expr(rest)...});
    }
    // Its buffers in the signature: one, or one per element of a Tuple
    // ("<name>.0", "<name>.1", ...; in C, <name>_0, <name>_1, ...). argument()
    // is the first.
    virtual std::vector<Argument> arguments() const { return {argument()}; }
    // Define the Output as a copy of f, over Vars named as f's: the way to
    // output an adjoint, whose name ("input_adjoint") is not the Output's.
    //
    //   Derivative d = propagate_adjoints(output_fn, d_output);   // d_output: an Input buffer
    //   d_input.set(d(input));   // d_input(x, y) = input_adjoint(x, y)
    //
    // A pure f is inlined into the copy unless a schedule places it; an f
    // with update definitions (a scatter, a clamped edge) is computed at the
    // root, in the Output's buffer when its region is the buffer's (host
    // targets; docs/compiler.md, realize_into_outputs), else in its own and
    // copied.
    void set(const Func &f);

protected:
    explicit GeneratorOutputBase(const std::string &name);

private:
    Func func_{name_};
};

namespace internal {

// "float32 buffer, 2-D (type from GeneratorParam 'type')"
std::string describe_buffer(Type t, int dims, const GeneratorParam<Type> *type_param);

// What buffer Inputs and Outputs share: the element type, fixed by T or
// taken from a GeneratorParam<Type> (T = void), and the dimensions, fixed by
// Dims or given to the constructor (Dims = AnyDims).
//
//   Input<Buffer<float, 2>> input{"input"};
//   Input<Buffer<void, 2>> input{"input", type};   // element type from GeneratorParam<Type> type
//   Output<Buffer<float>> output{"output", 3};     // dimensions as a constructor argument
template<typename Base, typename T, int Dims>
class BufferMember : public Base {
public:
    explicit BufferMember(const std::string &name) : BufferMember(name, nullptr, Dims) {
        static_assert(!std::is_void<T>::value, "a Buffer<void, N> Input or Output takes its type: {\"name\", type}");
        static_assert(Dims >= 0, "a Buffer<T> Input or Output takes its dimensions: {\"name\", dims}");
    }
    BufferMember(const std::string &name, int dims) : BufferMember(name, nullptr, dims) {
        static_assert(!std::is_void<T>::value, "a Buffer<void, N> Input or Output takes its type: {\"name\", type}");
    }
    BufferMember(const std::string &name, const GeneratorParam<Type> &type, int dims = Dims)
        : BufferMember(name, &type, dims) {
        static_assert(std::is_void<T>::value, "only a Buffer<void, N> Input or Output takes its type from a GeneratorParam");
    }

    int dimensions() const { return dims_; }
    Type type() const { return type_param_ ? type_param_->value() : fixed_; }
    Argument argument() const override { return {this->name(), true, type(), dims_}; }
    std::string describe() const override { return describe_buffer(type(), dims_, type_param_); }

private:
    BufferMember(const std::string &name, const GeneratorParam<Type> *type, int dims)
        : Base(name), type_param_(type), dims_(Dims >= 0 ? Dims : dims) {
        if constexpr (!std::is_void<T>::value) fixed_ = type_of<T>();
        const char *kind = std::is_base_of<GeneratorInputBase, Base>::value ? "Input '" : "Output '";
        if (dims_ < 0 || dims_ > 8)
            throw CompileError(kind + name + "': give the number of dimensions (0 to 8), as Buffer<T, N> or as "
                                              "a constructor argument");
    }
    Type fixed_;
    const GeneratorParam<Type> *type_param_;
    int dims_;
};

}  // namespace internal

template<typename T> class Input;
template<typename T> class Output;

// A buffer input: an ImageParam named after the Input, usable as one.
template<typename T, int Dims, int Storage>
class Input<Halide::Runtime::Buffer<T, Dims, Storage>> : public internal::BufferMember<GeneratorInputBase, T, Dims> {
public:
    using internal::BufferMember<GeneratorInputBase, T, Dims>::BufferMember;

    // The ImageParam, created at first use (after the GeneratorParams are set).
    const ImageParam &param() const {
        if (!param_.defined()) param_ = ImageParam(this->type(), this->dimensions(), this->name());
        return param_;
    }
    operator ImageParam() const { return param(); }
    operator Func() const { return Func(param()); }
    Expr operator()(std::vector<Expr> args) const { return param()(std::move(args)); }
    template<typename... Args> Expr operator()(Expr a, Args &&...rest) const {
        return param()(std::vector<Expr>{a, Expr(rest)...});
    }
    Dimension dim(int d) const { return param().dim(d); }
    Expr width() const { return param().width(); }
    Expr height() const { return param().height(); }
    Expr channels() const { return param().channels(); }

private:
    mutable ImageParam param_;
};

// A scalar input: a Param<T> named after the Input, with a default value (for
// --list) and an optional range that the generated function checks on entry
// (kiln_error_param_out_of_range).
//
//   Input<float> amount{"amount", 1.0f, 0.0f, 8.0f};
template<typename T>
class Input : public GeneratorInputBase {
    static_assert(std::is_arithmetic<T>::value, "Input<T>: T must be an arithmetic type or Buffer<T, N>");

public:
    explicit Input(const std::string &name, T def = T()) : GeneratorInputBase(name), param_(name), def_(def) {
        param_.set(def);
    }
    Input(const std::string &name, T def, T min, T max) : Input(name, def) {
        if (def < min || max < def)
            throw CompileError("Input '" + name + "': the default " + internal::value_string(def) +
                               " is outside its range [" + internal::value_string(min) + ", " +
                               internal::value_string(max) + "]");
        param_.set_range(internal::const_expr(min), internal::const_expr(max));
        range_ = "[" + internal::value_string(min) + ", " + internal::value_string(max) + "]";
    }

    const Param<T> &param() const { return param_; }
    operator Expr() const { return param_; }
    Type type() const { return type_of<T>(); }

    Argument argument() const override { return {name_, false, type_of<T>(), 0}; }
    std::string describe() const override {
        return type_of<T>().to_string() + " scalar, default " + internal::value_string(def_) +
               (range_.empty() ? "" : ", range " + range_);
    }

private:
    Param<T> param_;
    T def_;
    std::string range_;
};

// A buffer output: a Func named after the Output, defined in generate() by
// `output(x, y) = ...`. Its definition must have the declared type and
// dimensions.
template<typename T, int Dims, int Storage>
class Output<Halide::Runtime::Buffer<T, Dims, Storage>> : public internal::BufferMember<GeneratorOutputBase, T, Dims> {
public:
    using internal::BufferMember<GeneratorOutputBase, T, Dims>::BufferMember;
    // The buffer the caller passes (once generate() has defined the
    // output): its fields as Exprs, and constraints the kernel checks.
    //   output.dim(0).set_bounds(0, 256);   Func(output).bound(x, 0, output.width());
    OutputImageParam output_buffer() const { return this->func().output_buffer(); }
    Dimension dim(int d) const { return output_buffer().dim(d); }
    Expr width() const { return output_buffer().width(); }
    Expr height() const { return output_buffer().height(); }
    Expr channels() const { return output_buffer().channels(); }
};

// A Func output, as in Halide: of one type, or a Tuple of several (one
// buffer per element, whose types may differ).
//
//   Output<Func> arg_max{"arg_max", {Float(32), Int(32)}, 1};   // arg_max(y) = Tuple(...)
//   Output<Func> out{"out", Float(32), 2};
template<>
class Output<Func> : public GeneratorOutputBase {
public:
    Output(const std::string &name, std::vector<Type> types, int dims);
    Output(const std::string &name, Type type, int dims) : Output(name, std::vector<Type>{type}, dims) {}

    const std::vector<Type> &types() const { return types_; }
    int dimensions() const { return dims_; }
    Argument argument() const override { return arguments()[0]; }
    std::vector<Argument> arguments() const override;
    std::string describe() const override;

private:
    std::vector<Type> types_;
    int dims_;
};

template<typename T>
class Output {
    static_assert(sizeof(T) == 0,
                  "Output<T>: outputs are buffers, Output<Buffer<T, N>> (N = 0 for a scalar), or Output<Func>");
};

// ---- Generators ----

// The base of every generator. Members register themselves, in declaration
// order, with the generator object that contains them (by address), so a
// generator must be constructed whole (GeneratorRegistry::create, or as an
// object of its class) and cannot be copied.
class GeneratorBase {
public:
    GeneratorBase(const GeneratorBase &) = delete;
    GeneratorBase &operator=(const GeneratorBase &) = delete;
    virtual ~GeneratorBase();

    // The registered name ("" if the object was not made by the registry).
    const std::string &name() const { return name_; }

    // Set a GeneratorParam from text; a CompileError names the legal values
    // or, for an unknown name, lists the generator's params. Only before
    // build_pipeline().
    void set_generator_param(const std::string &name, const std::string &value);
    // "name=value" strings, as given to kiln-gen.
    void set_generator_params(const std::vector<std::string> &assignments);

    // Run generate() (once), check the Outputs, and return them as a Pipeline
    // (handles to the same Funcs, so a schedule applied to it sticks).
    Pipeline build_pipeline();
    // What a schedule file is applied to: the pipeline's outputs and, for a
    // backward generator, the Funcs it differentiated, whose own Funcs only
    // the forward pass computes once the schedule saves (Func::save()).
    Pipeline schedulable();
    // The signature: the Inputs in declaration order, then the Outputs.
    std::vector<Argument> arguments() const;

    const std::vector<GeneratorParamBase *> &params() const { return params_; }
    const std::vector<GeneratorInputBase *> &inputs() const { return inputs_; }
    const std::vector<GeneratorOutputBase *> &outputs() const { return outputs_; }
    // The Funcs generate() gave propagate_adjoints() (a backward generator's
    // forward outputs), in call order; empty for a forward generator.
    const std::vector<Func> &differentiated() const { return differentiated_; }
    // Of those, the ones whose adjoint is an input image: Func name -> the
    // image's (its size is the Func's: the default estimate of the forward
    // output, docs/autodiff.md).
    const std::map<std::string, std::string> &adjoint_images() const { return adjoint_images_; }
    // Params, inputs and outputs, one per line (kiln-gen --list).
    std::string describe() const;

protected:
    explicit GeneratorBase(size_t object_size);
    virtual void call_generate() = 0;

private:
    friend class GeneratorRegistry;
    friend void internal::register_generator_member(GeneratorParamBase *);
    friend void internal::register_generator_member(GeneratorInputBase *);
    friend void internal::register_generator_member(GeneratorOutputBase *);
    // The live generator whose object holds `member` (a `kind` named `name`),
    // where the name must be new; else a CompileError naming the member.
    static GeneratorBase &owner_of(const void *member, const std::string &kind, const std::string &name);
    void check_new_name(const std::string &what, const std::string &name) const;
    std::string display_name() const;

    std::string name_;
    size_t object_size_;
    std::vector<GeneratorParamBase *> params_;
    std::vector<GeneratorInputBase *> inputs_;
    std::vector<GeneratorOutputBase *> outputs_;
    bool built_ = false;
    Pipeline pipeline_;
    std::vector<Func> differentiated_;
    std::map<std::string, std::string> adjoint_images_;
};

// CRTP base of a generator class T, which defines `void generate()`.
template<typename T>
class Generator : public GeneratorBase {
protected:
    Generator() : GeneratorBase(sizeof(T)) {}
    void call_generate() override { static_cast<T *>(this)->generate(); }
};

// Every generator linked into the program, by name.
class GeneratorRegistry {
public:
    using Factory = std::function<std::unique_ptr<GeneratorBase>()>;
    // A CompileError if the name is taken.
    static void register_factory(const std::string &name, Factory factory);
    // A CompileError listing the registered names if there is none by this name.
    static std::unique_ptr<GeneratorBase> create(const std::string &name);
    static std::vector<std::string> list();  // sorted
};

// What kiln-gen writes into DIR for a generator, one file per emit kind:
//   h         FUNCTION.h      extern "C" prototypes (includes HalideRuntime.h)
//   cpp       FUNCTION.cpp    the kernel (Pipeline::compile_to_cpp_source)
//   stmt      FUNCTION.stmt   the lowered loop nest
//   schedule  FUNCTION.sched  the schedule applied, as .sched text
//   flags     FUNCTION.flags  the compiler flags FUNCTION.cpp needs (a response file: c++ @FUNCTION.flags)
struct GeneratorCompileOptions {
    std::string output_dir = ".";
    std::string function_name;  // "" = the generator's name
    std::string schedule_file;  // "" = the default schedule (every Func inlined); "auto" = autoschedule()
    Target target = Target::host();
    std::vector<std::string> emit = {"h", "cpp"};
    // Buffer sizes for the report and stmt_html ("name" -> extents); outputs
    // not given default to 1024 in every dimension, inputs to the outputs' size.
    std::map<std::string, std::vector<int>> estimates;
    // A backward generator whose schedule saves forward Funcs (save()): the
    // most bytes its residuals may take at the estimates; 0 = no limit.
    int64_t residual_budget = 0;
    // -s auto for a backward generator: the lower-precision copy of a float
    // Func the search may save instead of the whole Func (Residual::Float16
    // or BFloat16; kiln-gen --narrow-residuals), where it is predicted
    // cheaper; None: bits or whole only (choose_saves' `narrow`).
    Residual narrow_residuals = Residual::None;
    // -s auto: how many schedules the search may evaluate, so that the
    // build's output does not depend on the machine's load
    // (AutoscheduleOptions::reproducible); 0 = its default,
    // AutoscheduleOptions::generator_max_states.
    int autoschedule_max_states = 0;
    // -s auto --autotune N: run the N best candidates and keep the fastest
    // (AutoscheduleOptions::autotune; the build then depends on timing).
    int autotune = 0;
};
const std::vector<std::string> &generator_emit_kinds();
// Apply the schedule and write the files; CompileError on misuse.
void compile_generator(GeneratorBase &g, const GeneratorCompileOptions &options);
// The flags a compiler needs for an emitted kernel of target t (besides -std=c++17 or later),
// plus $KILN_KERNEL_FLAGS when set (e.g. sanitizers: scripts/sanitize.sh).
std::string kernel_compiler_flags(const Target &t);
// What a kernel of target t links after its source: the NPU simulator library for "npu".
std::string kernel_link_flags(const Target &t);

namespace internal {
struct RegisterGenerator {
    RegisterGenerator(const char *name, GeneratorRegistry::Factory factory) {
        GeneratorRegistry::register_factory(name, std::move(factory));
    }
};
}  // namespace internal

}  // namespace kiln

// Register generator class CLASS under NAME (an identifier) at static
// initialization time.
#define KILN_REGISTER_GENERATOR(CLASS, NAME)                                                          \
    namespace {                                                                                        \
    const ::kiln::internal::RegisterGenerator kiln_register_generator_##NAME(                          \
        #NAME, [] { return std::unique_ptr<::kiln::GeneratorBase>(new CLASS()); });                   \
    }
