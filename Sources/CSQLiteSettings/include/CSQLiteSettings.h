// The sqlite3_config call Swift cannot make (the function is variadic).
#ifndef TVIMPORT_CSQLITESETTINGS_H
#define TVIMPORT_CSQLITESETTINGS_H

/// Turns off SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS), which take a process-wide
/// mutex around every allocation SQLite makes. Takes effect only before SQLite initialises (the
/// first connection); later it changes nothing. Returns SQLite's result code.
int tv_sqlite_turn_off_memory_statistics(void);

#endif
