import Foundation
import ObjectGraph

/// Where the last `run` into a database wrote its outputs (its config file, the feed folder and
/// the XMLTV file, as absolute paths), so that `undo`, `apply`, `edit` and `import` given no
/// `--config` still rewrite them: the outputs then follow the database whichever way it changed
/// (docs/design.md#one-truth), also after the bundled sample's run.
public enum LastRunOutputs {
    static let table = SideTable(name: "_tvimport_last_run", key: "key", columns: [
        AttributeDescription("config", .string),
        AttributeDescription("output", .string, optional: false),
        AttributeDescription("xmltv", .string),
    ])

    /// Remembers the outputs of a run that has just written them.
    static func remember(_ config: JobConfig, in store: Store) throws {
        try store.create(table)
        try store.save(["config": config.path.map { .string(ChangeFiles.absolute($0)) } ?? .null,
                        "output": .string(ChangeFiles.absolute(config.output)),
                        "xmltv": config.xmltv.map { .string(ChangeFiles.absolute($0)) } ?? .null],
                       forKey: "last", in: table)
    }

    /// The config of the last run into `database`, its outputs at the absolute places that run
    /// wrote; nil when no run wrote any (or its config file is gone or no longer reads).
    public static func config(forDatabase database: String) -> JobConfig? {
        guard let row = (try? Store.row(forKey: "last", in: table, ofDatabaseAt: database)) ?? nil,
              let output = row["output"]?.stringValue else { return nil }
        var config: JobConfig
        if let path = row["config"]?.stringValue {
            guard let loaded = try? JobConfig.load(path: path, requireSources: false) else { return nil }
            config = loaded
        } else {
            guard let sample = try? JobConfig.bundledSample() else { return nil }
            config = sample
        }
        config.database = database
        config.output = output
        config.xmltv = row["xmltv"]?.stringValue
        return config
    }
}
