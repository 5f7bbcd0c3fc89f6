import Feeds
import Foundation
import Listings
import ObjectGraph
import Primitives

/// Opening the database the way every command does: the merged model (built-in modules and the
/// config's), observers that keep aggregates, and the contract's exit codes for what goes wrong.
public enum StoreAccess {
    public static func model(userModules: [ModelModule] = []) throws -> ObjectModel {
        do {
            return try TVModel.model(userModules: userModules)
        } catch {
            throw JobError(.config, "\(error)")
        }
    }

    /// Settings the database remembers (the config's user modules, as JSON).
    static let settings = SideTable(name: "_tvimport_settings", key: "key",
                                    columns: [AttributeDescription("value", .string, optional: false)])

    /// The user modules a config once added to the database at `path` (none if there is no such
    /// database): `edit` and `status` take no config but must know the entities it added.
    public static func modules(storedIn path: String) throws -> [ModelModule] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        try refuseDirectory(path)
        let json = try Store.row(forKey: "modules", in: settings, ofDatabaseAt: path)?["value"]?.stringValue
        guard let json, let data = json.data(using: .utf8) else { return [] }
        return try ConfigReader(file: "database \(path)").modules(try ConfigJSON.parse(data, file: "database \(path)"))
    }

    /// Remembers the config's user modules in the database.
    static func remember(modulesJSON: Data?, in store: Store) throws {
        try store.create(settings)
        if let modulesJSON {
            try store.save(["value": .string(String(decoding: modulesJSON, as: UTF8.self))], forKey: "modules", in: settings)
        }
    }

    /// The model of an existing database: the built-in modules and those it remembers.
    public static func model(forDatabase path: String, userModules: [ModelModule]) throws -> ObjectModel {
        if !userModules.isEmpty { return try model(userModules: userModules) }
        do {
            return try model(userModules: modules(storedIn: path))
        } catch let error as JobError {
            throw error
        } catch {
            throw JobError(.config, "\(path): cannot read the remembered model modules: \(error)")
        }
    }

    /// SQLite says only "unable to open database file" (error 14) about a directory.
    static func refuseDirectory(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw JobError(.cannotCreate, "database \(path) is a directory, not a database file (for example --db \((path as NSString).appendingPathComponent("tvimport.sqlite")))")
        }
    }

    public static func open(path: String, model: ObjectModel, mustExist: Bool = false) throws -> Store {
        try refuseDirectory(path)
        if mustExist && !FileManager.default.fileExists(atPath: path) {
            throw JobError(.noInput, "database \(path) does not exist (run an import first)")
        }
        let store: Store
        do {
            store = try Store(path: path, model: model)
        } catch let error as ObjectGraphError {
            throw JobError(.config, "\(error)")
        } catch {
            throw JobError(.cannotCreate, "\(error)")
        }
        store.addObserver(AggregateMaintainer(parentEntity: "Channel", relationship: "programmes",
                                              countKey: "programmeCount", lastChangedKey: "programmesChangedAt"))
        store.addObserver(ProgrammeRevisionObserver())
        return store
    }
}

/// A record of each run, shown by `tvimport status` and read by the container's health check.
///
/// It lives beside the database (`<database>.runs`, one JSON object per line), not inside it: a
/// failed run must leave the database byte-for-byte as it was, and still be recorded.
public enum RunLog {
    public struct Entry: Sendable, Codable {
        public var started: Int64
        public var finished: Int64
        public var command: String
        public var dryRun: Bool
        public var exitCode: Int32
        public var outcome: String
    }

    public static func path(forDatabase database: String) -> String { database + ".runs" }

    public static func record(database: String, started: Int64, command: String, dryRun: Bool, exitCode: Int32, outcome: String) throws {
        let entry = Entry(started: started, finished: Int64(Date().timeIntervalSince1970), command: command, dryRun: dryRun,
                          exitCode: exitCode, outcome: outcome)
        var text = JSONText(escapingSlashes: true)
        try text.append(encoding: entry)
        var line = text.bytes
        line.append(0x0A)
        let fd = Foundation.open(path(forDatabase: database), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw JobError(.cannotCreate, "cannot write the run log \(path(forDatabase: database))") }
        defer { close(fd) }
        _ = line.withUnsafeBytes { DurableFile.writeAll(fd, $0) }   // an append: DurableFile's write loop, not its replace
    }

    /// The last runs, newest first.
    public static func last(database: String, limit: Int = 5) -> [Entry] {
        guard let data = FileManager.default.contents(atPath: path(forDatabase: database)) else { return [] }
        let decoder = JSONDecoder()
        return data.split(separator: 0x0A).suffix(limit).reversed().compactMap { try? decoder.decode(Entry.self, from: Data($0)) }
    }
}
