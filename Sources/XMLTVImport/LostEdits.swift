import ObjectGraph
import Primitives

/// A shown programme that an import deleted while it carried local edits (a note, a reminder,
/// an attribute of a user module): the report names it, so nobody loses an edit without a word.
public struct LostEdit: Sendable, Hashable {
    /// The canonical channel id, or `#ROWID` when the channel went with it.
    public var channel: String
    /// The programme's start (UTC seconds) and title, as they were.
    public var start: Int64
    public var title: String?
    /// The local attributes it held, by name, as text.
    public var values: [String: String]
}

/// Collects `LostEdit`s from the context's change stream: deleted `Programme` objects whose
/// local attributes (those no import writes: not the whitelist, not the identity, not what
/// tvimport keeps itself) differ from their defaults.
final class LostEditsObserver: ContextObserver, @unchecked Sendable {
    private let localAttributes: [Attribute]
    private(set) var lost: [(channelRow: Int64?, edit: LostEdit)] = []

    init(model: ObjectModel) {
        let entity = model.entity("Programme")
        localAttributes = entity.map { e in
            e.attributes.filter { !e.overwritable.contains($0.name) && !e.identifier.contains($0.name) && !$0.isExcludedFromDiff && $0.name != "source" }
        } ?? []
    }

    func observedChanges(in model: ObjectModel) -> ObservedChanges {
        ObservedChanges(entities: localAttributes.isEmpty ? [] : ["Programme"], relationships: [])
    }

    func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
        for change in changes.deleted where change.id.entity == "Programme" {
            var values: [String: String] = [:]
            for a in localAttributes {
                guard let old = change.oldValue(a.name), old != .null, old != a.defaultValue else { continue }
                values[a.name] = old.stringValue ?? "\(old)"
            }
            guard !values.isEmpty else { continue }
            let edit = LostEdit(channel: change.foreignKeys["channel"].map { "#\($0)" } ?? "?",
                                start: change.oldValue("start")?.integerValue ?? 0,
                                title: change.oldValue("title")?.stringValue, values: values)
            lost.append((change.foreignKeys["channel"], edit))
        }
    }

    func contextDidRollBack() { lost.removeAll() }
}
