// The OpenCV anchor (anchors.h) and the thread count of every anchor library.
#include <omp.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "anchors.h"

extern "C" void openblas_set_num_threads(int);

namespace kiln_bench {

void set_anchor_threads(int threads) {
    cv::setNumThreads(threads);
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);  // oneDNN (built with OpenMP) and the epilogue pass
}

void opencv_box3x3(int w, int h, const float *in, float *out) {
    const cv::Mat src(h, w, CV_32F, const_cast<float *>(in));
    cv::Mat dst(h, w, CV_32F, out);
    cv::blur(src, dst, cv::Size(3, 3), cv::Point(-1, -1), cv::BORDER_REPLICATE);
}

}  // namespace kiln_bench
