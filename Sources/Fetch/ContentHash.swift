import Primitives

/// The hash of a download (or a command's output, or a local file), fed in chunks: tells
/// identical re-downloads apart (FNV-1a eight bytes a step, `FNV1a.Wordwise`; not collision
/// resistant). A local file is read whole for it before its import reads it again, so it must be
/// cheap: a byte a step took half a second of a 392 MB guide's run.
public struct ContentHash: Sendable {
    private var hash = FNV1a.Wordwise()

    public init() {}

    public var value: UInt64 { hash.value }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) { hash.add(bytes) }

    /// 16 lowercase hex digits.
    public var hex: String { String(decoding: Hex.digits(hash.value), as: UTF8.self) }
}
