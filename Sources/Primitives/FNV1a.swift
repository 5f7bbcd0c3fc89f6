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
        var hash = Wordwise()
        hash.add(UnsafeRawBufferPointer(bytes))
        return hash.value
    }

    /// `wordwise(_:)` fed in pieces: the same value whatever the pieces, for a stream (a
    /// download, a file) hashed as it is read. A word split between two pieces is finished from
    /// the next; the last few bytes are taken one by one.
    ///
    /// ```swift
    /// var hash = FNV1a.Wordwise()
    /// hash.add(firstChunk); hash.add(secondChunk)
    /// hash.value == FNV1a.wordwise(wholeBuffer)  // true
    /// ```
    public struct Wordwise: Sendable {
        @usableFromInline var h = FNV1a.standardBasis
        /// The bytes of an unfinished word, the first in the lowest byte, and how many.
        @usableFromInline var pending: UInt64 = 0
        @usableFromInline var pendingCount = 0
        @usableFromInline var count: UInt64 = 0

        public init() {}

        @inlinable @inline(__always)
        mutating func mix(_ word: UInt64) {
            h = (h ^ word) &* FNV1a.prime
            h ^= h >> 29
        }

        /// Adds bytes in order.
        @inlinable
        public mutating func add(_ bytes: UnsafeRawBufferPointer) {
            count &+= UInt64(bytes.count)
            var i = 0
            if pendingCount > 0 {
                while pendingCount < 8 && i < bytes.count {
                    pending |= UInt64(bytes[i]) << (UInt64(pendingCount) * 8)
                    pendingCount += 1
                    i += 1
                }
                guard pendingCount == 8 else { return }
                mix(pending)
                (pending, pendingCount) = (0, 0)
            }
            while i + 8 <= bytes.count {
                mix(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                i += 8
            }
            while i < bytes.count {
                pending |= UInt64(bytes[i]) << (UInt64(pendingCount) * 8)
                pendingCount += 1
                i += 1
            }
        }

        /// The hash of every byte added so far.
        @inlinable
        public var value: UInt64 {
            var v = h
            for k in 0..<pendingCount { v = (v ^ ((pending >> (UInt64(k) * 8)) & 0xff)) &* FNV1a.prime }
            return (v ^ count) &* FNV1a.prime
        }
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
