#ifndef HIPBLAS_VERSION_H_
#define HIPBLAS_VERSION_H_
// clang-format off
#define hipblasVersionMajor 2
#define hipblaseVersionMinor 3
#define hipblasVersionMinor 3
#define hipblasVersionPatch 0
#define hipblasVersionTweak 8ed0e3a2
// clang-format on
#endif
