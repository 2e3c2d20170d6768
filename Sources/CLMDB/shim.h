#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
// The LMDB C API, as installed by Debian's liblmdb-dev. Only the `LMDB` Swift module imports this.
#include <lmdb.h>
#endif
