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
//
// algorithm=online (GeneratorParam; key_block B, default 32) is that
// algorithm. Each block kb of B keys has its own statistics, taken against
// its own maximum, and a Tuple update over the blocks merges them into the
// running state of each query row, rescaling what it has so far when the
// maximum grows (α = 1/√d):
//
//   block_max(kb, i)     = max over the block's keys j of scores(j, i)
//   probs(j, i)          = exp((scores(j, i) - block_max(j / B, i)) · α)
//   block_sum(kb, i)     = Σ_j probs(j, i)
//   block_pv(c, kb, i)   = Σ_j probs(j, i) · V(c, j)
//   state(c, i) = (m, l, acc), from (lowest, 0, 0), for each block kb in order:
//     m' = max(m, block_max),  a = exp((m - m')·α),  b = exp((block_max - m')·α)
//     l' = l·a + block_sum·b,  acc' = acc·a + block_pv·b
//   output(c, i)         = acc / l
//
// (m and l do not depend on c; each c keeps its own copy, which costs d
// times the few flops of the merge and keeps the state one Tuple.) The last
// block may be partial: its missing keys count as -inf (max), 0 (sums).
//
// algorithm=online_planes is the same algorithm, the same arithmetic in the
// same order, with the key block as the last dimension of every per-block
// Func: scores(jj, i, kb) (key kb·B + jj), block_max(i, kb), probs(jj, i,
// kb), block_sum(i, kb), block_pv(c, i, kb). Computed at the state's loop
// over blocks, each holds one block: a tile of the query rows, or a column
// of them, which is what the NPU computes (schedules/attention/
// online_planes/npu.sched, docs/npu.md "Flash attention"; there seq must
// be a multiple of key_block).
//
// attention_grad: the backward pipeline of two_pass. Given the adjoint of
// the output (d_output), it computes d_query, d_key and d_value by Kiln's
// reverse-mode autodiff (docs/autodiff.md) of the same algorithm:
// output_adjoint (d_output), weighted_adjoint and row_sum_adjoint (from the
// division), probs_adjoint (from P V and the row sum), scores_adjoint
// (through exp, plus the row maximum's share, sent to the maximum's
// position through the argmax helper row_max_1_argmax; zero up to
// rounding, as in softmax_grad), key_t_adjoint, and the sums Q_adjoint,
// K_adjoint (the transpose of key_t_adjoint), V_adjoint. The online
// algorithm's Tuple update is not differentiable.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

#include <limits>

using namespace kiln;

namespace {

// The Inputs both generators share, and the two-pass algorithm.
template<typename T>
class AttentionBase : public Generator<T> {
public:
    Input<Buffer<float, 2>> Q{"Q"};  // (d, seq)
    Input<Buffer<float, 2>> K{"K"};
    Input<Buffer<float, 2>> V{"V"};

protected:
    Var c{"c"}, i{"i"}, j{"j"}, r{"r"};

    // S = Q Kᵀ over the d features, through the transpose key_t.
    Func define_scores(Expr d) {
        RDom rd(0, d, "rd");
        Func key_t("key_t"), scores("scores");
        key_t(j, r) = K(r, j);
        scores(j, i) = 0.0f;
        scores(j, i) += Q(rd, i) * key_t(j, rd);
        return scores;
    }
    // output = softmax(scores / √d) V, the whole row of scores at a time.
    void two_pass(Func scores, Expr keys, Expr d, Func output) {
        RDom rk(0, keys, "rk");
        Func row_max("row_max"), probs("probs"), row_sum("row_sum"), weighted("weighted");
        row_max(i) = std::numeric_limits<float>::lowest();
        row_max(i) = max(row_max(i), scores(rk, i));
        Expr inv_sqrt_d = 1.0f / sqrt(cast<float>(d));
        // The maximum only keeps exp in range: no gradient flows through it
        // (it would be zero up to rounding, at the cost of an argmax per row).
        probs(j, i) = exp((scores(j, i) - stop_gradient(row_max(i))) * inv_sqrt_d);
        row_sum(i) = 0.0f;
        row_sum(i) += probs(rk, i);
        weighted(c, i) = 0.0f;
        weighted(c, i) += probs(rk, i) * V(c, rk);
        output(c, i) = weighted(c, i) / row_sum(i);
    }
};

class Attention : public AttentionBase<Attention> {
public:
    enum class Algorithm { TwoPass, Online, OnlinePlanes };
    GeneratorParam<Algorithm> algorithm{"algorithm",
                                        Algorithm::TwoPass,
                                        {{"two_pass", Algorithm::TwoPass},
                                         {"online", Algorithm::Online},
                                         {"online_planes", Algorithm::OnlinePlanes}}};
    GeneratorParam<int> key_block{"key_block", 32, 1, 4096};  // B, keys per block (algorithm=online)
    // d and seq fixed at compile time when > 0 (the NPU's TMATMUL has a constant shape); 0: the buffers'.
    GeneratorParam<int> dim{"dim", 0, 0, 1 << 16};
    GeneratorParam<int> seq{"seq", 0, 0, 1 << 20};
    Output<Buffer<float, 2>> output{"output"};  // (d, seq of queries)

