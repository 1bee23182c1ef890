#ifndef ROCBLAS_VERSION_H_
#define ROCBLAS_VERSION_H_
// clang-format off
#define ROCBLAS_VERSION_MAJOR 4
#define ROCBLAS_VERSION_MINOR 3
#define ROCBLAS_VERSION_PATCH 0
#define ROCBLAS_VERSION_TWEAK 1f1a5b4e
// clang-format on
#endif
