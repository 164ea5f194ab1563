// The lexical pieces shared by the .sched parser and ScheduleFile::apply():
// tokens, directive arguments and their evaluation, and nearest-name hints.
//
// An argument is a name (`x`, `r.x`, a Func, `root`, a TailStrategy — which
// of these depends on the slot it fills) or an integer expression:
//
//   8    natural_vector_size    natural_vector_size(uint8)    natural_vector_size*2    (64 - 8) / 2
//
// The parser keeps each argument as its tokens written without spaces
// ("natural_vector_size*2"); apply() lexes that text again and evaluates it
// for the Func's type and the target, so both read arguments the same way.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/Target.h"
#include "ir/Util.h"
#include "kiln/Type.h"

namespace kiln {
namespace internal {
namespace sched {

struct Token {
    enum Kind { Ident, Int, Punct, End };
    Kind kind = End;
    std::string text;  // "end of file" for End
    int line = 0, col = 0;
    bool first_on_line = false;
};

// Throws CompileError "file:line:col: message".
[[noreturn]] void error_at(const std::string &file, int line, int col, const std::string &message);

// `# comments` and whitespace (newlines included) are dropped; the result
// always ends with an End token. Unknown characters are CompileErrors.
std::vector<Token> lex(const std::string &text, const std::string &file, int line = 1, int col = 1);

// "'x'" for a token, or "end of file".
std::string describe(const Token &t);

struct Arg {
    enum Kind { Name, Int, VectorSize, Neg, Add, Sub, Mul, Div };
    Kind kind = Name;
    std::string name;  // Name: the dotted name; VectorSize: the type written, "" = the Func's type
    int stage = 0;     // Name written "f.update(N)": N + 1, and name is "f"; else 0
    int64_t value = 0;  // Int
    std::vector<Arg> operands;  // Neg: 1, Add..Div: 2
    std::string text;  // the tokens as written, without spaces
    int line = 0, col = 0;
    bool is_name() const { return kind == Name; }
};

// Parses one argument starting at toks[pos] and advances pos past it.
// `what` names the argument for messages ("argument 2 of split").
Arg parse_arg(const std::vector<Token> &toks, size_t &pos, const std::string &file, const std::string &what);

// Parses an argument kept as text by the parser (see above).
Arg parse_arg_text(const std::string &text, const std::string &file, int line, int col);

// The value of an integer argument; natural_vector_size without a type is
// that of `func_type`.
int evaluate(const Arg &a, const Target &t, Type func_type, const std::string &file);

// The candidate closest to `name` by edit distance, or "" if none is close
// enough to be a plausible typo.
std::string nearest(const std::string &name, const std::vector<std::string> &candidates);

}  // namespace sched
}  // namespace internal
}  // namespace kiln
