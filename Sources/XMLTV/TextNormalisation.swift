// Whitespace rules for element text, applied to raw UTF-8 bytes to avoid intermediate Strings.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Primitives

enum TextMode {
    /// Titles and names: trim, and every inner run of whitespace becomes one space.
    case collapse
    /// Descriptions: trim the ends, keep inner line breaks as "\n".
    case multiline
}

@inline(__always) private func isBlank(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }

func normalisedText(_ bytes: UnsafeBufferPointer<UInt8>, _ mode: TextMode) -> String {
    var lo = 0, hi = bytes.count
    while lo < hi, isBlank(bytes[lo]) { lo += 1 }
    while hi > lo, isBlank(bytes[hi - 1]) { hi -= 1 }
    if lo == hi { return "" }
    let core = UnsafeBufferPointer(rebasing: bytes[lo..<hi])
    if !needsRewrite(core, mode) { return String(decoding: core, as: UTF8.self) }

    var out: [UInt8] = []
    out.reserveCapacity(core.count)
    var i = 0
    switch mode {
    case .collapse:
        while i < core.count {
            let c = core[i]
            if isBlank(c) {
                while i < core.count, isBlank(core[i]) { i += 1 }
                out.append(32)
                continue
            }
            out.append(c)
            i += 1
        }
    case .multiline:
        while i < core.count {
            let c = core[i]
            if c == 13 {
                // CR LF and a lone CR are both one line break
                out.append(10)
                if i + 1 < core.count, core[i + 1] == 10 { i += 1 }
            } else {
                out.append(c)
            }
            i += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}

private func needsRewrite(_ core: UnsafeBufferPointer<UInt8>, _ mode: TextMode) -> Bool {
    switch mode {
    case .collapse:
        var previousBlank = false
        for c in core {
            if c == 9 || c == 10 || c == 13 { return true }
            if c == 32 {
                if previousBlank { return true }
                previousBlank = true
            } else {
                previousBlank = false
            }
        }
        return false
    case .multiline:
        return core.contains(13)
    }
}

extension String {
    /// Whether the string is exactly these UTF-8 bytes (no Unicode equivalence: NFC and NFD
    /// spellings of an id are different ids).
    public func hasUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var s = self
        return s.withUTF8 { Bytes.equal(UnsafeRawBufferPointer($0), UnsafeRawBufferPointer(bytes)) }
    }

    /// Whether both strings have exactly the same UTF-8 bytes (see `hasUTF8`).
    public func hasSameUTF8(as other: String) -> Bool {
        var other = other
        return other.withUTF8 { hasUTF8($0) }
    }

    /// `normalisedText` for Swift strings (tests and attribute values).
    func normalised(_ mode: TextMode) -> String {
        var copy = self
        return copy.withUTF8 { normalisedText($0, mode) }
    }
}

extension String {
}

/// `excerpt` of a NUL-terminated UTF-8 value from libxml2, without copying all of it first.
func excerpt(_ value: UnsafePointer<UInt8>, limit: Int = 80) -> String {
    let count = strlen(value)
    // (limit + 1) * 4 bytes hold more than `limit` scalars whenever the value is longer.
    let head = String(decoding: UnsafeBufferPointer(start: value, count: min(count, (limit + 1) * 4)), as: UTF8.self)
    let scalars = head.unicodeScalars
    guard let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex),
          end != scalars.endIndex else { return head }
    return String(scalars[..<end]) + "… (\(count) bytes)"
}
