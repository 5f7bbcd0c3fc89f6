// A recorded element: the SAX events inside one <programme> or <channel>, kept as compact bytes
// so that a programme can be hashed as it streams past and turned into Swift values only when
// the merge needs them (an unchanged programme never is).
//
// Layout, with every name, value and text NUL-terminated (XML text never holds U+0000):
//   0x01 name 0 count(u32 LE) { attribute-name 0 value 0 }*   start of an element
//   0x02 text 0                                                 character data (runs coalesced)
//   0x03                                                        end of an element

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum TapeEvent {
    static let start: UInt8 = 1
    static let text: UInt8 = 2
    static let end: UInt8 = 3
}

/// Records events; reused from one element to the next. Its own growable buffer: a programme
/// is dozens of small appends, which cost several times a memcpy through `Array`.
final class TapeWriter {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity = 4096
    private(set) var count = 0
    private var lastWasText = false

    init() {
        storage = .allocate(capacity: capacity)
    }

    deinit {
        storage.deallocate()
    }

    /// The bytes recorded so far, valid until the next change.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

    func reset() {
        count = 0
        lastWasText = false
    }

    /// Starts an element; its `attributeCount` attributes follow, one `attribute` call each.
    func start(_ name: UnsafePointer<UInt8>, attributeCount: Int) {
        lastWasText = false
        append(TapeEvent.start)
        appendCString(name)
        withUnsafeBytes(of: UInt32(attributeCount)) { count in
            if let base = count.baseAddress { append(base.assumingMemoryBound(to: UInt8.self), 4) }
        }
    }

    func attribute(_ name: UnsafePointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
        appendCString(name)
        if let base = value.baseAddress { append(base, value.count) }
        append(0)
    }

    func text(_ p: UnsafePointer<UInt8>, _ length: Int) {
        if lastWasText {
            count -= 1   // its NUL: the run continues
        } else {
            append(TapeEvent.text)
            lastWasText = true
        }
        append(p, length)
        append(0)
    }

    func end() {
        lastWasText = false
        append(TapeEvent.end)
    }

    private func appendCString(_ p: UnsafePointer<UInt8>) {
        append(p, strlen(p) + 1)
    }

    @inline(__always)
    private func append(_ byte: UInt8) {
        if count == capacity { grow(1) }
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    private func append(_ p: UnsafePointer<UInt8>, _ n: Int) {
        if count + n > capacity { grow(n) }
        (storage + count).update(from: p, count: n)
        count += n
    }

    private func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < count + needed { newCapacity *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: storage, count: count)
        storage.deallocate()
        storage = bigger
        capacity = newCapacity
    }
}

/// One element on a tape: its name, attributes and the range of its content events.
struct TapeElement {
    let name: UnsafePointer<UInt8>
    let attributeStart: Int
    let attributeCount: Int
    let content: Range<Int>
    /// Where the element's events end (after its end event).
    let end: Int
}

/// Reads a tape recorded by `TapeWriter`. Valid only inside `withUnsafeBufferPointer`.
struct TapeReader {
    let tape: UnsafeBufferPointer<UInt8>
    /// The tape's first byte; an element is only ever read from a non-empty tape.
    private var base: UnsafePointer<UInt8> { tape.baseAddress ?? Self.nowhere }
    // A constant, never dereferenced: an empty tape has no element to read.
    private static var nowhere: UnsafePointer<UInt8> { UnsafePointer(bitPattern: 1).unsafelyUnwrapped }

    /// Moves `i` past the NUL-terminated string at it: one `strlen` (word-at-a-time in the C
    /// library) rather than a checked loop per byte, since descriptions are long. A tape is
    /// well-formed (written by `TapeWriter`, or checked by `isWellFormed`), so the NUL is there.
    @inline(__always)
    private func skipCString(_ i: inout Int) {
        i += strlen(base + i) + 1
    }

