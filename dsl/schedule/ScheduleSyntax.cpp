// Tokens, argument expressions and name suggestions of .sched files (see
// ScheduleSyntax.h). Argument grammar, usual precedence, left associative:
//
//   arg     := sum
//   sum     := product (('+' | '-') product)*         sum(0)
//   product := unary (('*' | '/') unary)*             sum(1)
//   unary   := '-' unary | INT | '(' sum ')' | natural_vector_size ['(' TYPE ')'] | IDENT ('.' IDENT)*
//
// Names may not take part in arithmetic: `x*2` is an error at `x`.
#include "ScheduleSyntax.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "kiln/Error.h"

namespace kiln {
namespace internal {
namespace sched {

namespace {

bool ident_start(char c) { return std::isalpha((unsigned char)c) || c == '_'; }
bool ident_char(char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '$'; }  // blur$1: a renamed Func

const char *const kTypes[] = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                              "float16", "bfloat16", "float32", "float64"};

Type type_named(const std::string &n) {
    TypeCode code = n[0] == 'b'   ? TypeCode::BFloat
                    : n[0] == 'f' ? TypeCode::Float
                    : n[0] == 'u' ? TypeCode::UInt
                                  : TypeCode::Int;
    size_t digits = n.find_first_of("0123456789");
    return Type(code, std::stoi(n.substr(digits)));
}

const int64_t kMaxInt = std::numeric_limits<int32_t>::max();

class ArgParser {
public:
    ArgParser(const std::vector<Token> &t, size_t &p, const std::string &f, const std::string &w)
        : toks(t), pos(p), file(f), what(w) {}

    Arg parse() {
        size_t start = pos;
        Arg a = sum();
        for (size_t i = start; i < pos; i++) a.text += toks[i].text;
        return a;
    }

private:
    const std::vector<Token> &toks;
    size_t &pos;
    const std::string &file, &what;

    const Token &peek() const { return toks[pos]; }
    bool at(const char *punct) const { return peek().kind == Token::Punct && peek().text == punct; }

    Arg binary(Arg::Kind k, Arg lhs, Arg rhs, const Token &op) {
        for (const Arg *a : {&lhs, &rhs}) {
            if (a->is_name())
                error_at(file, a->line, a->col,
                         "'" + a->name + "' is a name and cannot be used in arithmetic ('" + op.text +
                             "'); only integers and natural_vector_size can");
        }
        Arg r;
        r.kind = k;
        r.line = lhs.line;
        r.col = lhs.col;
        r.operands = {std::move(lhs), std::move(rhs)};
        return r;
    }

    // Level 0: '+' and '-' over level 1; level 1: '*' and '/' over unary().
    Arg sum(int level = 0) {
        static const char *const ops[2][2] = {{"+", "-"}, {"*", "/"}};
        static const Arg::Kind kinds[2][2] = {{Arg::Add, Arg::Sub}, {Arg::Mul, Arg::Div}};
        auto operand = [&] { return level == 0 ? sum(1) : unary(); };
        Arg a = operand();
        while (at(ops[level][0]) || at(ops[level][1])) {
            Token op = toks[pos++];
            Arg rhs = operand();
            a = binary(kinds[level][op.text == ops[level][0] ? 0 : 1], std::move(a), std::move(rhs), op);
        }
        return a;
    }

    void expect(const char *punct, const std::string &context) {
        if (!at(punct)) error_at(file, peek().line, peek().col,
                                 std::string("expected '") + punct + "' " + context + ", found " + describe(peek()));
        pos++;
    }

