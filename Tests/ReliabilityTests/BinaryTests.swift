import Foundation
import Testing

/// The binary under test exists (the other reliability tests run it).
@Test func theBinaryIsBuilt() {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    #expect(FileManager.default.isExecutableFile(atPath: root.appendingPathComponent(".build/debug/tvimport").path),
            "run swift build first")
}
