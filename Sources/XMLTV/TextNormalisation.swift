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

/// Whether `core` (trimmed) differs from its normalised form. Runs over every text of a guide, so
/// it looks at eight bytes per step: a word without a control byte or two spaces in a row (the
/// common case) costs a few operations. A byte below 0x20 always takes the rewrite, which is exact
/// for blanks and copies any other byte unchanged.
private func needsRewrite(_ core: UnsafeBufferPointer<UInt8>, _ mode: TextMode) -> Bool {
    guard let base = core.baseAddress else { return false }
    switch mode {
    case .collapse:
        let raw = UnsafeRawPointer(base)
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F, high: UInt64 = 0x8080_8080_8080_8080
        var carry: UInt64 = 0   // the high bit of byte 0 set when the byte before this word was a space
        var i = 0
        while i + 8 <= core.count {
            let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            // Exact per-byte flags (0x80): bytes below 0x20, and bytes equal to 0x20.
            let control = ~((w & low7) &+ 0x6060_6060_6060_6060) & ~w & high
            let x = w ^ 0x2020_2020_2020_2020
            let space = ~(((x & low7) &+ low7) | x) & high
            if control != 0 || space & ((space << 8) | carry) != 0 { return true }
            carry = space >> 56
            i += 8
        }
        var previousBlank = carry != 0
        while i < core.count {
            let c = base[i]
            if c < 32 { return true }
            if c == 32 {
                if previousBlank { return true }
                previousBlank = true
            } else {
                previousBlank = false
            }
            i += 1
        }
        return false
    case .multiline:
        return memchr(base, 13, core.count) != nil
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
