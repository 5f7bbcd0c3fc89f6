/// RFC 5545 TEXT escaping (section 3.3.11), the same code the writer uses, without folding.
public enum TextEscaping {
    /// `\` → `\\`, `;` → `\;`, `,` → `\,`, LF / CRLF / CR → `\n`, TAB → space; other control
    /// characters (U+0000–U+001F, U+007F) are dropped since no content line may hold them.
    public static func escapeText(_ s: String) -> String {
        var buffer = ContentLineBuffer(capacity: s.utf8.count + 8, limit: nil)
        buffer.appendText(s)
        return String(decoding: buffer.bytes, as: UTF8.self)
    }

    /// True when nothing would be left of `s` but dropped control characters.
    static func isEmptyAfterEscaping(_ s: String) -> Bool {
        s.utf8.allSatisfy { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D) || $0 == 0x7F }
    }
}
