#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
// libpq, PostgreSQL's C client library, as installed by Debian's libpq-dev. Only the `Postgres`
// Swift module imports this.
#include <libpq-fe.h>
#endif
