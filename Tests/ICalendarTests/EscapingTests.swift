import Testing
import ICalendar

@Suite("TEXT escaping")
struct EscapingTests {
    @Test("Escaping table (RFC 5545 3.3.11) and control characters", arguments: [
        ("plain text", "plain text"),
        ("a,b", "a\\,b"),
        ("a;b", "a\\;b"),
        ("a\\b", "a\\\\b"),
        ("\\n is literal", "\\\\n is literal"),
        ("a\nb", "a\\nb"),
        ("a\r\nb", "a\\nb"),
        ("a\rb", "a\\nb"),
        ("a\n\rb", "a\\n\\nb"),
        ("a\r\n\r\nb", "a\\n\\nb"),
        ("tab\there", "tab here"),
        ("nul\u{0}bel\u{7}esc\u{1B}del\u{7F}us\u{1F}.", "nulbelescdelus."),
        ("colon: \"quotes\" ^ caret", "colon: \"quotes\" ^ caret"),
        ("Ünïcødé 日本 😀 e\u{301}", "Ünïcødé 日本 😀 e\u{301}"),
        ("C1 \u{85} and NBSP \u{A0} are kept", "C1 \u{85} and NBSP \u{A0} are kept"),
        ("", ""),
    ])
    func table(input: String, expected: String) {
        #expect(sameBytes(TextEscaping.escapeText(input), expected))
    }

    @Test("Escaping does not fold")
    func noFolding() {
        let long = String(repeating: "ä,", count: 100)
        #expect(TextEscaping.escapeText(long) == String(repeating: "ä\\,", count: 100))
    }
}
