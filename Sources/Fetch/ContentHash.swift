/// 64-bit FNV-1a, fed in chunks. Only tells identical re-downloads apart: not collision resistant.
public struct ContentHash: Sendable {
    public init() {}

    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var h = value
        for byte in bytes {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        value = h
    }

    /// 16 lowercase hex digits.
    public var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