    void generate() {
        Expr d = dim > 0 ? Expr((int)dim) : Q.dim(0).extent(), keys = seq > 0 ? Expr((int)seq) : K.dim(1).extent();
        if (algorithm.value() == Algorithm::OnlinePlanes) return online_planes(keys, d);
        Func scores = define_scores(d);
        if (algorithm.value() == Algorithm::Online) return online(scores, keys, d);
        two_pass(scores, keys, d, output);
    }

private:
    void online(Func scores, Expr keys, Expr d) {
        Var kb("kb");
        const int B = (int)key_block;
        Expr blocks = (keys + (B - 1)) / B;
        RDom rj(0, B, "rj"), rb(0, blocks, "rb");
        Expr key = kb * B + rj, inside = key < keys, clamped = min(key, keys - 1);
        Expr lowest = std::numeric_limits<float>::lowest(), alpha = 1.0f / sqrt(cast<float>(d));
        Func block_max("block_max"), probs("probs"), block_sum("block_sum"), block_pv("block_pv"), state("state");
        block_max(kb, i) = lowest;
        block_max(kb, i) = max(block_max(kb, i), select(inside, scores(clamped, i), lowest));
        probs(j, i) = exp((scores(j, i) - block_max(j / B, i)) * alpha);
        block_sum(kb, i) = 0.0f;
        block_sum(kb, i) += select(inside, probs(clamped, i), 0.0f);
        block_pv(c, kb, i) = 0.0f;
        block_pv(c, kb, i) += select(inside, probs(clamped, i) * V(c, clamped), 0.0f);
        state(c, i) = Tuple(lowest, 0.0f, 0.0f);
        Expr m = state(c, i)[0], l = state(c, i)[1], acc = state(c, i)[2], bm = block_max(rb, i);
        Expr m2 = max(m, bm), a = exp((m - m2) * alpha), b = exp((bm - m2) * alpha);
        state(c, i) = Tuple(m2, l * a + block_sum(rb, i) * b, acc * a + block_pv(c, rb, i) * b);
        output(c, i) = state(c, i)[2] / state(c, i)[1];
    }

    // The online algorithm with the key block kb as the last (outermost)
    // dimension of every per-block Func: scores(jj, i, kb) is key kb·B + jj,
    // the block's statistics are block_max(i, kb) and block_sum(i, kb), one
    // value per query row, and block_pv(c, i, kb). At one block a per-block
    // Func is a tile of the query rows (or a column of them), which the NPU
    // computes per iteration of the state's block loop. The arithmetic, and
    // its order, is online's. With seq a multiple of B (seq= given) every
    // block is whole and no key is masked.
    void online_planes(Expr keys, Expr d) {
        Var kb("kb"), jj("jj");
        const int B = (int)key_block;
        const bool whole = seq > 0 && seq % B == 0;
        Expr blocks = (keys + (B - 1)) / B;
        RDom rd(0, d, "rd"), rj(0, B, "rj"), rb(0, blocks, "rb");
        Expr lowest = std::numeric_limits<float>::lowest(), alpha = 1.0f / sqrt(cast<float>(d));
        // Key kb·B + jj, clamped to the last key when the last block is partial; `inside` masks the
        // reductions over the block's keys rj.
        Expr key = kb * B + jj, key_r = kb * B + rj, inside = key_r < keys;
        if (!whole) key = min(key, keys - 1);
        Expr key_rc = whole ? key_r : min(key_r, keys - 1);
        auto masked = [&](Expr e, Expr none) { return whole ? e : select(inside, e, none); };
        Func key_t("key_t"), scores("scores"), block_max("block_max"), probs("probs"), block_sum("block_sum"),
            block_pv("block_pv"), state("state");
        key_t(j, r) = K(r, j);
        scores(jj, i, kb) = 0.0f;
        scores(jj, i, kb) += Q(rd, i) * key_t(key, rd);
        block_max(i, kb) = lowest;
        block_max(i, kb) = max(block_max(i, kb), masked(scores(rj, i, kb), lowest));
        probs(jj, i, kb) = exp((scores(jj, i, kb) - block_max(i, kb)) * alpha);
        block_sum(i, kb) = 0.0f;
        block_sum(i, kb) += masked(probs(rj, i, kb), 0.0f);
        block_pv(c, i, kb) = 0.0f;
        block_pv(c, i, kb) += masked(probs(rj, i, kb) * V(c, key_rc), 0.0f);
        state(c, i) = Tuple(lowest, 0.0f, 0.0f);
        Expr m = state(c, i)[0], l = state(c, i)[1], acc = state(c, i)[2], bm = block_max(i, rb);
        Expr m2 = max(m, bm), a = exp((m - m2) * alpha), b = exp((bm - m2) * alpha);
        state(c, i) = Tuple(m2, l * a + block_sum(i, rb) * b, acc * a + block_pv(c, i, rb) * b);
        output(c, i) = state(c, i)[2] / state(c, i)[1];
    }
};

class AttentionGrad : public AttentionBase<AttentionGrad> {
public:
    Input<Buffer<float, 2>> d_output{"d_output"};  // (d, seq of queries)
    Output<Buffer<float, 2>> d_query{"d_query"};   // shaped like Q, K, V
    Output<Buffer<float, 2>> d_key{"d_key"};
    Output<Buffer<float, 2>> d_value{"d_value"};

    void generate() {
        Func output("output");
        Expr d = Q.dim(0).extent();
        two_pass(define_scores(d), K.dim(1).extent(), d, output);
        Derivative dv = propagate_adjoints(output, d_output);
        d_query.set(dv(Q));
        d_key.set(dv(K));
        d_value.set(dv(V));
    }
};

}  // namespace

KILN_REGISTER_GENERATOR(Attention, attention)
KILN_REGISTER_GENERATOR(AttentionGrad, attention_grad)
