import Foundation
import Job
import NIOPosix
import ObjectGraph
import Synchronization

/// Work that blocks a thread (SQLite reads and writes, reading and compressing a feed file) runs
/// on NIO's thread pool, never where requests are handled.
///
/// Hummingbird runs each connection's handlers as Swift tasks on the cooperative pool, which has
/// one thread per core (two here) and shares them with every connection; SwiftNIO's event loops
/// do the socket I/O. A synchronous SQLite call there would stall every other request for as long
/// as it takes (a busy database waits up to 30 s, `Store.busyTimeoutMilliseconds`). So handlers
/// `await` these functions instead: the call runs on a thread of `NIOThreadPool.singleton`
/// (`runIfActive`), and the handler's task is suspended, not its thread.
///
///     let names = try await state.reads.read { context in try context.fetchAll("Channel", keys: ["xmltvId"]) }
enum BlockingWork {
    /// Runs `body` on NIO's shared thread pool and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }
}

/// Read-only connections to the database, one per pool thread that is reading at the moment:
/// SQLite connections are not shared between threads at once, and with WAL the readers neither
/// wait for each other nor for `run`'s writer. Each read sees the last commit.
///
///     let count = try await reads.read { context in try context.count("Programme") }
final class StoreReads: Sendable {
    let database: String
    let model: ObjectModel
    /// Idle connections (opened on demand: at most as many as the pool has threads).
    private let idle = Mutex<[Store]>([])

    /// Opens the first connection now, so that a database that cannot be read fails at start.
    init(database: String, model: ObjectModel) throws {
        self.database = database
        self.model = model
        let first = try Self.open(database, model)
        idle.withLock { $0.append(first) }
    }

    private static func open(_ database: String, _ model: ObjectModel) throws -> Store {
        do {
            return try Store(path: database, model: model, readOnly: true)
        } catch {
            throw JobError(.cannotCreate, "cannot open \(database) for reading: \(error)")
        }
    }

    /// Runs `body` in a read transaction on a pool thread.
    func read<T: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws -> T) async throws -> T {
        try await BlockingWork.run { [self] in
            let store = try idle.withLock { $0.popLast() } ?? Self.open(database, model)
            defer { idle.withLock { $0.append(store) } }
            return try store.read(body)
        }
    }
}
