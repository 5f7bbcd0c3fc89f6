import ObjectGraph

/// The time ranges of the source programmes an import changed, per source channel row, read from
/// the context's change stream: where the resolution of a shared channel must look again
/// (`GuideResolver.resolve(_:changed:)`).
///
/// ```swift
/// let slots = ChangedSlots()
/// try context.addObserver(slots)
/// // ... merge a source's rows, then:
/// try context.processPendingChanges()
/// let ranges = slots.ranges[sourceChannel.rowID] ?? []
/// ```
///
/// An insert or a delete gives its [start, stop); an update gives its range before and after
/// (its start is its identity and does not change; its stop may). A programme without a stop, or
/// with an empty one, claims its start second, as the resolution's overlap test does.
final class ChangedSlots: ContextObserver, @unchecked Sendable {
    private(set) var ranges: [Int64: [Range<Int64>]] = [:]
    /// While set, changes are not recorded (rows copied when a channel becomes shared: that
    /// channel is resolved whole).
    var isPaused = false

    func observedChanges(in model: ObjectModel) -> ObservedChanges {
        ObservedChanges(entities: ["SourceProgramme"], relationships: [])
    }

    func context(_ context: ObjectContext, didProcess changes: ChangeBatch) throws {
        if isPaused { return }
        // By index: a first import inserts tens of thousands of other objects, and a copy of
        // each change would cost more than this observer's own work.
        let inserted = changes.inserted
        for i in inserted.indices where inserted[i].id.isOf("SourceProgramme") {
            add(inserted[i].foreignKeys["channel"], inserted[i].newValue("start"), inserted[i].newValue("stop"))
        }
        for change in changes.deleted where change.id.entity == "SourceProgramme" {
            add(change.foreignKeys["channel"], change.oldValue("start"), change.oldValue("stop"))
        }
        for change in changes.updated where change.id.entity == "SourceProgramme" {
            guard let row = try context.object(change.id, keys: ["start", "stop", "channel"]) else { continue }
            let channel = row.related("channel")?.rowID
            add(channel, row["start"], row["stop"])
            if let old = change.oldValue("stop") { add(channel, row["start"], old) }
        }
    }

    /// The ranges of one source channel row, forgotten here (they are being resolved).
    func take(_ channel: Int64) -> [Range<Int64>] {
        ranges.removeValue(forKey: channel) ?? []
    }

    private func add(_ channel: Int64?, _ start: Value?, _ stop: Value?) {
        guard let channel, let start = start?.integerValue else { return }
        let end = max(stop?.integerValue ?? start + 1, start + 1)
        ranges[channel, default: []].append(start..<end)
    }
}