    Arg unary() {
        const Token &t = peek();
        Arg a;
        a.line = t.line;
        a.col = t.col;
        if (at("-")) {
            pos++;
            Arg x = unary();
            if (x.is_name())
                error_at(file, x.line, x.col, "'" + x.name + "' is a name and cannot be negated; only integers can");
            a.kind = Arg::Neg;
            a.operands = {std::move(x)};
        } else if (at("(")) {
            pos++;
            a = sum();
            expect(")", "to close the '(' of " + what);
            a.line = t.line;
            a.col = t.col;
        } else if (t.kind == Token::Int) {
            pos++;
            a.kind = Arg::Int;
            a.value = 0;
            for (char c : t.text) {
                a.value = a.value * 10 + (c - '0');
                if (a.value > kMaxInt) error_at(file, t.line, t.col, "integer " + t.text + " is too large");
            }
        } else if (t.kind == Token::Ident && t.text == "natural_vector_size") {
            pos++;
            a.kind = Arg::VectorSize;
            if (at("(")) {
                pos++;
                const Token &ty = peek();
                bool known = ty.kind == Token::Ident &&
                             std::find(std::begin(kTypes), std::end(kTypes), ty.text) != std::end(kTypes);
                if (!known)
                    error_at(file, ty.line, ty.col,
                             "expected a type in natural_vector_size(...) (one of " +
                                 join(std::vector<std::string>(std::begin(kTypes), std::end(kTypes))) + "), found " +
                                 describe(ty));
                a.name = ty.text;
                pos++;
                expect(")", "after the type of natural_vector_size");
            }
        } else if (t.kind == Token::Ident) {
            pos++;
            a.kind = Arg::Name;
            a.name = t.text;
            while (at(".")) {
                pos++;
                if (peek().kind != Token::Ident)
                    error_at(file, peek().line, peek().col,
                             "expected a name after '" + a.name + ".', found " + describe(peek()));
                a.name += "." + toks[pos++].text;
            }
            // A stage of a Func: "f.update(N)" (compute_with's parent).
            const std::string upd = ".update";
            if (at("(") && a.name.size() > upd.size() &&
                a.name.compare(a.name.size() - upd.size(), upd.size(), upd) == 0) {
                pos++;
                const Token &n = peek();
                if (n.kind != Token::Int || n.text.size() > 9)
                    error_at(file, n.line, n.col, "expected the update index (an integer) after '" + a.name + "(', found " +
                                                      describe(n));
                pos++;
                expect(")", "after '" + a.name + "(" + n.text + "'");
                a.name.resize(a.name.size() - upd.size());
                a.stage = std::stoi(n.text) + 1;
            }
        } else {
            error_at(file, t.line, t.col, "expected " + what + " (a name or an integer), found " + describe(t));
        }
        return a;
    }
};

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Errors are reported at `whole`, the argument as written: inner positions
// refer to its text without spaces.
int64_t eval(const Arg &a, const Arg &whole, const Target &t, Type ft, const std::string &file) {
    auto fail = [&](const std::string &m) { error_at(file, whole.line, whole.col, m); };
    auto operand = [&](int i) { return eval(a.operands[i], whole, t, ft, file); };
    int64_t v = 0;
    switch (a.kind) {
    case Arg::Name: fail("'" + a.name + "' is a name where an integer is expected");
    case Arg::Int: v = a.value; break;
    case Arg::VectorSize: v = t.natural_vector_size(a.name.empty() ? ft : type_named(a.name)); break;
    case Arg::Neg: v = -operand(0); break;
    case Arg::Add: v = operand(0) + operand(1); break;
    case Arg::Sub: v = operand(0) - operand(1); break;
    case Arg::Mul: v = operand(0) * operand(1); break;
    case Arg::Div: {
        int64_t d = operand(1);
        if (d == 0) fail("division by zero in " + whole.text);
        v = floor_div(operand(0), d);
        break;
    }
    }
    if (v > kMaxInt || v < -kMaxInt) fail("the value of " + whole.text + " is out of range");
    return v;
}

size_t edit_distance(const std::string &a, const std::string &b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++) row[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); j++) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

}  // namespace

void error_at(const std::string &file, int line, int col, const std::string &message) {
    throw CompileError(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + message);
}

std::vector<Token> lex(const std::string &s, const std::string &file, int line, int col) {
    std::vector<Token> toks;
    bool first = true;
    size_t i = 0;
    auto advance = [&](size_t n) {
        i += n;
        col += (int)n;
    };
    while (i < s.size()) {
        char c = s[i];
        if (c == '\n') {
            i++;
            line++;
            col = 1;
            first = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            advance(1);
            continue;
        }
        if (c == '#') {
            while (i < s.size() && s[i] != '\n') advance(1);
            continue;
        }
        Token t;
        t.line = line;
        t.col = col;
        t.first_on_line = first;
        first = false;
        size_t n = 1;
        if (ident_start(c)) {
            t.kind = Token::Ident;
            while (i + n < s.size() && ident_char(s[i + n])) n++;
        } else if (std::isdigit((unsigned char)c)) {
            t.kind = Token::Int;
            while (i + n < s.size() && std::isdigit((unsigned char)s[i + n])) n++;
        } else if (std::string("(),:.+-*/[]").find(c) != std::string::npos) {
            t.kind = Token::Punct;
        } else if (i + 1 < s.size() && (s.compare(i, 2, ">=") == 0 || s.compare(i, 2, "<=") == 0 ||
                                        s.compare(i, 2, "==") == 0 || s.compare(i, 2, "!=") == 0 ||
                                        s.compare(i, 2, "&&") == 0)) {
            t.kind = Token::Punct;  // the comparisons of specialize(...)
            n = 2;
        } else if (c == '<' || c == '>') {
            t.kind = Token::Punct;
        } else {
            std::string shown = std::isprint((unsigned char)c) ? std::string("'") + c + "'"
                                                               : "byte " + std::to_string((unsigned char)c);
            error_at(file, line, col, "unexpected character " + shown +
                                          "; a .sched file has stanzas 'FUNC: directive(arg, ...) ...' and # comments");
        }
        t.text = s.substr(i, n);
        advance(n);
        toks.push_back(t);
    }
    Token end;
    end.kind = Token::End;
    end.text = "end of file";
    end.line = line;
    end.col = col;
    end.first_on_line = true;
    toks.push_back(end);
    return toks;
}

std::string describe(const Token &t) { return t.kind == Token::End ? t.text : "'" + t.text + "'"; }

Arg parse_arg(const std::vector<Token> &toks, size_t &pos, const std::string &file, const std::string &what) {
    return ArgParser(toks, pos, file, what).parse();
}

Arg parse_arg_text(const std::string &text, const std::string &file, int line, int col) {
    std::vector<Token> toks = lex(text, file, line, col);
    size_t pos = 0;
    Arg a = parse_arg(toks, pos, file, "an argument");
    if (toks[pos].kind != Token::End)
        error_at(file, toks[pos].line, toks[pos].col, "unexpected " + describe(toks[pos]) + " after an argument");
    return a;
}

int evaluate(const Arg &a, const Target &t, Type func_type, const std::string &file) {
    return (int)eval(a, a, t, func_type, file);
}

std::string nearest(const std::string &name, const std::vector<std::string> &candidates) {
    std::string best;
    size_t best_d = std::numeric_limits<size_t>::max();
    for (const auto &c : candidates) {
        size_t d = edit_distance(name, c);
        if (d < best_d) best_d = d, best = c;
    }
    // Plausible typo: at most about a third of the characters differ.
    if (best.empty() || best_d == 0 || best_d * 3 > std::max(name.size(), best.size()) + 1) return "";
    return best;
}

}  // namespace sched
}  // namespace internal
}  // namespace kiln
