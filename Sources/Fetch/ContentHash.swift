import Primitives

/// The hash of a download, fed in chunks: tells identical re-downloads apart (FNV-1a, not
/// collision resistant).
struct ContentHash {
    private var hash = FNV1a()

    var value: UInt64 { hash.value }

    mutating func update(_ bytes: UnsafeRawBufferPointer) { hash.add(bytes) }

    /// 16 lowercase hex digits.
    var hex: String { hash.hex }
}
