import Foundation
import TestSupport
import Testing

/// The binary under test exists (the other reliability tests run it).
@Test func theBinaryIsBuilt() {
    #expect(FileManager.default.isExecutableFile(atPath: Repository.tvimport),
            "run swift build first")
}
