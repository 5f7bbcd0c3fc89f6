// A recorded element: the SAX events inside one <programme> or <channel>, kept as compact bytes
// so that a programme can be hashed as it streams past and turned into Swift values only when
// the merge needs them (an unchanged programme never is).
//
// Layout, with every name, value and text NUL-terminated (XML text never holds U+0000):
//   0x01 name 0 count(u32 LE) { attribute-name 0 value 0 }*   start of an element
//   0x02 text 0                                                 character data (runs coalesced)
//   0x03                                                        end of an element

enum TapeEvent {
    static let start: UInt8 = 1
    static let text: UInt8 = 2
    static let end: UInt8 = 3
}

/// Records events; reused from one element to the next.
struct TapeWriter {
    private(set) var bytes: [UInt8] = []
    private var lastWasText = false

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        lastWasText = false
    }

    /// Starts an element; its `attributeCount` attributes follow, one `attribute` call each.
    mutating func start(_ name: UnsafePointer<UInt8>, attributeCount: Int) {
        lastWasText = false
        bytes.append(TapeEvent.start)
        appendCString(name)
        var n = UInt32(attributeCount)
        withUnsafeBytes(of: &n) { bytes.append(contentsOf: $0) }
    }

    mutating func attribute(_ name: UnsafePointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
        appendCString(name)
        bytes.append(contentsOf: value)
        bytes.append(0)
    }

    mutating func text(_ p: UnsafePointer<UInt8>, _ count: Int) {
        if lastWasText {
            bytes.removeLast()   // its NUL: the run continues
        } else {
            bytes.append(TapeEvent.text)
            lastWasText = true
        }
        bytes.append(contentsOf: UnsafeBufferPointer(start: p, count: count))
        bytes.append(0)
    }

    mutating func end() {
        lastWasText = false
        bytes.append(TapeEvent.end)
    }

    private mutating func appendCString(_ p: UnsafePointer<UInt8>) {
        var i = 0
        while p[i] != 0 { i += 1 }
        bytes.append(contentsOf: UnsafeBufferPointer(start: p, count: i + 1))
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

    private func skipCString(_ i: inout Int) {
        while tape[i] != 0 { i += 1 }
        i += 1
    }

    /// The element whose start event is at `i`.
    func element(at start: Int) -> TapeElement {
        var i = start + 1
        let name = tape.baseAddress! + i
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
        while i < range.upperBound {
            switch tape[i] {
            case TapeEvent.start:
                let element = element(at: i)
                body(element)
                i = element.end
            case TapeEvent.text:
                i += 1
                skipCString(&i)
            default:
                i += 1
            }
        }
    }

    /// Calls `body` with each attribute's local name and value.
    func forEachAttribute(of element: TapeElement, _ body: (UnsafePointer<UInt8>, UnsafePointer<UInt8>) -> Void) {
        var i = element.attributeStart
        for _ in 0..<element.attributeCount {
            let name = tape.baseAddress! + i
            skipCString(&i)
            let value = tape.baseAddress! + i
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
        var runs: [Range<Int>] = []
        while i < element.content.upperBound {
            switch tape[i] {
            case TapeEvent.start:
                i = self.element(at: i).end
            case TapeEvent.text:
                let begin = i + 1
                i = begin
                skipCString(&i)
                runs.append(begin..<(i - 1))
            default:
                i += 1
            }
        }
        if runs.count == 1 { return normalisedText(UnsafeBufferPointer(rebasing: tape[runs[0]]), mode) }
        var joined: [UInt8] = []
        for run in runs { joined += tape[run] }
        return joined.withUnsafeBufferPointer { normalisedText($0, mode) }
    }
}

/// A stable 64-bit hash of bytes (FNV-1a, eight bytes at a time): the same on every run and
/// every little-endian machine, so it can be stored.
func tapeHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    let prime: UInt64 = 0x100_0000_01b3
    var i = 0
    let raw = UnsafeRawBufferPointer(bytes)
    while i + 8 <= raw.count {
        h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* prime
        h ^= h >> 29
        i += 8
    }
    while i < raw.count {
        h = (h ^ UInt64(raw[i])) &* prime
        i += 1
    }
    return (h ^ UInt64(raw.count)) &* prime
}
