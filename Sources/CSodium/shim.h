#ifndef CSODIUM_SHIM_H
#define CSODIUM_SHIM_H
// libsodium's C API, as installed by Debian's libsodium-dev. Only the `Sodium` Swift module
// imports this.
#include <sodium.h>
#endif
