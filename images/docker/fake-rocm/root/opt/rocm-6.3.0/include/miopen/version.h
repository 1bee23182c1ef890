#ifndef MIOPEN_VERSION_H_
#define MIOPEN_VERSION_H_
// clang-format off
#define MIOPEN_VERSION_MAJOR 3
#define MIOPEN_VERSION_MINOR 3
#define MIOPEN_VERSION_PATCH 0
#define MIOPEN_VERSION_TWEAK 4d4ff7b2d
// clang-format on
#endif
