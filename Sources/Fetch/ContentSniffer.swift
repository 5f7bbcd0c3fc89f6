/// Decides from the first bytes of a body whether it can be an XMLTV guide, and how it is packed.
/// A cheap guard against the usual failure of a guide URL: a login, error or parking page served
/// with status 200.
enum ContentSniffer {
    /// Bytes worth keeping from the start of a body.
    static let headLength = 4096

    enum Verdict: Equatable {
        case accepted(Compression)
        /// What the body is instead, to follow "source served" or "file holds".
        case rejected(String)
    }

    static func verdict(forHead head: [UInt8]) -> Verdict {
        if head.starts(with: [0x1f, 0x8b]) { return .accepted(.gzip) }
        if head.starts(with: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]) { return .accepted(.xz) }
        var scanner = Scanner(bytes: head)
        scanner.skipByteOrderMark()
        scanner.skipWhitespace()
        if scanner.atEnd {
            return .rejected(head.isEmpty ? "nothing (an empty body)" : "only whitespace")
        }
        guard scanner.peek("<") else { return .rejected("something that is not XML") }
        // Walk the prolog (declaration, comments, processing instructions, doctype) to the root element.
        var sawProlog = false
        while true {
            scanner.skipWhitespace()
            if scanner.atEnd {
                // The prolog is longer than the head: let the XML parser judge.
                return sawProlog ? .accepted(.none) : .rejected("something that is not XML")
            }
            if scanner.consume("<?") {
                guard scanner.skip(past: "?>") else { return .accepted(.none) }
            } else if scanner.consume("<!--") {
                guard scanner.skip(past: "-->") else { return .accepted(.none) }
            } else if scanner.consumeIgnoringCase("<!DOCTYPE") {
                scanner.skipWhitespace()
                let name = scanner.name()
                if name.lowercased() == "html" { return htmlPage }
                if name != "tv" { return .rejected("a document of type \(name.debugDescription), not XMLTV") }
                // The root element must follow, and must be `tv`: nothing more to learn here.
                return .accepted(.none)
            } else if scanner.consume("<") {
                let name = scanner.name()
                if name == "tv" { return .accepted(.none) }
                if name.lowercased() == "html" { return htmlPage }
                if name.isEmpty { return .rejected("something that is not XML") }
                return .rejected("a <\(name)> document, not XMLTV")
            } else {
                return .rejected("something that is not XML")
            }
            sawProlog = true
        }
    }

    private static let htmlPage = Verdict.rejected("an HTML page, not XMLTV")

    /// A byte cursor; the head is small, so simple linear searches are fine.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }

        mutating func skipByteOrderMark() {
            if bytes.starts(with: [0xef, 0xbb, 0xbf]) { index = 3 }
        }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
        }

        func peek(_ text: String) -> Bool {
            bytes[index...].starts(with: text.utf8)
        }

        mutating func consume(_ text: String) -> Bool {
            guard peek(text) else { return false }
            index += text.utf8.count
            return true
        }

        mutating func consumeIgnoringCase(_ text: String) -> Bool {
            let pattern = Array(text.utf8)
            guard bytes.count - index >= pattern.count else { return false }
            for (offset, expected) in pattern.enumerated()
            where lowercase(bytes[index + offset]) != lowercase(expected) {
                return false
            }
            index += pattern.count
            return true
        }

        /// Moves past the next `terminator`; false when the head ends first.
        mutating func skip(past terminator: String) -> Bool {
            let pattern = Array(terminator.utf8)
            while index + pattern.count <= bytes.count {
                if bytes[index..<index + pattern.count].elementsEqual(pattern) {
                    index += pattern.count
                    return true
                }
                index += 1
            }
            index = bytes.count
            return false
        }

        /// An XML name (ASCII subset is enough to recognise `tv` and `html`).
        mutating func name() -> String {
            let start = index
            while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        private func isNameByte(_ b: UInt8) -> Bool {
            (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || (b >= 0x30 && b <= 0x39)
                || b == 0x2d || b == 0x2e || b == 0x5f || b == 0x3a || b >= 0x80
        }

        private func lowercase(_ b: UInt8) -> UInt8 { (b >= 0x41 && b <= 0x5a) ? b + 0x20 : b }
    }
}