    /// Whether `tape` is a sequence of whole events as `TapeWriter` records them (every string
    /// terminated, every element ended, nothing after): what the reading functions assume, checked
    /// once for bytes that come back from a file.
    static func isWellFormed(_ tape: [UInt8]) -> Bool {
        tape.withUnsafeBufferPointer { tape in
            var i = 0, depth = 0
            func skipCString() -> Bool {
                while i < tape.count, tape[i] != 0 { i += 1 }
                i += 1
                return i <= tape.count
            }
            while i < tape.count {
                let event = tape[i]
                i += 1
                switch event {
                case TapeEvent.start:
                    guard skipCString(), i + 4 <= tape.count else { return false }
                    let count = Int(UnsafeRawBufferPointer(tape).loadUnaligned(fromByteOffset: i, as: UInt32.self))
                    i += 4
                    for _ in 0..<(2 * count) where !skipCString() { return false }
                    depth += 1
                case TapeEvent.text:
                    guard skipCString() else { return false }
                case TapeEvent.end:
                    guard depth > 0 else { return false }
                    depth -= 1
                default:
                    return false
                }
            }
            return depth == 0
        }
    }

    /// The element whose start event is at `i`.
    func element(at start: Int) -> TapeElement {
        var i = start + 1
        let name = base + i
        skipCString(&i)
        let count = UnsafeRawBufferPointer(tape).loadUnaligned(fromByteOffset: i, as: UInt32.self)
        i += 4
        let attributeStart = i
        for _ in 0..<(Int(count) * 2) { skipCString(&i) }
        let contentStart = i
        while true {
            switch tape[i] {
            case TapeEvent.start:
                i = element(at: i).end
            case TapeEvent.text:
                i += 1
                skipCString(&i)
            default:
                return TapeElement(name: name, attributeStart: attributeStart, attributeCount: Int(count),
                                   content: contentStart..<i, end: i + 1)
            }
        }
    }

    /// Calls `body` with each element in `range` (not with their descendants).
    func forEachElement(in range: Range<Int>, _ body: (TapeElement) -> Void) {
        var i = range.lowerBound
        while let element = nextElement(from: &i, before: range.upperBound) { body(element) }
    }

    /// The next element at this level from `i` (which moves past it), nil at `end`: a loop
    /// without a closure, for a caller that fills a value as it goes.
    func nextElement(from i: inout Int, before end: Int) -> TapeElement? {
        while i < end {
            switch tape[i] {
            case TapeEvent.start:
                let element = element(at: i)
                i = element.end
                return element
            case TapeEvent.text:
                i += 1
                skipCString(&i)
            default:
                i += 1
            }
        }
        return nil
    }

    /// Calls `body` with each attribute's local name and value.
    func forEachAttribute(of element: TapeElement, _ body: (UnsafePointer<UInt8>, UnsafePointer<UInt8>) -> Void) {
        var i = element.attributeStart
        for _ in 0..<element.attributeCount {
            let name = base + i
            skipCString(&i)
            let value = base + i
            skipCString(&i)
            body(name, value)
        }
    }

    func attribute(_ wanted: StaticString, of element: TapeElement) -> String? {
        var found: String?
        forEachAttribute(of: element) { name, value in
            if found == nil, nameIs(name, wanted) { found = String(cString: value) }
        }
        return found
    }

    /// The element's own text (text inside nested elements left out), normalised.
    func text(of element: TapeElement, _ mode: TextMode) -> String {
        var i = element.content.lowerBound
        // Almost every text is one run: kept apart, so that only several runs allocate.
        var firstRun: Range<Int>?
        var laterRuns: [Range<Int>] = []
        while i < element.content.upperBound {
            switch tape[i] {
            case TapeEvent.start:
                i = self.element(at: i).end
            case TapeEvent.text:
                let begin = i + 1
                i = begin
                skipCString(&i)
                if firstRun == nil { firstRun = begin..<(i - 1) } else { laterRuns.append(begin..<(i - 1)) }
            default:
                i += 1
            }
        }
        guard let firstRun else { return "" }
        if laterRuns.isEmpty { return normalisedText(UnsafeBufferPointer(rebasing: tape[firstRun]), mode) }
        var joined: [UInt8] = Array(tape[firstRun])
        for run in laterRuns { joined += tape[run] }
        return joined.withUnsafeBufferPointer { normalisedText($0, mode) }
    }
}

