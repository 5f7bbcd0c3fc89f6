#include "CSQLiteSettings.h"
#include <sqlite3.h>

int tv_sqlite_turn_off_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
