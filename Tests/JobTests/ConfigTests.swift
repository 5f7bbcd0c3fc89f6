import Foundation
import Job
import Testing

/// Config errors name the file, the key and what was expected (exit 78).
@Suite struct ConfigTests {
    func load(_ json: String) throws -> JobConfig {
        let path = NSTemporaryDirectory() + "tvimport-config-\(UUID().uuidString).json"
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try JobConfig.load(path: path)
    }

    /// The config's modules are remembered in the database as the JSON `JSONSerialization` wrote
    /// with sorted keys (now written by JSONText): the same bytes, so a database written before
    /// keeps its setting unchanged.
    @Test func modulesAreRememberedInFoundationsBytes() throws {
        let modules = #"[{"name": "mine", "entities": [{"name": "Programme", "placeholder": true, "attributes": [{"name": "stars", "type": "integer"}, {"name": "note/2", "type": "string", "optional": false}, {"name": "B", "type": "string"}, {"name": "a10", "type": "string"}, {"name": "a2", "type": "string", "optional": true}]}]}]"#
        let config = try load(#"{"sources": [{"name": "a", "url": "/x"}], "modules": "# + modules + "}")
        let expected = try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: Data(modules.utf8)), options: [.sortedKeys])
        #expect(config.modulesJSON == expected, "\(String(decoding: config.modulesJSON ?? Data(), as: UTF8.self))")
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

    /// Numbers the code multiplies or converts are whole and bounded: 1e300 hours trapped on
    /// conversion (issue 34's audit), now a configuration error naming the key.
    @Test(arguments: [
        (#""feeds": {"refreshHours": 1e300}"#, "feeds.refreshHours"),
        (#""feeds": {"pastHours": -1}"#, "feeds.pastHours"),
        (#""retentionDays": 2.5"#, "retentionDays"),
        (#""changeFilesDays": 1e20"#, "changeFilesDays"),
        (#""fetch": {"maxBytes": 1e300}"#, "fetch.maxBytes"),
        (#""fetch": {"retries": 1e9}"#, "fetch.retries"),
        (#""fetch": {"connectTimeout": 0}"#, "fetch.connectTimeout"),
        (#""fetch": {"totalBudget": 1e9}"#, "fetch.totalBudget"),
    ])
    func numbersOutOfRangeAreConfigErrors(_ setting: String, key: String) throws {
        let error = try #require(throws: JobError.self) { try load(#"{"sources": [{"name": "a", "url": "/x"}], "# + setting + "}") }
        #expect(error.status == .config)
        #expect(error.message.contains("key '\(key)'"), "\(error.message)")
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
        #expect(config.filteredFeeds.count == 3)
        #expect(config.filteredFeeds.last?.show == "Doctor Who")
    }
}

/// A source's `command`: an argument vector found when the config is read (exit 78 otherwise).
@Suite struct CommandConfigTests {
    func load(_ json: String, folder: String = NSTemporaryDirectory()) throws -> JobConfig {
        let path = (folder as NSString).appendingPathComponent("tvimport-config-\(UUID().uuidString).json")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try JobConfig.load(path: path)
    }

    @Test func aCommandIsFoundInPathAndRunsInTheConfigFilesFolder() throws {
        let folder = NSTemporaryDirectory() + "tvimport-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = try load(#"{"sources": [{"name": "uk", "command": ["sh", "-c", "cat guide.xml"], "timeoutSeconds": 90}]}"#, folder: folder)
        let command = try #require(config.sources.first?.command)
        #expect(command.arguments == ["sh", "-c", "cat guide.xml"])
        #expect(command.executable.hasSuffix("/sh"))
        #expect(command.timeoutSeconds == 90)
        #expect(URL(fileURLWithPath: command.directory).resolvingSymlinksInPath() == URL(fileURLWithPath: folder).resolvingSymlinksInPath())
        let defaulted = try load(#"{"sources": [{"name": "uk", "command": ["sh"]}]}"#)
        #expect(defaulted.sources.first?.command?.timeoutSeconds == 3600)
    }

    @Test func aCommandWithASlashIsRelativeToTheConfigFile() throws {
        let folder = NSTemporaryDirectory() + "tvimport-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/bin/grab", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755]))
        let config = try load(#"{"sources": [{"name": "uk", "command": ["bin/grab"]}]}"#, folder: folder)
        #expect(config.sources.first?.command?.executable.hasSuffix("/bin/grab") == true)
    }

    @Test(arguments: [
        (#"{"name": "a", "command": ["tv_grab_none_such_xx"]}"#, "'tv_grab_none_such_xx' cannot be started"),
        (#"{"name": "a", "command": []}"#, "expected a command and its arguments"),
        (#"{"name": "a", "command": "tv_grab_uk --days 7"}"#, "expected a list of strings"),
        (#"{"name": "a", "command": ["sh"], "url": "/x"}"#, "either \"url\" or \"command\""),
        (#"{"name": "a", "url": "/x", "timeoutSeconds": 5}"#, "no time limit without a \"command\""),
        (#"{"name": "a", "command": ["sh"], "timeoutSeconds": 0}"#, "above 0"),
    ])
    func aBadCommandIsAConfigurationError(source: String, says: String) throws {
        let error = try #require(throws: JobError.self) { try load(#"{"sources": ["# + source + "]}") }
        #expect(error.status == .config)
        #expect(error.message.contains(says), "\(error.message)")
    }
}
