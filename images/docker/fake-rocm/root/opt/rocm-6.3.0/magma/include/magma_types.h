/* Fake MAGMA header: built from master in rocm/pytorch images. */
#ifndef MAGMA_TYPES_H
#define MAGMA_TYPES_H
#define MAGMA_VERSION_MAJOR 2
#define MAGMA_VERSION_MINOR 9
#define MAGMA_VERSION_MICRO 0
// stage is "svn", "beta#", "rc#" (release candidate), or blank ("") for final release
#define MAGMA_VERSION_STAGE "svn"
#endif
