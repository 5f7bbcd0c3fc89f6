/// The plainest request for a feed, read straight from a connection's bytes: `GET /feeds/…
/// HTTP/1.1`, header lines of visible ASCII, no body. What a calendar client (and a benchmark)
/// sends again and again; `PlainFeedFastPath` answers it without NIO's HTTP parser and
/// Hummingbird's request types, and hands every other request, byte for byte, to them.
///
/// The grammar is a strict subset of HTTP/1.1 (RFC 9112) that NIO's parser reads the same way:
/// anything outside it (another method or version, a bare LF, obs-fold, a byte outside
/// printable ASCII, a body, `Connection` other than `keep-alive`, `Expect`, `Upgrade`, a repeated
/// header this answer depends on) is `.unusual`, never an error here. Indices only move forward
/// within `bytes` and the head is capped at `maxLength` bytes: nothing a client sends can trap.
///
/// No Foundation, no NIO: `scripts/fuzz serve` compiles this file into its target.
///
///     PlainFeedRequest.read(bytes)   // .request(…), .incomplete (wait for more) or .unusual
struct PlainFeedRequest: Equatable {
    /// Bytes of the request: the head and its blank line.
    let length: Int
    /// The request target, `/feeds/…` (still percent-encoded).
    let target: Range<Int>
    /// Values (without surrounding whitespace) of the headers the answer depends on.
    let acceptEncoding: Range<Int>?
    let ifNoneMatch: Range<Int>?
    let ifModifiedSince: Range<Int>?
    /// An `Authorization` header came (the route then counts a wrong token: not for this path).
    let hasAuthorization: Bool

    enum Reading: Equatable {
        case request(PlainFeedRequest)
        /// A prefix of such a request: more bytes may complete it.
        case incomplete
        /// Anything else: for NIO and Hummingbird to read.
        case unusual
    }

    /// A longer head is left to NIO's parser (and its own limits).
    static let maxLength = 4096
    static let maxFields = 32

    private static let prefix: [UInt8] = Array("GET /feeds/".utf8)
    private static let version: [UInt8] = Array(" HTTP/1.1".utf8)

    /// Reads the request at the start of `bytes`.
    static func read(_ bytes: UnsafeRawBufferPointer) -> Reading {
        let count = bytes.count
        // Until the head is whole, only its first bytes can be judged.
        for i in 0..<min(count, prefix.count) where bytes[i] != prefix[i] { return .unusual }
        guard let end = headEnd(bytes) else { return count >= maxLength ? .unusual : .incomplete }

        // The request line: GET SP target SP HTTP/1.1 CRLF
        var i = 4
        let targetStart = i
        while i < end, isTargetByte(bytes[i]) { i += 1 }
        let target = targetStart..<i
        guard i + version.count + 2 <= end else { return .unusual }
        for b in version {
            guard bytes[i] == b else { return .unusual }
            i += 1
        }
        guard bytes[i] == 13, bytes[i + 1] == 10 else { return .unusual }
        i += 2

        // Header lines until the blank line at `end - 2`.
        var acceptEncoding: Range<Int>?, ifNoneMatch: Range<Int>?, ifModifiedSince: Range<Int>?
        var hasAuthorization = false, hasHost = false
        var fields = 0
        while i < end - 2 {
            fields += 1
            guard fields <= maxFields else { return .unusual }
            let nameStart = i
            while i < end, isTokenByte(bytes[i]) { i += 1 }
            guard i > nameStart, i < end, bytes[i] == UInt8(ascii: ":") else { return .unusual }
            let name = nameStart..<i
            i += 1
            while i < end, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
            let valueStart = i
            while i < end, bytes[i] == 0x09 || (0x20...0x7E).contains(bytes[i]) { i += 1 }
            guard i + 1 < end, bytes[i] == 13, bytes[i + 1] == 10 else { return .unusual }
            let value = valueStart..<i
            i += 2
            // A value this answer reads: present once, not empty, no trailing whitespace.
            func once(_ slot: inout Range<Int>?) -> Bool {
                guard slot == nil, !value.isEmpty, bytes[value.upperBound - 1] != 0x20, bytes[value.upperBound - 1] != 0x09 else { return false }
                slot = value
                return true
            }
            switch fieldName(bytes, name) {
            case .acceptEncoding: guard once(&acceptEncoding) else { return .unusual }
            case .ifNoneMatch: guard once(&ifNoneMatch) else { return .unusual }
            case .ifModifiedSince: guard once(&ifModifiedSince) else { return .unusual }
            case .authorization: hasAuthorization = true
            case .host:
                guard !hasHost else { return .unusual }
                hasHost = true
            case .connection:
                var keepAlive: Range<Int>? = nil
                guard once(&keepAlive), equalsIgnoringCase(bytes, value, "keep-alive") else { return .unusual }
            case .refused: return .unusual
            case .other: break
            }
        }
        return .request(PlainFeedRequest(length: end, target: target, acceptEncoding: acceptEncoding, ifNoneMatch: ifNoneMatch,
                                          ifModifiedSince: ifModifiedSince, hasAuthorization: hasAuthorization))
    }

    /// The index just past the first CRLF CRLF within `maxLength` bytes, or nil.
    private static func headEnd(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let limit = min(bytes.count, maxLength)
        var i = 3
        while i < limit {
            if bytes[i] == 10, bytes[i - 1] == 13, bytes[i - 2] == 10, bytes[i - 3] == 13 { return i + 1 }
            i += 1
        }
        return nil
    }

    private enum FieldName {
        case acceptEncoding, ifNoneMatch, ifModifiedSince, authorization, host, connection
        /// Headers that give the request a body, another protocol or an interim answer.
        case refused
        case other
    }

    private static let names: [(FieldName, [UInt8])] = [
        (.acceptEncoding, Array("accept-encoding".utf8)), (.ifNoneMatch, Array("if-none-match".utf8)),
        (.ifModifiedSince, Array("if-modified-since".utf8)), (.authorization, Array("authorization".utf8)),
        (.host, Array("host".utf8)), (.connection, Array("connection".utf8)),
        (.refused, Array("content-length".utf8)), (.refused, Array("transfer-encoding".utf8)),
        (.refused, Array("expect".utf8)), (.refused, Array("upgrade".utf8)), (.refused, Array("te".utf8)),
        (.refused, Array("keep-alive".utf8)), (.refused, Array("proxy-connection".utf8)),
    ]

    private static func fieldName(_ bytes: UnsafeRawBufferPointer, _ name: Range<Int>) -> FieldName {
        for (kind, lower) in names where lower.count == name.count && equalsIgnoringCase(bytes, name, lower) { return kind }
        return .other
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ lower: String) -> Bool {
        equalsIgnoringCase(bytes, range, Array(lower.utf8))
    }

    /// ASCII case-insensitive comparison with a lower-case word.
    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ lower: [UInt8]) -> Bool {
        guard range.count == lower.count else { return false }
        var j = 0
        for i in range {
            let b = bytes[i]
            guard (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) == lower[j] else { return false }
            j += 1
        }
        return true
    }

    /// RFC 9110 tchar.
    private static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// A path's bytes (RFC 3986 pchar and `/`): no query, no fragment, nothing to escape.
    private static func isTargetByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"),
             UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"),
             UInt8(ascii: "%"): true
        default: false
        }
    }
}
