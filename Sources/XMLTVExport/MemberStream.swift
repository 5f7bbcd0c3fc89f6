import ObjectGraph

/// The members (credits or categories) of one programme after another, read from one cursor over
/// a channel's members in programme order (`ObjectContext.fetchMembers`). Each programme's rows
/// are copied into an arena that every programme reuses and put in stored position order: no
/// allocation per row once the arena has grown.
final class MemberStream {
    private let cursor: ObjectCursor
    /// The cursor's keys: `textCount` texts, a flag when `hasFlag`, the position, the owner.
    private let textCount: Int
    private let hasFlag: Bool
    /// Whether the cursor is on a row not yet taken.
    private var onRow: Bool
    /// The current owner's rows, as read: per row and text, start and end in `arena` (-1: none).
    private var spans: [Int] = []
    private var flags: [Bool] = []
    private var positions: [Int64] = []
    /// The rows in position order.
    private var order: [Int] = []
    private var arena: UnsafeMutablePointer<UInt8>
    private var arenaCapacity = 4096
    private var arenaUsed = 0

    /// Members read by `cursor`, whose keys are `textCount` texts, a bool when `flag`, the
    /// position and (last, as `fetchMembers` gives it) the owner's row id.
    init(_ cursor: ObjectCursor, textCount: Int, flag: Bool) throws {
        self.cursor = cursor
        self.textCount = textCount
        hasFlag = flag
        arena = .allocate(capacity: arenaCapacity)
        onRow = try cursor.step()
    }

    deinit { arena.deallocate() }

    /// Whether every member was taken (by the owners asked for, in the cursor's order).
    var isFinished: Bool { !onRow }

    private var positionIndex: Int { textCount + (hasFlag ? 1 : 0) }

    /// The rows of `owner`, the next owner in the cursor's order that has members or one
    /// without any; valid until the next call.
    func rows(of owner: Int64) throws -> MemberRows {
        spans.removeAll(keepingCapacity: true)
        flags.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        order.removeAll(keepingCapacity: true)
        arenaUsed = 0
        while onRow && cursor.value(at: positionIndex + 1).integerValue == owner {
            for k in 0..<textCount {
                guard let text = cursor.text(at: k) else {
                    spans.append(-1)
                    spans.append(-1)
                    continue
                }
                reserve(text.count)
                if text.count > 0 { (arena + arenaUsed).update(from: text.baseAddress!, count: text.count) }
                spans.append(arenaUsed)
                arenaUsed += text.count
                spans.append(arenaUsed)
            }
            if hasFlag { flags.append(cursor.value(at: textCount).boolValue ?? false) }
            let position = cursor.value(at: positionIndex).integerValue ?? 0
            // Insertion in position order (a programme has a few): equal positions keep the read order.
            var at = order.count
            while at > 0 && positions[order[at - 1]] > position { at -= 1 }
            order.insert(positions.count, at: at)
            positions.append(position)
            onRow = try cursor.step()
        }
        return MemberRows(stream: self, indices: 0..<order.count)
    }

    /// The `key`th text of the `i`th row in position order, nil when it has none.
    fileprivate func text(_ i: Int, _ key: Int) -> StoredBytes? {
        let s = (order[i] * textCount + key) * 2
        let start = spans[s]
        guard start >= 0 else { return nil }
        return StoredBytes(start: arena + start, count: spans[s + 1] - start)
    }

    fileprivate func flag(_ i: Int) -> Bool { flags[order[i]] }

    /// Room for `count` more bytes; moves the arena, so only while reading an owner's rows.
    private func reserve(_ count: Int) {
        guard arenaUsed + count > arenaCapacity else { return }
        while arenaUsed + count > arenaCapacity { arenaCapacity *= 2 }
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: arenaCapacity)
        larger.update(from: arena, count: arenaUsed)
        arena.deallocate()
        arena = larger
    }
}

/// One owner's rows of a `MemberStream`, in stored position order; valid until it reads the next owner.
struct MemberRows {
    fileprivate let stream: MemberStream
    let indices: Range<Int>
    var isEmpty: Bool { indices.isEmpty }

    /// The `key`th text of row `i` (one of `indices`), nil when it has none.
    func text(_ i: Int, _ key: Int) -> StoredBytes? { stream.text(i, key) }

    /// The flag of row `i`.
    func flag(_ i: Int) -> Bool { stream.flag(i) }
}
