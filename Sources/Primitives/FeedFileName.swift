/// The names the feed exporter gives the files of its output directory (`FeedExporter.fileName`):
/// the one rule by which `serve` hands a file out and `publish` uploads it. Anything else found
/// there (a hidden file, `passwd`, a name with a slash or a NUL) is no file of tvimport's.
public enum FeedFileName {
    /// Letters, digits, `.`, `_`, `-`, `%` (the exporter's escapes) and `~` (filtered feeds); no
    /// leading dot; at most 255 bytes; an `.ics` feed or `index.html`.
    ///
    ///     FeedFileName.isExporterName("bbc1.uk.ics")     // true
    ///     FeedFileName.isExporterName("../passwd.ics")   // false
    public static func isExporterName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 255, bytes.first != UInt8(ascii: "."),
              name.hasSuffix(".ics") || name == "index.html" else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x2E || b == 0x5F || b == 0x2D || b == 0x25 || b == 0x7E
        }
    }
}
