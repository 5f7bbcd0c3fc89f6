import Primitives

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
        var high = FNV1a()
        high.add(input)
        var low = FNV1a(basis: 0x6C62_272E_07BB_0142)
        low.add(input)

        // Bytes, not Unicode properties: this runs for every event of every feed.
        var safeDomain = domain.utf8.filter { b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
        }
        if safeDomain.isEmpty { safeDomain = Array("tvimport.invalid".utf8) }
        var uid = [UInt8]()
        uid.reserveCapacity(33 + safeDomain.count)
        Hex.append(high.value, to: &uid)
        Hex.append(low.value, to: &uid)
        uid.append(UInt8(ascii: "@"))
        uid.append(contentsOf: safeDomain)
        return String(decoding: uid, as: UTF8.self)
    }
}
