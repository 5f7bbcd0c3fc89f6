#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The 64-bit FNV-1a hash: stable across runs and machines (so it can be stored and compared
/// later), fast, and not collision resistant (it tells content apart, it does not authenticate).
///
/// ```swift
/// var hash = FNV1a()
/// hash.add("channel-1".utf8)
/// let text = hash.hex           // 16 lowercase hex digits
/// FNV1a.hex("channel-1") == text // true
/// ```
public struct FNV1a: Sendable, Equatable {
    /// The standard offset basis.
    public static let standardBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    @usableFromInline static let prime: UInt64 = 0x100_0000_01b3

    /// The hash of what was added so far.
    public var value: UInt64

    /// Starts a hash; another `basis` gives an independent hash of the same bytes.
    @inlinable public init(basis: UInt64 = FNV1a.standardBasis) { value = basis }

    /// Adds one byte.
    @inlinable @inline(__always)
    public mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* Self.prime
    }

    /// Adds bytes in order.
    @inlinable
    public mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        var h = value
        for byte in bytes { h = (h ^ UInt64(byte)) &* Self.prime }
        value = h
    }

    /// Adds the eight bytes of `word`, least significant first.
    @inlinable
    public mutating func add(littleEndian word: UInt64) {
        for k in 0..<8 { add(UInt8(truncatingIfNeeded: word >> (UInt64(k) * 8))) }
    }

    /// Sixteen lowercase hex digits, leading zeros kept.
    public var hex: String { String(decoding: Hex.digits(value), as: UTF8.self) }

    /// The hash of a string's UTF-8 bytes, as sixteen hex digits.
    public static func hex(_ text: String) -> String {
        var hash = FNV1a()
        hash.add(text.utf8)
        return hash.hex
    }

    /// A variant that takes eight bytes per step (and folds the high bits down after each, since
    /// a whole word per multiply mixes less than a byte does): a quarter of the work on long
    /// element texts. Its values are stored, so it must never change. Little-endian machines only
    /// give the same values.
    public static func wordwise(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = standardBasis
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
}

/// Lowercase hexadecimal text.
public enum Hex {
    /// Sixteen lowercase hex digits of `value`, leading zeros kept.
    public static func digits(_ value: UInt64) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(16)
        append(value, to: &out)
        return out
    }

    /// Appends sixteen lowercase hex digits of `value`, leading zeros kept.
    public static func append(_ value: UInt64, to out: inout [UInt8]) {
        for position in (0..<16).reversed() {
            let digit = UInt8((value >> (UInt64(position) * 4)) & 0xF)
            out.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
    }

    /// Two lowercase hex digits of a byte.
    public static func byte(_ b: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }
}

/// Byte comparisons of buffers.
public enum Bytes {
    /// Whether two buffers hold the same bytes (one `memcmp`).
    @inlinable
    public static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress else { return true }   // both empty
        return memcmp(x, y, a.count) == 0
    }
}
