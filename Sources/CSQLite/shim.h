// SQLite 3 (Debian libsqlite3-dev), used only by the PinionSystem module.
#include <sqlite3.h>
