#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
// SQLite's C API from the system (Debian: libsqlite3-dev), for the benchmark baseline only.
#include <sqlite3.h>
#endif
