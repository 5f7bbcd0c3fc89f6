// libFuzzer entry point for the XMLTV time grammar (`YYYY[MM[DD[hh[mm[ss]]]]] [zone]`).
// Compiled by scripts/fuzz together with Sources/XMLTV/*.swift as module XMLTV: no `import XMLTV`.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // The raw byte entry point (what the reader calls on attribute values).
    let parts = XMLTVTime.components(bytes)
    // The String entry point (invalid UTF-8 is repaired by String(decoding:)).
    let text = String(decoding: bytes, as: UTF8.self)
    let parsed = XMLTVTime.parse(text)
    if let parts {
        // A successful parse is a real calendar instant in a sane range and formats back to the same local time.
        precondition(parts.local >= -62_167_219_200 && parts.local <= 253_402_300_800, "local time out of range: \(parts.local)")
        if let offset = parts.offset { precondition(abs(offset) <= 14 * 3600 + 59 * 60, "offset \(offset)") }
        if parts.local < 253_402_300_800 {   // 9999-12-31T23:59:60 formats as year 10000
            let formatted = XMLTVTime.format(parts.local)
            let back = Array(formatted.utf8).withUnsafeBufferPointer { XMLTVTime.components($0) }
            guard let back else { fatalError("format(\(parts.local)) = \(formatted) does not parse back") }
            // Leap second 60 normalises to the next minute, so compare instants, not text.
            precondition(back.local == parts.local, "round trip \(parts.local) -> \(formatted) -> \(back.local)")
        }
        if !text.utf8.elementsEqual(bytes) { return 0 }
        precondition(parsed != nil && parsed!.utc == parts.local - Int64(parts.offset ?? 0), "parse and components disagree")
    }
    return 0
}
