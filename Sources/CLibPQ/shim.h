#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
// libpq, PostgreSQL's C client library, as installed by Debian's libpq-dev. Only the `Postgres`
// Swift module imports this, and the benchmark's hand-written libpq baseline (libpq-raw).
#include <libpq-fe.h>
#endif
