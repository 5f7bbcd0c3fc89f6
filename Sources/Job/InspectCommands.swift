import Foundation
import Listings
import ObjectGraph
import Primitives
import XMLTV

/// `tvimport model`: the merged model, with where each element came from.
public enum ModelCommand {
    public static func render(_ model: ObjectModel, json: Bool) -> String {
        if json {
            func strings(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }
            let entities: [JSONValue] = model.entities.map { e in
                var d: [String: JSONValue] = [
                    "name": .string(e.name), "module": .string(e.module), "identifier": strings(e.identifier),
                    "whitelist": strings(e.overwritable.sorted()),
                    "attributes": .array(e.attributes.map { a in
                        var ad: [String: JSONValue] = ["name": .string(a.name), "type": .string(a.type.rawValue), "optional": .bool(a.isOptional),
                                                       "module": .string(a.module)]
                        if !a.defaultValue.isNull { ad["default"] = .string(a.defaultValue.description) }
                        if !a.userInfo.isEmpty { ad["userInfo"] = .object(a.userInfo.mapValues(JSONValue.string)) }
                        return .object(ad)
                    }),
                    "relationships": .array(e.relationships.map { r in
                        .object(["name": .string(r.name), "destination": .string(r.destination), "inverse": r.inverse.map(JSONValue.string) ?? .null,
                                 "toMany": .bool(r.isToMany), "deleteRule": .string(r.deleteRule.rawValue), "module": .string(r.module)])
                    }),
                ]
                if let p = e.parent { d["parent"] = .string(p) }
                if !e.subentities.isEmpty { d["subentities"] = strings(e.subentities) }
                return .object(d)
            }
            var text = JSONText(escapingSlashes: true, keyOrder: JSONText.serializationOrder)
            text.append(.object(["modules": strings(model.modules), "entities": .array(entities)]), pretty: true)
            return text.string
        }
        var lines = ["Model merged from modules: \(model.modules.joined(separator: ", "))", ""]
        for e in model.entities {
            lines.append("\(e.name)\(e.parent.map { " : \($0)" } ?? "")  [module \(e.module)]  identifier (\(e.identifier.joined(separator: ", ")))")
            lines.append("  whitelist: \(e.overwritable.sorted().joined(separator: ", "))")
            for a in e.attributes {
                lines.append("  \(a.name): \(a.type.rawValue)\(a.isOptional ? "?" : "")\(a.defaultValue.isNull ? "" : " = \(a.defaultValue)")  [\(a.module)]")
            }
            for r in e.relationships {
                lines.append("  \(r.name) -> \(r.isToMany ? "many " : "")\(r.destination)\(r.inverse.map { " (inverse \($0))" } ?? ""), delete rule \(r.deleteRule.rawValue)  [\(r.module)]")
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }
}

/// `tvimport edit`: sets local attributes of any entity, found by its identifier.
///
/// ```swift
/// var edit = EditCommand(database: "tv.sqlite", entityName: "Channel", id: "bbc1.uk")
/// edit.assignments = ["hidden=true", "customName=BBC One"]
/// print(try edit.run())   // Channel bbc1.uk: set customName, hidden
/// ```
///
/// Refused: identity keys (they name the object), attributes the store derives (aggregates,
/// hashes, revision stamps) and `source` (whose rows an import may delete). Attributes of the
/// entity's whitelist are overwritten by the next import, so they need `force`.
public struct EditCommand {
    public var database: String
    public var entityName: String
    public var id: String
    /// `KEY=VALUE`; an empty value clears an optional attribute.
    public var assignments: [String] = []
    /// Attributes to clear.
    public var unset: [String] = []
    /// Also set whitelisted attributes (the next import overwrites them).
    public var force = false
    public var userModules: [ModelModule] = []

    public init(database: String, entityName: String, id: String) {
        self.database = database
        self.entityName = entityName
        self.id = id
    }

    /// Records the edit as a change file (`changes/` beside the database, or the config's), so
    /// that `undo` reverts it like any other change: `tvimport edit` and `serve` both do.
    public var recordsChange = true
    /// Where change files go (default: `changes/` beside the database).
    public var changesDirectory: String?

    /// Attributes that the import owns although no whitelist names them.
    static let importOwned: Set<String> = ["source"]

    /// The attribute `key` of `entity` if users may set it: not part of the identity, not kept
    /// by tvimport itself, and (unless `force`) not overwritten by the next import. The one rule
    /// for `tvimport edit` and the forms of `tvimport serve`.
    public static func editableAttribute(_ key: String, of entity: Entity, force: Bool = false) throws -> Attribute {
        guard let attribute = entity.attribute(key) else {
            throw JobError(.usage, "entity '\(entity.name)' has no attribute '\(key)' (attributes: \(entity.attributes.map(\.name).joined(separator: ", ")))")
        }
        if entity.identifier.contains(key) {
            throw JobError(.usage, "\(entity.name).\(key) is part of the identity (\(entity.identifier.joined(separator: ", "))) and cannot be edited")
        }
        if attribute.isExcludedFromDiff || importOwned.contains(key) {
            throw JobError(.usage, "\(entity.name).\(key) is kept by tvimport itself and cannot be edited")
        }
        if entity.overwritable.contains(key) && !force {
            throw JobError(.usage, "\(entity.name).\(key) is in the import's whitelist: the next import overwrites it (give --force to set it anyway\(entity.name == "Channel" && key == "displayName" ? ", or set customName" : ""))")
        }
        return attribute
    }

    public func run() throws -> String {
        let model = try StoreAccess.model(forDatabase: database, userModules: userModules)
        guard let entity = model.entity(entityName) else {
            throw JobError(.usage, "unknown entity '\(entityName)' (known: \(model.entities.map(\.name).joined(separator: ", ")))")
        }
        var changes: [String: Value] = [:]
        func editable(_ key: String) throws -> Attribute { try Self.editableAttribute(key, of: entity, force: force) }
        for assignment in assignments {
            guard let eq = assignment.firstIndex(of: "=") else {
                throw JobError(.usage, "'\(assignment)' is not KEY=VALUE")
            }
            let key = String(assignment[..<eq]), text = String(assignment[assignment.index(after: eq)...])
            let attribute = try editable(key)
            changes[key] = try Self.parse(text, as: attribute, entity: entity)
        }
        for key in unset {
            let attribute = try editable(key)
            guard attribute.isOptional else {
                throw JobError(.usage, "\(entity.name).\(key) must have a value and cannot be unset (its default is \(attribute.defaultValue))")
            }
            changes[key] = .null
        }
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let started = Int64(Date().timeIntervalSince1970)
        // Recorded like an import's changes (serve's edits), so that undo and redo work from the page.
        let files = changesDirectory.map { ChangeFiles(directory: $0) } ?? ChangeFiles(database: database)
        let recording = recordsChange ? try files.startRecording(store, runID: ChangeFiles.runID(started)) : nil
        let (changed, label) = try store.write { context -> ([String], String) in
            guard let object = try Self.find(entity, id, context) else {
                throw JobError(.dataError, try Self.notFound(entity, id, context))
            }
            // Named as people write it (`RTE2.ie`, `RTE2.ie/2027-10-25T18:00:00Z`), also when given as #ROWID.
            let label = try Self.identity(of: object, in: context) ?? id
            var all = changes
            // An edited whitelisted attribute must be compared again by the next import, whose
            // content hash would otherwise say "unchanged".
            if let hashKey = entity.userInfo["hash"], !Set(changes.keys).isDisjoint(with: entity.overwritable) {
                all[hashKey] = .null
            }
            return (try context.update(object, all), label)
        }.result
        if let recording, let path = try recording.finish() {
            try ChangeRegister.record(path: path, in: store, kind: .edit,
                                      about: "the edit of \(entity.name) \(label) (\(changed.filter { entity.attribute($0)?.isExcludedFromDiff != true }.joined(separator: ", ")))")
        }
        let visible = changed.filter { entity.attribute($0)?.isExcludedFromDiff != true }
        let outcome = visible.isEmpty ? "\(entity.name) \(id): nothing changed" : "\(entity.name) \(id): set \(visible.joined(separator: ", "))"
        // Edits show in `status`'s last runs beside imports and undos.
        try? RunLog.record(database: database, started: started, command: "edit", dryRun: false, exitCode: 0, outcome: outcome)
        return outcome
    }

    /// An object's identifier as `find` reads it: its identifying attributes (dates in ISO UTC),
    /// a to-one part by its target's identifier, joined by `/`; nil when it has none.
    static func identity(of id: ObjectID, in context: ObjectContext, depth: Int = 0) throws -> String? {
        guard depth < 3, let entity = context.model.entity(id.entity), !entity.identifier.isEmpty,
              let object = try context.object(id, keys: entity.identifier) else { return nil }
        var parts: [String] = []
        for key in entity.identifier {
            if entity.relationship(key) != nil {
                guard let target = object.related(key), let text = try identity(of: target, in: context, depth: depth + 1) else { return nil }
                parts.append(text)
            } else if case .date(let t) = object[key] {
                parts.append(UTCTime.iso8601(t))
            } else {
                let value = object[key]
                parts.append(value.stringValue ?? value.integerValue.map(String.init) ?? "\(value)")
            }
        }
        // A programme's clump index 0 is left out, as `find` allows.
        if entity.name == "Programme" || entity.name == "SourceProgramme", parts.last == "0" { parts.removeLast() }
        return parts.joined(separator: "/")
    }

    /// `text` as a value of `attribute`, as `edit` reads it (an error names the attribute).
    public static func parse(_ text: String, as attribute: Attribute, entity: Entity) throws -> Value {
        func bad() -> JobError {
            JobError(.dataError, "\(entity.name).\(attribute.name) expects \(attribute.type.rawValue), got '\(text)'")
        }
        // `KEY=` clears an optional attribute (a required text becomes empty).
        if text.isEmpty && attribute.isOptional { return .null }
        switch attribute.type {
        case .string: return .string(text)
        case .integer: guard let i = Int64(text) else { throw bad() }; return .integer(i)
        // NaN and the infinities are no value SQLite keeps (NaN is stored as NULL).
        case .double: guard let d = Double(text), d.isFinite else { throw bad() }; return .double(d)
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1", "on": return .bool(true)
            case "false", "no", "0", "off": return .bool(false)
            default: throw bad()
            }
        case .date: guard let t = parseTime(text) else { throw bad() }; return .date(t)
        case .data: return .data(Array(text.utf8))
        }
    }

    /// ISO 8601 (`2026-11-22T03:00:00Z`, `2026-11-22T04:00+01:00`; no zone is UTC) or XMLTV
    /// (`20261122030000 +0000`). The ISO form's offset counts and anything after it is refused.
    static func parseTime(_ text: String) -> Int64? {
        let digits = text.filter { $0.isNumber }
        if text.contains("-") && text.contains("T") { return UTCTime.parseDateTime(text) }
        if let utc = XMLTVTime.parse(text)?.utc { return utc }
        // A start as users copy it from a listing, without a zone: UTC, like the ISO form's Z.
        return digits.count == text.count ? XMLTVTime.parse(text + " +0000")?.utc : nil
    }

    /// Finds an object by its identifier as users write it: a channel's XMLTV id; a programme's
    /// `CHANNEL/START[/CLUMP]` (START in XMLTV or ISO form); `#ROWID` for anything.
    /// "no Programme with identifier 'RTE2.ie/20261127084000'; nearest starts on RTE2.ie: ...":
    /// for an object identified by its parent and a date (a programme by channel and start), the
    /// two stored dates either side of the one asked for, so a mistyped start is found again.
    static func notFound(_ entity: Entity, _ id: String, _ context: ObjectContext) throws -> String {
        let message = "no \(entity.name) with identifier '\(id)'"
        guard let link = entity.identifier.first(where: { entity.relationship($0) != nil }),
              let parentEntity = context.model.entity(entity.relationship(link)!.destination),
              let dateKey = entity.identifier.first(where: { entity.attribute($0)?.type == .date }),
              let dateAttribute = entity.attribute(dateKey) else { return message }
        let parts = id.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // The date is the last part, or the one before a clump index.
        for index in [parts.count - 1, parts.count - 2] where index > 0 {
            guard let value = try? parse(parts[index], as: dateAttribute, entity: entity), case .date(let wanted) = value else { continue }
            let parentID = parts[..<index].joined(separator: "/")
            guard let parent = try find(parentEntity, parentID, context) else { return message + ": no \(parentEntity.name) '\(parentID)'" }
            func dates(_ comparison: Comparison, ascending: Bool) throws -> [Int64] {
                try context.fetchAll(entity.name, where: .and([.related(link, parent), .compare(dateKey, comparison, .date(wanted))]),
                                     orderBy: [SortKey(dateKey, ascending: ascending)], keys: [dateKey], limit: 2)
                    .compactMap { $0[dateKey].integerValue }
            }
            let nearest = try dates(.less, ascending: false).reversed() + dates(.greaterOrEqual, ascending: true)
            if nearest.isEmpty { return message + "; \(parentID) has no \(entity.name)" }
            return message + "; nearest \(dateKey)s on \(parentID): " + nearest.map(UTCTime.iso8601).joined(separator: ", ")
        }
        return message
    }

    public static func find(_ entity: Entity, _ id: String, _ context: ObjectContext) throws -> ObjectID? {
        if id.hasPrefix("#"), let row = Int64(id.dropFirst()) {
            return try context.object(ObjectID(entity: entity.name, rowID: row), keys: [])?.id
        }
        let attributes = entity.identifier.filter { entity.attribute($0) != nil }
        let relationships = entity.identifier.filter { entity.relationship($0) != nil }
        var parts = id.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if relationships.isEmpty && attributes.count == 1, let a = entity.attribute(attributes[0]) {
            return try context.first(entity.name, where: .compare(a.name, .equal, parse(id, as: a, entity: entity)), keys: [])?.id
        }
        // Trailing parts are the attributes; whatever is left names the parent by its identifier.
        var predicates: [ObjectPredicate] = []
        for (index, name) in attributes.enumerated().reversed() {
            guard let a = entity.attribute(name) else { continue }
            // A trailing attribute with a default (a programme's clump index) may be left out: a
            // part is this attribute's only if the attributes before it still have theirs.
            if parts.count > relationships.count + index, let last = parts.last, let value = try? parse(last, as: a, entity: entity) {
                parts.removeLast()
                predicates.append(.compare(name, .equal, value))
            } else if !a.defaultValue.isNull {
                predicates.append(.compare(name, .equal, a.defaultValue))
            } else {
                return nil
            }
        }
        if let r = relationships.first, let destination = context.model.entity(entity.relationship(r)!.destination) {
            guard let parent = try find(destination, parts.joined(separator: "/"), context) else { return nil }
            predicates.append(.related(r, parent))
        }
        return try context.first(entity.name, where: .and(predicates), keys: [])?.id
    }
}

/// `tvimport status`: what is stored, per entity and source, and the last runs.
public enum StatusCommand {
    public static func run(database: String, json: Bool, userModules: [ModelModule] = []) throws -> String {
        let model = try StoreAccess.model(forDatabase: database, userModules: userModules)
        let store = try StoreAccess.open(path: database, model: model, mustExist: true)
        let (counts, bySource) = try store.read { context -> ([String: Int], [String: [String: Int]]) in
            var counts: [String: Int] = [:]
            for e in model.entities { counts[e.name] = try context.count(e.name) }
            // Per source: what it provides (its own channels' shown rows and its rows of shared
            // channels, docs/design.md#several-sources-one-guide) and what it wins in the shown guide.
            var bySource: [String: [String: Int]] = [:]
            func count(_ source: Value, _ key: String) { bySource[source.stringValue ?? "(none)", default: [:]][key, default: 0] += 1 }
            var shared = Set<[UInt8]>()
            let sourceChannels = try context.fetch("SourceChannel", keys: ["source", "xmltvId"])
            while let c = try sourceChannels.next() {
                count(c["source"], "Channel")
                if let id = c["xmltvId"].stringValue { shared.insert(Array(id.utf8)) }
            }
            let sourceProgrammes = try context.fetch("SourceProgramme", keys: ["source"])
            while try sourceProgrammes.step() { count(sourceProgrammes.value(at: 0), "Programme") }
            var sharedRows = Set<Int64>()
            let channels = try context.fetch("Channel", keys: ["source", "xmltvId"])
            while let c = try channels.next() {
                count(c["source"], "shownChannels")
                if let id = c["xmltvId"].stringValue, shared.contains(Array(id.utf8)) { sharedRows.insert(c.id.rowID) } else { count(c["source"], "Channel") }
            }
            let programmes = try context.fetch("Programme", keys: ["source", "channel"])
            while try programmes.step() {
                let source = programmes.value(at: 0)
                count(source, "shownProgrammes")
                if !sharedRows.contains(programmes.value(at: 1).integerValue ?? -1) { count(source, "Programme") }
            }
            return (counts, bySource)
        }
        let runs = RunLog.last(database: database)
        let commands = CommandState.load(database: database)
        if json {
            func numbers(_ counts: [String: Int]) -> JSONValue { .object(counts.mapValues { .integer(Int64($0)) }) }
            let doc: JSONValue = .object([
                "database": .string(database), "entities": numbers(counts), "sources": .object(bySource.mapValues(numbers)),
                "commands": .object(commands.mapValues {
                    .object(["command": .string($0.command), "status": .string($0.status), "succeeded": .bool($0.succeeded),
                             "durationSeconds": .double($0.durationSeconds), "finished": .string(UTCTime.iso8601($0.finished))])
                }),
                "runs": .array(runs.map {
                    .object(["started": .string(UTCTime.iso8601($0.started)), "finished": .string(UTCTime.iso8601($0.finished)),
                             "command": .string($0.command), "dryRun": .bool($0.dryRun), "exitCode": .integer(Int64($0.exitCode)),
                             "outcome": .string($0.outcome)])
                }),
            ])
            var text = JSONText(escapingSlashes: true, keyOrder: JSONText.serializationOrder)
            text.append(doc, pretty: true)
            return text.string
        }
        var lines = ["Database \(database)"]
        for name in counts.keys.sorted() { lines.append("  \(name): \(counts[name]!)") }
        for source in bySource.keys.sorted() {
            let c = bySource[source]!
            var line = "  source \(source): \(c["Channel"] ?? 0) channels, \(c["Programme"] ?? 0) programmes"
            if c["Channel"] != c["shownChannels"] || c["Programme"] != c["shownProgrammes"] {
                line += " (shown: \(c["shownChannels"] ?? 0) channels, \(c["shownProgrammes"] ?? 0) programmes; several sources share channels)"
            }
            lines.append(line)
        }
        for source in commands.keys.sorted() {
            let c = commands[source]!
            lines.append("  source \(source) runs \(c.command): last \(c.status) after \(String(format: "%.1f", c.durationSeconds)) s, \(UTCTime.iso8601(c.finished))")
        }
        lines.append(runs.isEmpty ? "No runs recorded yet." : "Last runs:")
        for r in runs {
            lines.append("  \(UTCTime.iso8601(r.started))  \(r.command)\(r.dryRun ? " (dry run)" : "")  exit \(r.exitCode)  \(r.outcome)")
        }
        return lines.joined(separator: "\n")
    }
}
