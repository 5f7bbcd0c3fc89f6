import Foundation

/// The files a command creates beside a database that did not exist yet (the database and its
/// journals, the lock, the run log, the fetch cache, the change-file folder), so that a first
/// import refused or previewed leaves the folder as it found it: nothing was done, nothing is
/// created. A database that exists is never touched.
struct NewFiles {
    private var paths: [String]
    private let database: String

    init(beside database: String, changes: String) {
        self.database = database
        let fm = FileManager.default
        guard !fm.fileExists(atPath: database) else {
            paths = []
            return
        }
        let candidates = [database, database + "-wal", database + "-shm", database + "-journal", database + ".lock",
                          RunLog.path(forDatabase: database), database + ".cache", changes]
        paths = candidates.filter { !fm.fileExists(atPath: $0) }
    }

    /// Called under the lock: another command may have created the database meanwhile, and then
    /// nothing here is ours to remove.
    mutating func keepAllIfDatabaseExists() {
        if FileManager.default.fileExists(atPath: database) { paths = [] }
    }

    /// Removes those of the files that exist now.
    func remove() {
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }
}
