import Foundation
import Job
import Testing

/// Config errors name the file, the key and what was expected (exit 78).
@Suite struct ConfigTests {
    func load(_ json: String) throws -> JobConfig {
        let path = NSTemporaryDirectory() + "tvimport-config-\(UUID().uuidString).json"
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return try JobConfig.load(path: path)
    }

    @Test func anUnknownKeyIsNamed() throws {
        let error = try #require(throws: JobError.self) { try load(#"{"sources": [{"name": "a", "url": "/x"}], "retention": 3}"#) }
        #expect(error.status == .config)
        #expect(error.message.contains("unknown key 'retention'"))
    }

    @Test func aWrongTypeIsNamedWithWhatWasExpected() throws {
        let error = try #require(throws: JobError.self) { try load(#"{"sources": [{"name": "a", "url": "/x"}], "retentionDays": "seven"}"#) }
        #expect(error.message.contains("key 'retentionDays': expected a number"))
    }

    @Test func aMissingFileIsAConfigError() throws {
        let error = try #require(throws: JobError.self) { try JobConfig.load(path: "/nonexistent/tvimport.json") }
        #expect(error.status == .config)
    }

    @Test func theExampleConfigLoadsWithItsUserModule() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let config = try JobConfig.load(path: root.appendingPathComponent("Schedules/config.example.json").path)
        #expect(config.sources.map(\.name) == ["uk", "local"])
        #expect(config.sources[1].timeOffset == 3600)
        #expect(config.modules.first?.name == "mine")
        #expect(config.filteredFeeds.count == 2)
    }
}
