// Fake ROCm fixture for valorch inventory tests (macro layout of rocm-core 6.3).
#ifndef ROCM_VERSION_H
#define ROCM_VERSION_H
#define ROCM_VERSION_MAJOR   6
#define ROCM_VERSION_MINOR   3
#define ROCM_VERSION_PATCH   0
#define ROCM_BUILD_INFO "6.3.0.0-39-"
#endif
