namespace {
using namespace kiln::npu;

// A bound GM buffer with its halide_buffer_t fields.
struct kiln_gm {
    GlobalTensor t;
    int32_t min[4] = {0, 0, 0, 0}, extent[4] = {1, 1, 1, 1}, stride[4] = {1, 0, 0, 0};  // dimensions 0..3
};

kiln_gm kiln_bind(Device &dev, const char *name, const halide_buffer_t *b, DType type) {
    kiln_gm g;
    uint64_t elems = 1;
    for (int d = 0; d < b->dimensions && d < 4; d++) {
        g.min[d] = b->dim[d].min;
        g.extent[d] = b->dim[d].extent;
        g.stride[d] = b->dim[d].stride;
        elems += (uint64_t)(b->dim[d].extent > 0 ? b->dim[d].extent - 1 : 0) * b->dim[d].stride;
    }
    g.t = dev.bind(name, type, b->host, elems);
    return g;
}

// Kiln's integer division and modulo (Euclidean; x / 0 == 0), min and max.
inline int32_t kiln_npu_div(int32_t a, int32_t b) {
    if (b == 0) return 0;
    int32_t q = a / b, r = a % b;
    return r < 0 ? (b > 0 ? q - 1 : q + 1) : q;
}
inline int32_t kiln_npu_mod(int32_t a, int32_t b) { return b == 0 ? 0 : a - kiln_npu_div(a, b) * b; }
template <typename T> inline T kiln_npu_min(T a, T b) { return a < b ? a : b; }
template <typename T> inline T kiln_npu_max(T a, T b) { return a > b ? a : b; }

// A tile of UB (or of `mem`) whose instructions touch its top-left valid_rows x valid_cols.
inline Tile kiln_tile(Core &core, Mem mem, uint32_t addr, uint32_t rows, uint32_t cols, uint32_t valid_rows,
                      uint32_t valid_cols, const char *name, DType type = DType::F32) {
    Tile t = core.tile(mem, addr, type, rows, cols, name);
    t.set_valid(valid_rows, valid_cols);
    return t;
}
inline Tile kiln_tile(Core &core, uint32_t addr, uint32_t rows, uint32_t cols, uint32_t valid_rows,
                      uint32_t valid_cols, const char *name, DType type = DType::F32) {
    return kiln_tile(core, Mem::UB, addr, rows, cols, valid_rows, valid_cols, name, type);
}

std::string kiln_last_report;

// Thrown by the kernel's run-time checks (after kiln_error), returned by the stub.
struct kiln_npu_check_failed {
    int code;
};
