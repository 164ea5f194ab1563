// Attention's two-pass algorithm (as generators/attention.cpp, without the
// 1/sqrt(d) scale) for several tiers' tests: Q, K (d x keys) and V (features
// x keys) inputs; scores = Q Kᵀ through the transpose key_t, a row maximum,
// exp, a row sum and P V. `d` and `keys` are the RDoms' extents.
#pragma once
#include "kiln/kiln.h"

struct AttentionFixture {
    kiln::ImageParam Q{kiln::Float(32), 2, "Q"}, K{kiln::Float(32), 2, "K"}, V{kiln::Float(32), 2, "V"};
    kiln::Var c{"c"}, i{"i"}, j{"j"}, r{"r"};
    kiln::Func key_t{"key_t"}, scores{"scores"}, row_max{"row_max"}, probs{"probs"}, row_sum{"row_sum"},
        weighted{"weighted"}, out{"out"};

    AttentionFixture(int d, int keys) {
        using namespace kiln;
        RDom rd(0, d, "rd"), rk(0, keys, "rk");
        key_t(j, r) = K(r, j);
        scores(j, i) = 0.0f;
        scores(j, i) += Q(rd, i) * key_t(j, rd);
        row_max(i) = -1e30f;
        row_max(i) = max(row_max(i), scores(rk, i));
        probs(j, i) = exp(scores(j, i) - row_max(i));
        row_sum(i) = 0.0f;
        row_sum(i) += probs(rk, i);
        weighted(c, i) = 0.0f;
        weighted(c, i) += probs(rk, i) * V(c, rk);
        out(c, i) = weighted(c, i) / row_sum(i);
    }
};
