// The sqlite3_config call Swift cannot make (the function is variadic).
#ifndef TVIMPORT_CSQLITESETTINGS_H
#define TVIMPORT_CSQLITESETTINGS_H

/// Turns off SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS), which take a process-wide
/// mutex around every allocation SQLite makes. Takes effect only before SQLite initialises (the
/// first connection); later it changes nothing. Returns SQLite's result code.
int tv_sqlite_turn_off_memory_statistics(void);

struct sqlite3;

/// Turns the firing of triggers on or off for one connection (SQLITE_DBCONFIG_ENABLE_TRIGGER, a
/// variadic call too). Returns whether they fire now (1 or 0), or -1 when SQLite refused.
int tv_sqlite_enable_triggers(struct sqlite3 *db, int enabled);

#endif
