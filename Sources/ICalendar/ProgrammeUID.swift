/// UIDs for programmes that stay the same across runs and machines for the same identity
/// (channel id as UTF-8 bytes, start, clump index), so calendar clients update events in place.
public enum ProgrammeUID {
    /// `<32 hex digits>@<domain>`. The hash input is the channel id's UTF-8 bytes, 0x00, the start
    /// in decimal ASCII, 0x00, the clump index in decimal ASCII: no normalisation, so ids that are
    /// canonically equal but differ in bytes (NFC/NFD) stay different, as the merge treats them.
    /// The domain keeps only ASCII letters, digits, `.` and `-` (UIDs are ASCII only).
    public static func make(channelID: String, start: Int64, clumpIndex: Int, domain: String) -> String {
        var input = Array(channelID.utf8)
        input.append(0)
        input.append(contentsOf: String(start).utf8)
        input.append(0)
        input.append(contentsOf: String(clumpIndex).utf8)

        // Two FNV-1a 64 passes from different offset bases: 128 bits, no dependency.
        let high = fnv1a64(input, offsetBasis: 0xCBF2_9CE4_8422_2325)
        let low = fnv1a64(input, offsetBasis: 0x6C62_272E_07BB_0142)

        // Bytes, not Unicode properties: this runs for every event of every feed.
        var safeDomain = domain.utf8.filter { b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
        }
        if safeDomain.isEmpty { safeDomain = Array("tvimport.invalid".utf8) }
        var uid = [UInt8]()
        uid.reserveCapacity(33 + safeDomain.count)
        appendHex(high, to: &uid)
        appendHex(low, to: &uid)
        uid.append(UInt8(ascii: "@"))
        uid.append(contentsOf: safeDomain)
        return String(decoding: uid, as: UTF8.self)
    }

    private static func fnv1a64(_ bytes: [UInt8], offsetBasis: UInt64) -> UInt64 {
        var hash = offsetBasis
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// Sixteen lowercase hex digits, leading zeros kept so every UID has the same length.
    private static func appendHex(_ value: UInt64, to out: inout [UInt8]) {
        for position in (0..<16).reversed() {
            let digit = UInt8((value >> (UInt64(position) * 4)) & 0xF)
            out.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
    }
}
