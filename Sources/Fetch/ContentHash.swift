import Primitives

/// The hash of a download (or a command's output), fed in chunks: tells identical re-downloads
/// apart (FNV-1a, not collision resistant).
public struct ContentHash: Sendable {
    private var hash = FNV1a()

    public init() {}

    public var value: UInt64 { hash.value }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) { hash.add(bytes) }

    /// 16 lowercase hex digits.
    public var hex: String { hash.hex }
}
