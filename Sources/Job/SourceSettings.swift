import ObjectGraph
import Primitives
import XMLTVImport

/// The rules each source's rows were last mapped with (docs/design.md#one-truth): the channel
/// aliases, the whitelists, and the source's own time offset and channel lists, as one
/// fingerprint per source in the database.
///
/// An unchanged download says nothing when these rules changed since: a new alias moves a
/// channel, a wider whitelist writes more attributes. `run` imports such a source again even
/// when its bytes did not change, with its stored content hashes forgotten
/// (`ImportOptions.forgetsContentHashes`), so the merge compares values.
///
/// ```swift
/// let now = SourceSettings.fingerprint(of: spec, options: options)
/// if try SourceSettings.changed(spec.name, now, in: store) { /* import in full */ }
/// ```
enum SourceSettings {
    static let table = SideTable(name: "_tvimport_source_settings", key: "source", columns: [
        AttributeDescription("fingerprint", .string, optional: false),
    ])

    /// The rules that decide what `source`'s guide becomes in the store, as a short text.
    static func fingerprint(of source: SourceSpec, options: PipelineOptions) -> String {
        var hash = FNV1a()
        func add(_ text: String) {
            hash.add(text.utf8)
            hash.add(0)   // a separator no text contains
        }
        add("aliases")
        for (alias, canonical) in options.channelAliases.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
            add(alias)
            add(canonical)
        }
        add("whitelists")
        for (entity, keys) in options.whitelists.sorted(by: { $0.key < $1.key }) {
            add(entity)
            for key in keys.sorted() { add(key) }
        }
        add("timeOffset")
        add(source.timeOffset.map(String.init) ?? "-")
        add("include")
        for id in (source.includeChannels ?? []).sorted() { add(id) }
        add(source.includeChannels == nil ? "all" : "listed")
        add("exclude")
        for id in source.excludeChannels.sorted() { add(id) }
        // The timeshifted channels every import makes: a changed rule makes `run` import again.
        add("timeshifts")
        for rule in (options.timeshifts ?? []).sorted(by: { Array($0.channel.utf8).lexicographicallyPrecedes(Array($1.channel.utf8)) }) {
            add("\(rule.channel)\t\(rule.original)\t\(rule.seconds)\t\(rule.displayName ?? "\u{1}")")
        }
        return hash.hex
    }

    /// Whether `source` was last mapped with other rules (or never recorded, as in a database of
    /// an earlier version: then the next import compares values once).
    static func changed(_ source: String, _ fingerprint: String, in store: Store) -> Bool {
        ((try? store.row(forKey: source, in: table)) ?? nil)?["fingerprint"]?.stringValue != fingerprint
    }

    /// Remembers the rules of an applied import.
    static func remember(_ source: String, _ fingerprint: String, in store: Store) throws {
        try store.create(table)
        try store.save(["fingerprint": .string(fingerprint)], forKey: source, in: table)
    }
}
