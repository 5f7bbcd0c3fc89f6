import ObjectGraph

/// The members (credits or categories) of one programme after another, read from one cursor over
/// a channel's members in programme order (`ObjectContext.fetchMembers`). Each programme's rows
/// are copied into buffers that every programme reuses and put in stored position order: no
/// allocation per row once the buffers have grown. Plain buffers, not arrays: the writer reads
/// them a few times per credit, and an array in a class pays an exclusivity check per access.
final class MemberStream {
    private let cursor: ObjectCursor
    /// The cursor's keys: `textCount` texts, a flag when `hasFlag`, the position, the owner.
    private let textCount: Int
    private let hasFlag: Bool
    /// Whether the cursor is on a row not yet taken.
    private var onRow: Bool
    /// The current owner's rows: per row and text, start and end in `arena` (-1: none); the
    /// rows' flags and positions, as read; the rows in position order.
    private var spans: Buffer<Int>
    private var flags: Buffer<Bool>
    private var positions: Buffer<Int64>
    private var order: Buffer<Int>
    private var arena = Buffer<UInt8>(capacity: 4096)

    /// Members read by `cursor`, whose keys are `textCount` texts, a bool when `flag`, the
    /// position and (last, as `fetchMembers` gives it) the owner's row id.
    init(_ cursor: ObjectCursor, textCount: Int, flag: Bool) throws {
        self.cursor = cursor
        self.textCount = textCount
        hasFlag = flag
        spans = Buffer(capacity: 16 * textCount * 2)
        flags = Buffer(capacity: 16)
        positions = Buffer(capacity: 16)
        order = Buffer(capacity: 16)
        onRow = try cursor.step()
    }

    deinit {
        spans.deallocate()
        flags.deallocate()
        positions.deallocate()
        order.deallocate()
        arena.deallocate()
    }

    /// Whether every member was taken (by the owners asked for, in the cursor's order).
    var isFinished: Bool { !onRow }

    /// The rows of `owner`, the next owner in the cursor's order that has members or one
    /// without any; valid until the next call.
    func rows(of owner: Int64) throws -> MemberRows {
        // The buffers as locals: a class's stored property pays an exclusivity check per access.
        var (spans, flags, positions, order, arena) = (self.spans, self.flags, self.positions, self.order, self.arena)
        defer { (self.spans, self.flags, self.positions, self.order, self.arena) = (spans, flags, positions, order, arena) }
        let textCount = self.textCount, hasFlag = self.hasFlag, cursor = self.cursor
        var count = 0, used = 0
        let positionIndex = textCount + (hasFlag ? 1 : 0)
        while onRow && cursor.integer(at: positionIndex + 1) == owner {
            if count == order.capacity {
                spans.grow(to: 2 * count * textCount * 2, keeping: count * textCount * 2)
                flags.grow(to: 2 * count, keeping: count)
                positions.grow(to: 2 * count, keeping: count)
                order.grow(to: 2 * count, keeping: count)
            }
            for k in 0..<textCount {
                let s = (count * textCount + k) * 2
                guard let text = cursor.text(at: k) else {
                    spans[s] = -1
                    continue
                }
                if used + text.count > arena.capacity { arena.grow(to: 2 * (used + text.count), keeping: used) }
                if text.count > 0 { (arena.base + used).update(from: text.baseAddress!, count: text.count) }
                spans[s] = used
                used += text.count
                spans[s + 1] = used
            }
            if hasFlag { flags[count] = (cursor.integer(at: textCount) ?? 0) != 0 }
            let position = cursor.integer(at: positionIndex) ?? 0
            positions[count] = position
            // Insertion in position order (a programme has a few): equal positions keep the read order.
            var at = count
            while at > 0 && positions[order[at - 1]] > position {
                order[at] = order[at - 1]
                at -= 1
            }
            order[at] = count
            count += 1
            onRow = try cursor.step()
        }
        return MemberRows(textCount: textCount, spans: spans.base, flags: flags.base, order: order.base, arena: arena.base,
                          indices: 0..<count)
    }
}

/// A growable block of trivial values (numbers, flags, bytes), freed by its owner.
private struct Buffer<Element> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        base = .allocate(capacity: self.capacity)
    }

    subscript(i: Int) -> Element {
        get { base[i] }
        nonmutating set { base[i] = newValue }
    }

    /// Room for `newCapacity` values, the first `count` kept.
    mutating func grow(to newCapacity: Int, keeping count: Int) {
        guard newCapacity > capacity else { return }
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity = newCapacity
    }

    func deallocate() { base.deallocate() }
}

/// One owner's rows of a `MemberStream`, in stored position order; valid until it reads the next owner.
struct MemberRows {
    fileprivate let textCount: Int
    fileprivate let spans: UnsafeMutablePointer<Int>
    fileprivate let flags: UnsafeMutablePointer<Bool>
    fileprivate let order: UnsafeMutablePointer<Int>
    fileprivate let arena: UnsafeMutablePointer<UInt8>
    let indices: Range<Int>
    var isEmpty: Bool { indices.isEmpty }

    /// The `key`th text of row `i` (one of `indices`, in position order), nil when it has none.
    func text(_ i: Int, _ key: Int) -> StoredBytes? {
        let s = (order[i] * textCount + key) * 2
        let start = spans[s]
        guard start >= 0 else { return nil }
        return StoredBytes(start: arena + start, count: spans[s + 1] - start)
    }

    /// The flag of row `i` (streams with flags only).
    func flag(_ i: Int) -> Bool { flags[order[i]] }
}

/// A channel's programmes with their credits and categories: three cursors in the same
/// (start, clump index) index order, read side by side (`XMLTVExporter`, `PlaylistGuideExporter`).
struct ChannelProgrammes {
    let rows: ObjectCursor
    let credits: MemberStream
    let categories: MemberStream

    init(of channel: ObjectID, in context: ObjectContext) throws {
        let order = [SortKey("start"), SortKey("clumpIndex")]
        rows = try context.fetch("Programme", where: .related("channel", channel), orderBy: order, keys: ProgrammeColumn.keys)
        func members(_ relationship: String, _ keys: [String]) throws -> ObjectCursor {
            try context.fetchMembers(relationship, ofOwners: "Programme", where: .related("channel", channel), ownerOrder: order, keys: keys)
        }
        credits = try MemberStream(members("credits", XMLTVDocumentWriter.Credit.keys + [XMLTVDocumentWriter.Credit.flagKey, "position"]),
                                   textCount: XMLTVDocumentWriter.Credit.keys.count, flag: true)
        categories = try MemberStream(members("categories", XMLTVDocumentWriter.Category.keys + ["position"]),
                                      textCount: XMLTVDocumentWriter.Category.keys.count, flag: false)
    }
}
