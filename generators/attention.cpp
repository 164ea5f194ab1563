// attention: scaled dot-product attention O = softmax(Q Kᵀ / √d) V for one
// head, float32. Q, K and V are (d, seq): dimension 0 is the d features of
// one token, dimension 1 the token.
//
//   key_t(j, r)     = K(r, j)                               K transposed: (seq, d)
//   scores(j, i)    = Σ_r Q(r, i) · key_t(j, r)             S = Q Kᵀ, one row i per query
//   row_max(i)      = max_j scores(j, i)
//   probs(j, i)     = exp((scores(j, i) - row_max(i)) / √d)  P, unnormalized
//   row_sum(i)      = Σ_j probs(j, i)
//   weighted(c, i)  = Σ_j probs(j, i) · V(c, j)             P V
//   output(c, i)    = weighted(c, i) / row_sum(i)
//
// The softmax is the numerically stable one (the row's maximum subtracted
// before exp; subtracting it before the 1/√d scale is the same since
// 1/√d > 0). Dividing by the row sum after P V instead of normalizing P
// moves d divisions per row instead of seq.
//
// key_t is a stage of its own so that a schedule can materialize the
// transpose: scores then reads key_t with j innermost (contiguous vectors
// over keys, like B in a matmul) instead of gathering K with a stride of d.
//
// This algorithm needs the whole row of S before any of P (the max), so a
// schedule can fuse per block of query rows (S and P exist only for the
// block) but not per block of keys: a key-blocked ("flash") schedule needs
// the online softmax, whose running max and rescaled running sum are a
// different algorithm (see docs/fusion.md).
#include <kiln/Generator.h>
#include <kiln/kiln.h>

#include <limits>

using namespace kiln;

class Attention : public Generator<Attention> {
public:
    Input<Buffer<float, 2>> Q{"Q"};  // (d, seq)
    Input<Buffer<float, 2>> K{"K"};
    Input<Buffer<float, 2>> V{"V"};
    Output<Buffer<float, 2>> output{"output"};  // (d, seq of queries)

    void generate() {
        Var c("c"), i("i"), j("j"), r("r");
        Expr d = Q.dim(0).extent(), keys = K.dim(1).extent();
        RDom rd(0, d, "rd"), rk(0, keys, "rk");
        Func key_t("key_t"), scores("scores"), row_max("row_max"), probs("probs"), row_sum("row_sum"),
            weighted("weighted");
        key_t(j, r) = K(r, j);
        scores(j, i) = 0.0f;
        scores(j, i) += Q(rd, i) * key_t(j, rd);
        row_max(i) = std::numeric_limits<float>::lowest();
        row_max(i) = max(row_max(i), scores(rk, i));
        Expr inv_sqrt_d = 1.0f / sqrt(cast<float>(d));
        probs(j, i) = exp((scores(j, i) - row_max(i)) * inv_sqrt_d);
        row_sum(i) = 0.0f;
        row_sum(i) += probs(rk, i);
        weighted(c, i) = 0.0f;
        weighted(c, i) += probs(rk, i) * V(c, rk);
        output(c, i) = weighted(c, i) / row_sum(i);
    }
};

KILN_REGISTER_GENERATOR(Attention, attention)
