import Foundation
import Testing

/// The example config in Schedules/ is valid JSON (its content is checked by JobTests).
@Test func theExampleConfigIsValidJSON() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let data = try Data(contentsOf: root.appendingPathComponent("Schedules/config.example.json"))
    #expect(try JSONSerialization.jsonObject(with: data) is [String: Any])
}
