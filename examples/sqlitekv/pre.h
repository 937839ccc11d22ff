/* Force-included before sqlite3.c by wasi-cc.sh.
 *
 * SQLite 3.46's amalgamation says, for every __wasi__ build:
 *     # undef SQLITE_OMIT_WAL
 *     # define SQLITE_OMIT_WAL 1 (because it requires shared memory APIs)
 * so `PRAGMA journal_mode=WAL` silently answers "delete". WAL needs shared
 * memory only for its wal-index, and not at all in EXCLUSIVE locking mode
 * (https://sqlite.org/wal.html, "Use of WAL Without Shared-Memory"). So:
 * pull in the WASI headers while __wasi__ is defined (wasi/api.h insists),
 * then hide __wasi__ from sqlite3.c; the CFLAGS define SQLITE_WASI=1, which
 * keeps every other WASI adaptation of os_unix.c (no mmap, no fchown, no
 * getpid, the unix-dotfile default VFS). */
#include <wasi/api.h>
#include <sys/mman.h>
#undef __wasi__
