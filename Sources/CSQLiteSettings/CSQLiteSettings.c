#include "CSQLiteSettings.h"
#include <sqlite3.h>

int tv_sqlite_turn_off_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int tv_sqlite_enable_triggers(struct sqlite3 *db, int enabled) {
    int now = -1;
    int code = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, enabled, &now);
    return code == SQLITE_OK ? now : -1;
}
